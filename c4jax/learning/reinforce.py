"""REINFORCE with a learned baseline for two-player self-play (design.md §7), on every game: its config
(:class:`ReinforceConfig`), its loss (:meth:`Reinforce.loss`, on :func:`c4jax.learning.losses.reinforce_loss`),
its update (:meth:`Reinforce.update`) and the algorithm (:class:`Reinforce`), whatever collects the rows
(``--collect``, :mod:`c4jax.learning.onpolicy`).

The loss of a row: advantage ``G - V(s)`` with the current network's baseline, Smooth-L1 value loss, the
thesis' objective ``L_policy - c1·L_value`` (minimised as its negative); one gradient step per group of rows,
each row used once.

- ``--collect games`` (the thesis, :mod:`c4jax.learning.onpolicy_games`): a group is one self-play episode
  with its mirror. For speed the ``games_per_collect`` episodes of an iteration are played in parallel by the
  same weights and then applied one update each, in order; with the thesis' learning rate (5e-6) the weights
  barely move within an iteration.
- ``--collect streams`` (:mod:`c4jax.learning.onpolicy_streams`): a group is a whole collection of
  ``envs x steps`` plies with the game's own rewards, ``G`` the negamax return (GAE with λ = 1, bootstrapped
  from the value of the state after the collection's last ply), the value through ``tanh``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import Annotated, ClassVar

import jax
import jax.numpy as jnp
import tyro
from jax import Array

from c4jax.learning import blocks, config, losses, onpolicy, ranges
from c4jax.learning.onpolicy import weighted_mean
from c4jax.learning.onpolicy_games import Samples, Strategies
from c4jax.learning.optim import apply_gradients


# the settings of --collect streams on a game whose kit gives none: one update per collection of 4,096 plies
STREAMS = MappingProxyType(dict(collect="streams", network="tower", envs=64, steps=64, c1=0.5, gamma=1.0,
                                learning_rate=3e-4, weight_decay=0.0, max_grad_norm=0.5, episodes_per_eval=50,
                                tower_blocks=2, tower_channels=32))
STREAMS_UPDATES = 2_000  # --total-updates of such a run


@dataclass(frozen=True)
class ReinforceConfig(onpolicy.OnPolicyConfig):
    """REINFORCE-with-baseline hyperparameters (defaults: the thesis on the default game; another game's
    from its kit). With --opponent, only the learner's own moves carry a loss; the opponent's moves shape their
    returns."""

    c1: float = 0.75
    """Value-loss weight (Smooth-L1)."""
    learning_rate: float = 5e-6
    """Adam learning rate."""
    weight_decay: float = 1e-3
    """L2 penalty added to the gradient."""
    games_per_collect: int = 20
    """--collect games: episodes played in parallel by the same weights before their (sequential) updates."""
    eval_every: int = 0
    """Updates (= episodes; --collect streams: collections) between evaluations (and checkpoints); 0 = 100, the
    thesis' (another game's kit gives its own). --collect games: one that is not a multiple of --games-per-collect
    ends each interval with a collection whose first games alone make updates. Saved as episodes_per_eval."""
    episodes_per_eval: Annotated[int, tyro.conf.Suppress] = 100
    """Updates between evaluations, which --eval-every sets."""

    RANGES: ClassVar[dict] = {
        "c1": ranges.NON_NEGATIVE, "learning_rate": ranges.POSITIVE, "weight_decay": ranges.NON_NEGATIVE,
        "games_per_collect": ranges.ONE_OR_MORE, "eval_every": ranges.at_least(0, "(0 = 100)"),
        "episodes_per_eval": ranges.ONE_OR_MORE,
    }

    SMOKE: ClassVar[dict] = {"width": 16, "games_per_collect": 5, "episodes_per_eval": 10, "total_updates": 10}
    STREAMS_SMOKE: ClassVar[dict] = {"envs": 4, "steps": 8, "episodes_per_eval": 1, "tower_blocks": 1,
                                     "tower_channels": 4, "total_updates": 2}

    def normalised(self) -> "ReinforceConfig":
        """This config with ``eval_every`` given as ``episodes_per_eval`` (:func:`c4jax.learning.config.settle`)."""
        return config.eval_in_units(self, "episodes_per_eval", 1)

    @property
    def eval_updates(self) -> int:
        """The updates between evaluations."""
        return self.eval_every or self.episodes_per_eval


    @property
    def smoke(self) -> dict:
        """``--preset smoke``'s sizes for this config's collection (:func:`c4jax.learning.config.smoke_config`)."""
        return self.STREAMS_SMOKE if self.streams else self.SMOKE


class Reinforce(onpolicy.OnPolicy):
    """REINFORCE on ``game`` with the collection of ``cfg.collect`` (:class:`~c4jax.learning.onpolicy.OnPolicy`);
    ``ValueError`` when ``cfg`` does not fit the game."""

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
        """``(loss, metrics)`` of one group of rows [R]: the mean of :func:`losses.reinforce_loss` over them,
        weighted by ``weights`` [R] (``None``: every row alike)."""
        logits, legal, value = self.collection.forward(params, rows.obs, rows.legal)
        total, aux = jax.vmap(partial(losses.reinforce_loss, c1=self.cfg.c1))(logits, legal, rows.action, rows.target,
                                                                              value)
        per_row = {"loss": total, "policy_loss": aux["policy_loss"], "value_loss": aux["value_loss"],
                   "entropy": aux["entropy"], "advantage": aux["advantage"]}
        metrics = {f"train/{k}": weighted_mean(v, weights) for k, v in per_row.items()}
        return metrics["train/loss"], metrics

    def update(self, params, opt_state, samples: Samples):
        """One gradient step on each group of ``samples`` [G, R] in turn (one ``lax.scan``; a group without a
        valid row makes none), the rows weighted by ``valid`` where the collection weighs them (else one group,
        one plain step). Returns ``(params, opt_state, metrics)``, the metrics averaged
        over the groups."""
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
        """``episodes_per_eval`` updates (``units``: that many): whole collections (one ``lax.scan``), then one
        whose first games alone make the updates that remain."""
        whole, rest = divmod(self.eval_updates if units is None else units, self.update_step)
        state, m = blocks.run(state, whole, self._iteration, partial(self._iteration, updates=rest) if rest else None)
        return state, self.collection.chunk_metrics(state, m)
