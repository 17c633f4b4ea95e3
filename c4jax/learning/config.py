"""The hyperparameters every self-play RL trainer shares (DQN, REINFORCE, PPO)."""

from __future__ import annotations

from dataclasses import dataclass

from c4jax.learning.opponent import OpponentConfig


@dataclass(frozen=True)
class SelfPlayConfig(OpponentConfig):
    """Fields common to the RL trainers' configs (each trainer adds its own; defaults: the thesis,
    docs/design.md §7)."""

    gamma: float = 0.95
    """Discount of the turn-based targets (the next state is the opponent's: its value is subtracted)."""
    reward_backprop_n: float = 3.0
    """Exponent n of the reward back-propagation r_t = r_T * (t / T)^n (docs/design.md §2)."""
    width: int = 128
    """CNET width (filters and dense units)."""
