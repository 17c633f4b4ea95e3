"""PPO for two-player self-play (design.md §7).

Each *buffer*: ``games_per_collect`` (default: enough to fill it) self-play games sampled from the current
policy in parallel from design.md §3 random start boards, each followed by its mirror
(the mirrored action's log-prob recomputed on the mirrored board), trimmed to the
first ``buffer_size`` transitions in game order; then ``epochs`` passes of shuffled
minibatches with the clipped objective, Smooth-L1 value loss and entropy bonus;
then the buffer is discarded. The host loop evaluates after every buffer.
Optionally (``--opponent``) a fixed agent plays one side of a fraction of the games.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp

from c4jax.agents import arena
from c4jax.learning import onpolicy
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

    def __post_init__(self):
        super().__post_init__()
        if self.minibatch_size > self.buffer_size:
            raise ValueError("--minibatch-size cannot exceed --buffer-size")
        if self.games_per_collect < 0:
            raise ValueError(f"--games-per-collect must be >= 0 (0 = auto), got {self.games_per_collect}")
        if not 0.0 <= self.gae_lambda <= 1.0:
            raise ValueError(f"--gae-lambda must be in [0, 1], got {self.gae_lambda}")

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
        super().__init__(cfg.learning_rate, cfg.weight_decay, freeze_conv)

    def _chunk(self, state: TrainState):
        cfg = self.cfg
        key, start_key, play_key, update_key = jax.random.split(state.key, 4)
        starts = arena.random_initial_states(start_key, cfg.games)
        batch, lengths = onpolicy.collect_mixed(
            state.params, play_key, starts, cfg.opponent_agent, cfg.opponent_games(cfg.games), gamma=cfg.gamma,
            gae_lambda=cfg.gae_lambda, width=cfg.width, backprop_n=cfg.reward_backprop_n)
        games_length = lengths.mean()
        buffer = onpolicy.take_first(batch, cfg.buffer_size)
        params, opt_state, m = onpolicy.ppo_update(
            state.params, state.opt_state, buffer, update_key, tx=self.tx, epochs=cfg.epochs,
            minibatch_size=cfg.minibatch_size, clip=cfg.clip, c1=cfg.c1, c2=cfg.c2, width=cfg.width)
        new = state.replace(params=params, opt_state=opt_state, key=key, updates=state.updates + m["train/updates"],
                             episodes=state.episodes + cfg.games)
        metrics = {k: v for k, v in m.items() if k not in ("train/updates", "train/samples")}
        metrics.update({"selfplay/length": games_length.astype(jnp.float32),
                        "buffer/samples": m["train/samples"].astype(jnp.float32),
                        "selfplay/episodes": new.episodes.astype(jnp.float32)})
        return new, metrics
