"""PPO for two-player self-play (design.md §7).

Each *buffer*: ``games_per_collect`` (default: enough to fill it) self-play games sampled from the current
policy in parallel from design.md §3 random start boards, each followed by its mirror
(the mirrored action's log-prob recomputed on the mirrored board), trimmed to the
first ``buffer_size`` transitions in game order; then ``epochs`` passes of shuffled
minibatches with the clipped objective, Smooth-L1 value loss and entropy bonus;
then the buffer is discarded. The host loop evaluates after every buffer (every
``buffers_per_eval`` buffers).
Optionally (``--opponent``) a fixed agent plays one side of a fraction of the games.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Annotated, ClassVar

import jax
import jax.numpy as jnp
import tyro

from c4jax.agents import arena
from c4jax.learning import onpolicy, ranges
from c4jax.learning.config import SelfPlayConfig
from c4jax.learning.train_state import TrainState


@dataclass(frozen=True)
class PPOConfig(SelfPlayConfig):
    """PPO hyperparameters (defaults: the thesis, design.md §7). With --opponent, only the learner's own moves are
    training rows; the opponent's moves shape their returns."""

    buffer_size: int = 2000
    """Transitions per buffer (mirrors included)."""
    epochs: int = 5
    """Passes over each buffer."""
    minibatch_size: int = 32
    """Transitions per optimiser step."""
    clip: float = 0.2
    """Ratio clip."""
    c1: float = 0.75
    """Value-loss weight (Smooth-L1)."""
    c2: float = 0.04
    """Entropy-bonus weight."""
    gae_lambda: float = 1.0
    """GAE(λ) for advantages; 1.0 is the thesis' G - V."""
    learning_rate: float = 1e-4
    """Adam learning rate."""
    weight_decay: float = 5e-5
    """L2 penalty added to the gradient."""
    games_per_collect: int = 0
    """Self-play games played in parallel to fill one buffer; 0 = ceil(buffer_size / 12.5), enough to fill
    it (a game from a random start gives 15-20 rows with its mirror; the extra rows are dropped). With
    --opponent, games against it give half the rows, and the automatic value grows to match."""
    td_advantage: bool = False
    """One-step TD value targets and advantages on the mirror-averaged value V̄ of the collecting network:
    target = r - γ(1 - done)·V̄(s'), advantage = target - V̄(s); the value head regresses on the target (the
    published code, design.md §7a; replaces the Monte-Carlo G and --gae-lambda)."""
    explore: float = 0.0
    """Probability of a uniformly random legal move in self-play (the published code: 0.10, design.md §7a)."""
    selfplay_mirror_avg: bool = False
    """Self-play samples the mirror-averaged logits (masked to legal columns), as the published code does
    (design.md §7a)."""
    unmasked_log_probs: bool = False
    """Stored and recomputed log-probs and the entropy bonus over all 7 columns, unmasked and not
    mirror-averaged (the published code, design.md §7a)."""
    eval_every: int = 0
    """Updates between evaluations (and checkpoints), a multiple of one buffer's (--epochs x
    ceil(--buffer-size / --minibatch-size)); 0 = the preset's: every buffer (thesis), every 5 buffers
    (published, design.md §7a). Saved as the number of buffers (buffers_per_eval)."""
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

    def __post_init__(self):
        super().__post_init__()
        if not ranges.checking():
            return
        if self.minibatch_size > self.buffer_size:
            raise ValueError(f"--minibatch-size ({self.minibatch_size}) cannot exceed --buffer-size ({self.buffer_size})")
        ranges.eval_every_to_units(self, "buffers_per_eval", self.buffer_updates,
                                   "buffer (--epochs x ceil(--buffer-size / --minibatch-size))")

    @property
    def buffer_updates(self) -> int:
        """The optimiser steps of one full buffer: --epochs passes of ceil(--buffer-size / --minibatch-size)
        minibatches (a buffer that self-play leaves short makes fewer)."""
        return self.epochs * -(-self.buffer_size // self.minibatch_size)

    @property
    def games(self) -> int:
        """Self-play games per buffer (``games_per_collect``, or its automatic value when 0)."""
        if self.games_per_collect:
            return self.games_per_collect
        games = math.ceil(self.buffer_size / 12.5)
        if self.opponent_games(games):  # only the learner's half of those games' moves are rows
            games = math.ceil(self.buffer_size / (12.5 * (1.0 - self.opponent_frac / 2)))
        return games


class PPO(onpolicy.OnPolicyAlgorithm):
    name = "ppo"

    def __init__(self, cfg: PPOConfig, freeze_conv: bool = True):
        self.cfg = cfg
        self.strategies = onpolicy.Strategies.of(
            cfg, explore=cfg.explore, mirror_avg=cfg.selfplay_mirror_avg, td_advantage=cfg.td_advantage,
            unmasked_log_probs=cfg.unmasked_log_probs)
        self.batch_sizes = {"--games-per-collect (games per buffer)": cfg.games, "--buffer-size": cfg.buffer_size,
                            "--minibatch-size": cfg.minibatch_size}
        super().__init__(cfg.learning_rate, cfg.weight_decay, freeze_conv)
        self.update_step, self.update_step_name = cfg.buffer_updates, "buffer"
        self.eval_updates = cfg.buffers_per_eval * cfg.buffer_updates

    def chunk_of(self, units: int):
        return jax.jit(partial(self._chunk, units=units))

    def _chunk(self, state: TrainState, units: int | None = None):
        """``buffers_per_eval`` buffers (``units``: that many; one ``lax.scan``); metrics averaged over them."""
        buffers = self.cfg.buffers_per_eval if units is None else units
        if buffers == 1:
            return self._buffer(state, None)
        state, m = jax.lax.scan(self._buffer, state, None, length=buffers)
        metrics = {k: v.mean() for k, v in m.items()}
        metrics["selfplay/episodes"] = state.episodes.astype(jnp.float32)
        return state, metrics

    def _buffer(self, state: TrainState, _):
        cfg = self.cfg
        key, start_key, play_key, update_key = jax.random.split(state.key, 4)
        starts = arena.random_initial_states(start_key, cfg.games)
        batch, lengths = onpolicy.collect_mixed(
            state.params, play_key, starts, cfg.opponent_agent, cfg.opponent_games(cfg.games), gamma=cfg.gamma,
            gae_lambda=cfg.gae_lambda, width=cfg.width, backprop_n=cfg.reward_backprop_n, strategies=self.strategies)
        games_length = lengths.mean()
        buffer = onpolicy.take_first(batch, cfg.buffer_size)
        params, opt_state, m = onpolicy.ppo_update(
            state.params, state.opt_state, buffer, update_key, tx=self.tx, epochs=cfg.epochs,
            minibatch_size=cfg.minibatch_size, clip=cfg.clip, c1=cfg.c1, c2=cfg.c2, width=cfg.width,
            log_prob_columns=self.strategies.log_prob_columns)
        new = state.replace(params=params, opt_state=opt_state, key=key, updates=state.updates + m["train/updates"],
                             episodes=state.episodes + cfg.games)
        metrics = {k: v for k, v in m.items() if k not in ("train/updates", "train/samples")}
        metrics.update({"selfplay/length": games_length.astype(jnp.float32),
                        "buffer/samples": m["train/samples"].astype(jnp.float32),
                        "selfplay/episodes": new.episodes.astype(jnp.float32)})
        return new, metrics
