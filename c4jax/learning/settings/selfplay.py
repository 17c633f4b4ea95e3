"""The hyperparameters every self-play RL trainer shares (:class:`SelfPlayConfig`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from c4jax.learning import ranges
from c4jax.learning.settings.opponent import OpponentConfig


@dataclass(frozen=True)
class SelfPlayConfig(OpponentConfig):
    """Fields common to the RL trainers' configs (each trainer adds its own; defaults: the thesis)."""

    gamma: float = 0.95
    """Discount of the turn-based targets (the next state is the opponent's: its value is subtracted)."""
    reward_backprop_n: float = 3.0
    """Exponent n of the reward back-propagation r_t = r_T * (t / T)^n."""
    reward_backprop: str = "per_player"
    """'per_player' (the thesis: each player's own moves 1..T) or 'segments' (the published code:
    absolute turn numbers, the game split at every ±1 shaped reward, the loser's turn taken as T+1,
    zero rewards after the first split left at 0)."""
    replace_draws: bool = False
    """Discard drawn training games and replace each by a game from the empty board (the published code)."""
    width: int = 128
    """CNET width (filters and dense units)."""

    RANGES: ClassVar[dict] = {"gamma": ranges.UNIT, "reward_backprop_n": ranges.NON_NEGATIVE, "width": ranges.ONE_OR_MORE}

    def check(self) -> None:
        """``ValueError`` for settings that do not fit together."""
        super().check()
        if self.reward_backprop not in ("per_player", "segments"):
            raise ValueError(f"--reward-backprop must be 'per_player' or 'segments', got {self.reward_backprop!r}")
