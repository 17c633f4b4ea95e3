"""Optimisers shared by the supervised and RL trainers."""

from __future__ import annotations

import jax
import optax
from typing import Any

FROZEN_SUBTREE = "conv"  # the conv block stays frozen in the RL stage (the thesis' transfer)


def adam_l2(learning_rate: float | optax.Schedule, weight_decay: float) -> optax.GradientTransformation:
    """Adam with L2 weight decay added to the gradient (PyTorch's ``Adam(weight_decay=...)``, not AdamW)."""
    return optax.chain(optax.add_decayed_weights(weight_decay), optax.adam(learning_rate))


def _labels(params) -> dict:
    return {name: jax.tree.map(lambda _: "frozen" if name == FROZEN_SUBTREE else "train", sub)
            for name, sub in params.items()}


def make_optimizer(learning_rate: float | optax.Schedule, weight_decay: float, frozen_conv: bool = True) -> optax.GradientTransformation:
    """:func:`adam_l2`; with ``frozen_conv`` every leaf under ``params["conv"]`` gets a zero update (bit-identical)."""
    inner = adam_l2(learning_rate, weight_decay)
    if not frozen_conv:
        return inner
    return optax.partition({"train": inner, "frozen": optax.set_to_zero()}, _labels)


def apply_gradients(tx: optax.GradientTransformation, params: Any, opt_state: optax.OptState,
                    grads: Any) -> tuple[Any, optax.OptState]:
    """One optimiser step: ``(new params, new optimiser state)``."""
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state


def with_clipping(tx: optax.GradientTransformation, max_grad_norm: float) -> optax.GradientTransformation:
    """``tx`` after clipping the gradients to the global norm ``max_grad_norm`` (0: ``tx`` itself)."""
    return optax.chain(optax.clip_by_global_norm(max_grad_norm), tx) if max_grad_norm > 0 else tx
