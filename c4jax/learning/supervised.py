"""Supervised imitation of a teacher (design.md §6): the loss, jitted training chunks, batched evaluation and
the resumable state; the command (:mod:`c4jax.cli.supervised`) owns files and progress.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import struct
from jax import Array

from c4jax.io import checkpoint
from c4jax.learning.optim import adam_l2  # noqa: F401  (re-exported: the supervised optimiser)
from c4jax.learning.optim import apply_gradients


@struct.dataclass
class TrainState:
    params: dict
    opt_state: optax.OptState
    step: Array  # int32[]


def policy_logits(net: nn.Module, params, observations: Array) -> Array:
    """The policy logits: a one-headed network's output, a two-headed one's first."""
    out = net.apply({"params": params}, observations)
    return out[0] if isinstance(out, tuple) else out


def loss_and_accuracy(net: nn.Module, params, boards: Array, actions: Array, weights: Array | None = None):
    """``(mean cross-entropy, accuracy of the raw logits' argmax)``, weighted by ``weights`` [N] if given."""
    logits = policy_logits(net, params, boards)
    ce = optax.softmax_cross_entropy_with_integer_labels(logits, actions.astype(jnp.int32))
    hit = (jnp.argmax(logits, axis=-1) == actions).astype(jnp.float32)
    if weights is None:
        return ce.mean(), hit.mean()
    total = jnp.maximum(weights.sum(), 1.0)
    return (ce * weights).sum() / total, (hit * weights).sum() / total


def make_train_chunk(net: nn.Module, tx: optax.GradientTransformation):
    """A jitted ``(state, observations[S, B, ...], actions[S, B]) -> (state, metrics[S])``."""

    def _step(state: TrainState, batch):
        boards, actions = batch
        (loss, acc), grads = jax.value_and_grad(
            lambda p: loss_and_accuracy(net, p, boards, actions), has_aux=True
        )(state.params)
        params, opt_state = apply_gradients(tx, state.params, state.opt_state, grads)
        new = TrainState(params=params, opt_state=opt_state, step=state.step + 1)
        return new, {"loss": loss, "accuracy": acc}

    @jax.jit
    def train_chunk(state: TrainState, boards: Array, actions: Array):
        return jax.lax.scan(_step, state, (boards, actions))

    return train_chunk


def make_evaluate(net: nn.Module, batch_size: int = 4096):
    """``evaluate(params, boards[N], actions[N]) -> (loss, accuracy)`` over fixed-size jitted batches."""

    @jax.jit
    def _batch(params, boards, actions, weights):
        loss, acc = loss_and_accuracy(net, params, boards, actions, weights)
        return loss * weights.sum(), acc * weights.sum()

    def evaluate(params, boards: np.ndarray, actions: np.ndarray) -> tuple[float, float]:
        n = len(actions)
        pad = (-n) % batch_size
        b = np.concatenate([boards, np.zeros((pad,) + boards.shape[1:], boards.dtype)])
        a = np.concatenate([actions, np.zeros(pad, actions.dtype)])
        w = np.concatenate([np.ones(n, np.float32), np.zeros(pad, np.float32)])
        loss = acc = 0.0
        for i in range(0, len(a), batch_size):
            l_, a_ = _batch(params, b[i : i + batch_size], a[i : i + batch_size], w[i : i + batch_size])
            loss, acc = loss + float(l_), acc + float(a_)
        return loss / max(n, 1), acc / max(n, 1)

    return evaluate


def epoch_batches(rng: np.random.Generator, n: int, batch_size: int) -> np.ndarray:
    """int[steps, batch_size]: a shuffled epoch's minibatch indices (the last partial batch dropped)."""
    steps = n // batch_size
    if steps == 0:
        raise ValueError(f"the training set ({n} rows) is smaller than one batch ({batch_size})")
    return rng.permutation(n)[: steps * batch_size].reshape(steps, batch_size)


# --------------------------------------------------------------------------- resumable progress

def save_progress(directory, state: TrainState, best_params, progress: dict) -> None:
    """Save the training state, the best weights and ``progress`` for ``--resume``, keeping the previous save."""
    checkpoint.save(directory, {"state": state, "best_params": best_params}, {"progress": progress},
                    keep_previous=True)


def load_progress(directory, state_like: TrainState, params_like) -> tuple[TrainState, dict, dict]:
    """``(state, best_params, progress)`` of :func:`save_progress`; ``CheckpointError`` if unusable."""
    tree, meta = checkpoint.restore_latest(directory, {"state": state_like, "best_params": params_like})
    return tree["state"], tree["best_params"], meta["progress"]
