"""REINFORCE with a learned baseline for two-player self-play on every game (design.md §7).

The loss of a row is :func:`c4jax.learning.losses.reinforce_loss`; one gradient step per group of rows,
each row used once: a group is one episode with its mirror (``--collect games``, whose episodes of an
iteration are played in parallel by the same weights) or one whole collection (``--collect streams``).
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
from jax import Array

from c4jax.learning import blocks, config, losses, onpolicy
from c4jax.learning.onpolicy import weighted_mean
from c4jax.learning.onpolicy_games import Samples, Strategies
from c4jax.learning.settings.reinforce import ReinforceConfig as ReinforceConfig
from c4jax.learning.optim import apply_gradients


class Reinforce(onpolicy.OnPolicy):
    """REINFORCE on ``game``; ``ValueError`` when ``cfg`` does not fit the game."""

    name = "reinforce"

    def __init__(self, cfg: ReinforceConfig, game, freeze_conv: bool = True):
        cfg = config.settle(cfg)
        self.strategies, self.games = Strategies.of(cfg), cfg.games_per_collect
        super().__init__(cfg, game, freeze_conv)
        if not cfg.streams:
            self.batch_sizes = {"--games-per-collect": cfg.games_per_collect}  # an update (one episode) is not split
        self.update_step = 1 if cfg.streams else cfg.games_per_collect
        self.eval_updates = cfg.eval_updates

    def loss(self, params, rows: Samples, weights: Array | None):
        """``(loss, metrics)``: the ``weights``-weighted mean of :func:`losses.reinforce_loss` over ``rows`` [R]."""
        logits, legal, value = self.collection.forward(params, rows.obs, rows.legal)
        total, aux = jax.vmap(partial(losses.reinforce_loss, c1=self.cfg.c1))(logits, legal, rows.action, rows.target,
                                                                              value)
        per_row = {"loss": total, "policy_loss": aux["policy_loss"], "value_loss": aux["value_loss"],
                   "entropy": aux["entropy"], "advantage": aux["advantage"]}
        metrics = {f"train/{k}": weighted_mean(v, weights) for k, v in per_row.items()}
        return metrics["train/loss"], metrics

    def update(self, params, opt_state, samples: Samples):
        """``(params, opt_state, metrics)`` after one step per group of ``samples`` [G, R] in turn (none for a group
        without a valid row); an unweighted collection makes one step."""
        grad = jax.value_and_grad(self.loss, has_aux=True)
        if not self.collection.weighted:
            (_, m), grads = grad(params, jax.tree.map(lambda x: x[0], samples), None)
            return *apply_gradients(self.tx, params, opt_state, grads), m

        def group(carry, rows: Samples):
            (_, m), grads = grad(carry[0], rows, rows.valid.astype(jnp.float32))
            carry = jax.lax.cond(rows.valid.any(), lambda p: apply_gradients(self.tx, *p, grads), lambda p: p, carry)
            return carry, m

        (params, opt_state), m = jax.lax.scan(group, (params, opt_state), samples)
        return params, opt_state, {k: v.mean() for k, v in m.items()}

    def _iteration(self, state, _, updates: int | None = None):
        """One collection and its updates (``updates`` < ``update_step``: the first ``updates`` games' alone)."""
        c = self.collection
        key, *keys = jax.random.split(state.key, 1 + c.keys)
        state, samples, stats = c.collect(state, keys)
        if updates is not None:
            samples = jax.tree.map(lambda x: x[:updates], samples)
        params, opt_state, metrics = self.update(state.params, state.opt_state, samples)
        state = state.replace(params=params, opt_state=opt_state, key=key,
                              updates=state.updates + (updates or self.update_step))
        return state, {**metrics, **stats}

    def _chunk(self, state, units: int | None = None):
        """``eval_updates`` (or ``units``) updates: whole collections, then a partial one."""
        whole, rest = divmod(self.eval_updates if units is None else units, self.update_step)
        state, m = blocks.run(state, whole, self._iteration, partial(self._iteration, updates=rest) if rest else None)
        return state, self.collection.chunk_metrics(state, m)
