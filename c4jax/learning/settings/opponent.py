"""Training partly against a fixed opponent instead of pure self-play (Löhr et al., design.md §8): ``--opponent``
plays one side, at a random seat, of ``--opponent-frac`` of the training games; ``self`` is the thesis."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

from c4jax.learning import ranges

SELF = "self"


@dataclass(frozen=True)
class OpponentConfig:
    """The training-opponent fields shared by the RL trainers' configs."""

    opponent: str = SELF
    """'self' (the thesis: pure self-play) or an agent (e.g. '2steplA:sto'; any agents.load name) that plays
    one side, at a random seat, of --opponent-frac of the training games (Löhr et al. train DQN against a
    depth-limited minimax)."""
    opponent_frac: float = 0.5
    """Fraction of each batch of training games played against --opponent (rounded); the rest are self-play."""

    RANGES: ClassVar[dict] = {"opponent_frac": ranges.UNIT}

    def check(self) -> None:
        """``ValueError`` for an opponent that is not a name (whether it loads: :attr:`opponent_agent`)."""
        if not isinstance(self.opponent, str) or not self.opponent.strip():
            raise ValueError(f"--opponent must be 'self' or an agent name, got {self.opponent!r}")

    @property
    def self_play(self) -> bool:
        """Whether every training game is self-play (``--opponent self``)."""
        return self.opponent.strip().lower() == SELF

    @cached_property
    def opponent_agent(self):
        """``agents.load(opponent)``, loaded at the first use, or None for 'self'; ``ValueError`` for a name that
        does not load."""
        from c4jax import agents
        from c4jax.io import checkpoint

        OpponentConfig.check(self)  # the name only, not a subclass' other settings
        if self.self_play:
            return None
        try:
            return agents.load(self.opponent)
        except (ValueError, FileNotFoundError, checkpoint.CheckpointError) as e:
            raise ValueError(f"--opponent {self.opponent!r}: {e}") from None

    def opponent_games(self, games: int) -> int:
        """How many of a batch of ``games`` are played against the opponent (none for 'self')."""
        return 0 if self.self_play else int(round(self.opponent_frac * games))
