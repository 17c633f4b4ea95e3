"""PPO's settings (:class:`PPOConfig`), also of its ``--collect streams`` runs."""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Annotated, ClassVar

import tyro

from c4jax.learning import config, ranges
from c4jax.learning.settings import onpolicy

# the whole-games collection's PPO switches (design.md §7a), with the values that leave them off
GAMES_ONLY = {"td_advantage": False, "explore": 0.0, "selfplay_mirror_avg": False, "unmasked_log_probs": False}


# the settings of --collect streams on a game whose kit gives none (docs/results/<game> trains with them)
STREAMS = MappingProxyType(dict(collect="streams", network="tower", envs=64, steps=64, epochs=4, minibatch_size=512,
                                clip=0.2, c1=0.5, c2=0.01, gamma=1.0, gae_lambda=0.95, learning_rate=3e-4, weight_decay=0.0,
                                max_grad_norm=0.5, buffers_per_eval=50, tower_blocks=2, tower_channels=32))
STREAMS_UPDATES = 40_000  # --total-updates of such a run


@dataclass(frozen=True)
class PPOConfig(onpolicy.OnPolicyConfig):
    """PPO hyperparameters: the thesis' by default, a trainer command's from its --preset and --game, which
    explicit flags override. With --opponent, only the learner's own moves are training rows; the opponent's
    moves shape their returns."""

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
        "games_per_collect": ranges.Range(0, note="(0 = auto)"), "explore": ranges.UNIT,
        "eval_every": ranges.Range(0, note="(0 = the preset's)"), "buffers_per_eval": ranges.ONE_OR_MORE,
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
    def buffer_updates(self) -> int:
        """The optimiser steps of one full buffer (--epochs passes over its minibatches)."""
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

