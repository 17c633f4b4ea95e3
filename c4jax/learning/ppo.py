"""PPO for two-player self-play (design.md §7), on every game: its config (:class:`PPOConfig`), its loss
(:meth:`PPO.loss`, on :func:`c4jax.learning.losses.ppo_loss`), its update (:meth:`PPO.update`) and the
algorithm (:class:`PPO`), whatever collects the rows (``--collect``, :mod:`c4jax.learning.onpolicy`).

Each *buffer*: one collection, then ``epochs`` passes of shuffled minibatches with the clipped objective,
the value loss and the entropy bonus over the legal actions; then the buffer is discarded. The host loop
evaluates every ``buffers_per_eval`` buffers.

- ``--collect games`` (the thesis, :mod:`c4jax.learning.onpolicy_games`): ``games_per_collect`` (default:
  enough to fill it) whole self-play games sampled from the current policy, each followed by its mirror,
  trimmed to the first ``buffer_size`` rows in game order; minibatches of ``minibatch_size`` valid rows
  (the last one of an epoch may be short), the Smooth-L1 value loss. Optionally (``--opponent``) a fixed
  agent plays one side of a fraction of the games.
- ``--collect streams`` (:mod:`c4jax.learning.onpolicy_streams`): a buffer is one collection of
  ``envs x steps`` plies with the game's own rewards and GAE(λ); ``minibatch_size`` divides it; the squared
  error of the tanh value and advantages normalised over each minibatch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import Annotated, ClassVar

import jax
import jax.numpy as jnp
import tyro
from jax import Array

from c4jax.io.devices import shard_batch
from c4jax.learning import config, losses, onpolicy, ranges
from c4jax.learning.onpolicy import weighted_mean
from c4jax.learning.onpolicy_games import Samples, Strategies
from c4jax.learning.optim import apply_gradients

# the whole-games collection's PPO switches (design.md §7a), with the values that leave them off
GAMES_ONLY = {"td_advantage": False, "explore": 0.0, "selfplay_mirror_avg": False, "unmasked_log_probs": False}


# the settings of --collect streams on a game whose kit gives none (docs/results/<game> trains with them)
STREAMS = MappingProxyType(dict(collect="streams", network="tower", envs=64, steps=64, epochs=4, minibatch_size=512,
                                clip=0.2, c1=0.5, c2=0.01, gamma=1.0, gae_lambda=0.95, learning_rate=3e-4, weight_decay=0.0,
                                max_grad_norm=0.5, buffers_per_eval=50, tower_blocks=2, tower_channels=32))
STREAMS_UPDATES = 40_000  # --total-updates of such a run


@dataclass(frozen=True)
class PPOConfig(onpolicy.OnPolicyConfig):
    """PPO hyperparameters (defaults: the thesis on the default game; another game's from its kit). With
    --opponent, only the learner's own moves are training rows; the opponent's moves shape their returns."""

    buffer_size: int = 2000
    """--collect games: transitions per buffer (mirrors included); --collect streams: a buffer is one collection."""
    epochs: int = 5
    """Passes over each buffer."""
    minibatch_size: int = 32
    """Transitions per optimiser step."""
    clip: float = 0.2
    """Ratio clip."""
    c1: float = 0.75
    """Value-loss weight (Smooth-L1; --collect streams: the squared error of tanh(value))."""
    c2: float = 0.04
    """Entropy-bonus weight (the entropy over the legal actions)."""
    gae_lambda: float = 1.0
    """GAE(λ) for advantages; 1.0 is the thesis' G - V."""
    learning_rate: float = 1e-4
    """Adam learning rate."""
    weight_decay: float = 5e-5
    """L2 penalty added to the gradient."""
    games_per_collect: int = 0
    """--collect games: self-play games played in parallel to fill one buffer; 0 = ceil(buffer_size / 12.5),
    enough to fill it (why: design.md §7; the extra rows are dropped). With --opponent, games against it give half
    the rows, and the automatic value grows to match."""
    td_advantage: bool = False
    """One-step TD value targets and advantages on the mirror-averaged value V̄ of the collecting network:
    target = r - γ(1 - done)·V̄(s'), advantage = target - V̄(s); the value head regresses on the target (the
    published code; replaces the Monte-Carlo G and --gae-lambda)."""
    explore: float = 0.0
    """Probability of a uniformly random legal move in self-play (the published code: 0.10)."""
    selfplay_mirror_avg: bool = False
    """Self-play samples the mirror-averaged logits (masked to legal columns), as the published code does."""
    unmasked_log_probs: bool = False
    """Stored and recomputed log-probs and the entropy bonus over all 7 columns, unmasked and not
    mirror-averaged (the published code)."""
    eval_every: int = 0
    """Updates between evaluations (and checkpoints); 0 = the preset's: every buffer (thesis), every 5 buffers
    (published); another game's kit gives its own. One that is not a multiple of one buffer's updates (--epochs x
    ceil(--buffer-size / --minibatch-size); --collect streams: --epochs x --envs x --steps / --minibatch-size) ends
    each interval inside a buffer, after the minibatch update that reaches it. A multiple is saved as the number
    of buffers (buffers_per_eval)."""
    buffers_per_eval: Annotated[int, tyro.conf.Suppress] = 1
    """Buffers (collect + update) between evaluations, which --eval-every sets (the published code: 5)."""

    RANGES: ClassVar[dict] = {
        "buffer_size": ranges.ONE_OR_MORE, "epochs": ranges.ONE_OR_MORE, "minibatch_size": ranges.ONE_OR_MORE,
        "clip": ranges.POSITIVE, "c1": ranges.NON_NEGATIVE, "c2": ranges.NON_NEGATIVE, "gae_lambda": ranges.UNIT,
        "learning_rate": ranges.POSITIVE, "weight_decay": ranges.NON_NEGATIVE,
        "games_per_collect": ranges.at_least(0, "(0 = auto)"), "explore": ranges.UNIT,
        "eval_every": ranges.at_least(0, "(0 = the preset's)"), "buffers_per_eval": ranges.ONE_OR_MORE,
    }

    SMOKE: ClassVar[dict] = {"width": 16, "buffer_size": 256, "games_per_collect": 16, "epochs": 2, "buffers_per_eval": 1,
                             "total_updates": 16}
    STREAMS_SMOKE: ClassVar[dict] = {"envs": 4, "steps": 8, "minibatch_size": 16, "epochs": 1, "buffers_per_eval": 1,
                                     "tower_blocks": 1, "tower_channels": 4, "total_updates": 2}

    def check(self) -> None:
        """``ValueError`` for settings that do not fit together (:func:`c4jax.learning.config.validate`)."""
        super().check()
        if self.streams:
            self.refuse_games_only(GAMES_ONLY)
            if (self.envs * self.steps) % self.minibatch_size:
                raise ValueError(f"--minibatch-size ({self.minibatch_size}) must divide a collection's rows "
                                 f"(--envs x --steps = {self.envs * self.steps})")
        elif self.minibatch_size > self.buffer_size:
            raise ValueError(f"--minibatch-size ({self.minibatch_size}) cannot exceed --buffer-size ({self.buffer_size})")

    def normalised(self) -> "PPOConfig":
        """This config with ``eval_every`` given as ``buffers_per_eval`` (:func:`c4jax.learning.config.settle`)."""
        return config.eval_in_units(self, "buffers_per_eval", self.buffer_updates)

    @property
    def eval_updates(self) -> int:
        """The updates between evaluations (at most: buffers that self-play leaves short make fewer)."""
        return self.eval_every or self.buffers_per_eval * self.buffer_updates

    @property
    def smoke(self) -> dict:
        """``--preset smoke``'s sizes for this config's collection (:func:`c4jax.learning.config.smoke_config`)."""
        return self.STREAMS_SMOKE if self.streams else self.SMOKE

    @property
    def buffer_updates(self) -> int:
        """The optimiser steps of one full buffer: --epochs passes of ceil(--buffer-size / --minibatch-size)
        minibatches (a buffer that self-play leaves short makes fewer); --collect streams: of --envs x --steps
        / --minibatch-size minibatches."""
        if self.streams:
            return self.epochs * self.minibatches
        return self.epochs * -(-self.buffer_size // self.minibatch_size)

    @property
    def minibatches(self) -> int:
        """--collect streams: optimiser steps per epoch."""
        return self.envs * self.steps // self.minibatch_size

    @property
    def games(self) -> int:
        """Self-play games per buffer (``games_per_collect``, or its automatic value when 0)."""
        if self.games_per_collect:
            return self.games_per_collect
        games = math.ceil(self.buffer_size / 12.5)
        if self.opponent_games(games):  # only the learner's half of those games' moves are rows
            games = math.ceil(self.buffer_size / (12.5 * (1.0 - self.opponent_frac / 2)))
        return games


class PPO(onpolicy.OnPolicy):
    """PPO on ``game`` with the collection of ``cfg.collect`` (:class:`~c4jax.learning.onpolicy.OnPolicy`);
    ``ValueError`` when ``cfg`` does not fit the game."""

    name = "ppo"

    def __init__(self, cfg: PPOConfig, game, freeze_conv: bool = True):
        cfg = config.settle(cfg)
        self.strategies = Strategies.of(cfg, explore=cfg.explore, mirror_avg=cfg.selfplay_mirror_avg,
                                        td_advantage=cfg.td_advantage, unmasked_log_probs=cfg.unmasked_log_probs)
        self.games = cfg.games
        super().__init__(cfg, game, freeze_conv)
        if not cfg.streams:
            self.batch_sizes = {"--games-per-collect (games per buffer)": cfg.games, "--buffer-size": cfg.buffer_size,
                                "--minibatch-size": cfg.minibatch_size}
        self.update_step = cfg.buffer_updates
        self.eval_updates = cfg.eval_updates

    def loss(self, params, mb: Samples, weights: Array | None):
        """``(loss, metrics)`` of minibatch ``mb`` [M]: the mean of :func:`losses.ppo_loss` over its rows, weighted
        by ``weights`` [M] (``None``: every row alike), with the collection's value loss, its advantages
        (normalised over the minibatch where the collection says so) and its KL estimator in the metrics
        (``k3``: ``(ratio - 1) - log ratio``, ``k1``: ``log pi_old - log pi``)."""
        cfg, c = self.cfg, self.collection
        logits, legal, value = c.forward(params, mb.obs, mb.legal)
        adv = mb.advantage
        if c.normalise_advantages:
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        loss_fn = partial(losses.ppo_loss, clip=cfg.clip, c1=cfg.c1, c2=cfg.c2, value_loss=c.value_loss)
        total, aux = jax.vmap(loss_fn)(logits, legal, mb.action, mb.logp, adv, value, mb.target)
        kl = aux["approx_kl"] if c.kl == "k3" else mb.logp - aux["log_prob"]
        rows = {"loss": total, "policy_loss": aux["policy_loss"], "value_loss": aux["value_loss"],
                "entropy": aux["entropy"], "approx_kl": kl, "clip_fraction": aux["clipped"]}
        metrics = {f"train/{k}": weighted_mean(v, weights) for k, v in rows.items()}
        return metrics["train/loss"], metrics

    def update(self, params, opt_state, buffer: Samples, key: Array, cap: Array | None = None):
        """``epochs`` passes over the flat ``buffer`` [N], each in the collection's shuffled minibatches of
        ``minibatch_size`` rows (one ``lax.scan``). A weighted minibatch without weight makes no optimiser step
        (no Adam step, no weight decay); with ``cap`` (int32 scalar) no minibatch steps after the first ``cap``
        steps. Returns ``(params, opt_state, metrics, updates)``: the ``train/*`` metrics averaged over the
        minibatches that made a step, and the number of those steps (int32)."""
        cfg, c = self.cfg, self.collection
        grad = jax.value_and_grad(self.loss, has_aux=True)

        def minibatch(carry, xs):
            index, weights = xs
            mb, weights = shard_batch((jax.tree.map(lambda x: x[index], buffer), weights))  # split over devices
            (_, metrics), grads = grad(carry[0], mb, weights)
            if weights is None and cap is None:
                return apply_gradients(self.tx, *carry, grads), metrics
            stepped = jnp.bool_(True) if weights is None else weights.sum() > 0
            if cap is not None:
                stepped = stepped & (carry[2] < cap)
            new = jax.lax.cond(stepped, lambda p: apply_gradients(self.tx, *p, grads), lambda p: p, carry[:2])
            if cap is not None:
                new = (*new, carry[2] + stepped.astype(jnp.int32))
            return new, {**metrics, "stepped": stepped.astype(jnp.float32)}

        def epoch(carry, k):
            return jax.lax.scan(minibatch, carry, c.minibatches(k, buffer.valid, cfg.minibatch_size))

        start = (params, opt_state) if cap is None else (params, opt_state, jnp.int32(0))
        (params, opt_state, *_), m = jax.lax.scan(epoch, start, jax.random.split(key, cfg.epochs))
        if "stepped" not in m:
            return params, opt_state, {k: v.mean() for k, v in m.items()}, jnp.int32(cfg.buffer_updates)
        stepped = m.pop("stepped")
        count = stepped.sum()
        metrics = {k: jnp.sum(v * stepped) / jnp.maximum(count, 1.0) for k, v in m.items()}
        return params, opt_state, metrics, count.astype(jnp.int32)

    def _buffer(self, state, _, stop: Array | None = None):
        """One collection and its update (``stop``: no update once ``state.updates`` reaches it)."""
        c = self.collection
        key, *keys = jax.random.split(state.key, 2 + c.keys)
        state, samples, stats = c.collect(state, keys[:-1], self.cfg.gae_lambda)
        buffer, more = c.buffer(jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), samples))
        cap = None if stop is None else stop - state.updates
        params, opt_state, metrics, updates = self.update(state.params, state.opt_state, buffer, keys[-1], cap)
        state = state.replace(params=params, opt_state=opt_state, key=key, updates=state.updates + updates)
        return state, {**metrics, **stats, **more}

    def _chunk(self, state, units: int | None = None):
        """``buffers_per_eval`` buffers (one ``lax.scan``); ``units`` (or an ``eval_updates`` that is not a
        multiple of a buffer's): the buffers that make that many updates, the last one stopping after the
        minibatch update that reaches it (fewer when self-play leaves buffers short)."""
        updates = self.eval_updates if units is None else units
        if units is None and updates % self.update_step == 0:
            state, m = jax.lax.scan(self._buffer, state, None, length=self.cfg.buffers_per_eval)
        else:
            stop = state.updates + updates
            state, m = jax.lax.scan(partial(self._buffer, stop=stop), state, None, length=-(-updates // self.update_step))
        return state, self.collection.chunk_metrics(state, m)
