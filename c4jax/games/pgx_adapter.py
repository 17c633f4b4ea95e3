"""Any two-player pgx environment as a :class:`c4jax.games.base.Game` (the ``pgx`` extra):
``c4jax.games.from_pgx("tic_tac_toe")``. The adapter adds ``observe`` (``state.observation``) and
``max_steps``, a bound on a game's length (a game still running after it counts as a draw, so it must be
at least the game's real maximum), and empties the legal mask of finished states."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from jax import Array

# Longest possible game (steps) of pgx's two-player board games, where it is known and small.
KNOWN_MAX_STEPS = {
    "tic_tac_toe": 9,
    "connect_four": 42,
    "othello": 130,  # 60 discs, with at most one pass between placements, and a final pass pair
    "hex": 122,  # 11 x 11 cells and the swap move
}


def _no_moves_when_done(state):
    return state.replace(legal_action_mask=state.legal_action_mask & ~(state.terminated | state.truncated))


@dataclass(frozen=True, eq=False)
class PgxGame:
    """A pgx environment behind the game protocol (identity-hashed: one object per environment)."""

    env: Any
    max_steps: int

    @staticmethod
    @functools.lru_cache(maxsize=None)
    def make(name: str, max_steps: int | None = None, **kwargs) -> "PgxGame":
        """``pgx.make(name, **kwargs)`` as a game; ``max_steps`` defaults to :data:`KNOWN_MAX_STEPS`."""
        try:
            import pgx
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("c4jax.games.from_pgx needs pgx: pip install 'c4jax[pgx]'") from e
        env = pgx.make(name, **kwargs)
        if env.num_players != 2:
            raise ValueError(f"pgx:{name} has {env.num_players} players; only two-player games are supported")
        if max_steps is None:
            if name not in KNOWN_MAX_STEPS:
                raise ValueError(f"pgx:{name}: pass max_steps, a bound on the length of its games "
                                 f"(known: {sorted(KNOWN_MAX_STEPS)})")
            max_steps = KNOWN_MAX_STEPS[name]
        if max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps}")
        return PgxGame(env=env, max_steps=int(max_steps))

    @property
    def id(self) -> str:
        return f"pgx:{self.env.id}"

    @property
    def num_actions(self) -> int:
        return int(self.env.num_actions)

    @property
    def num_players(self) -> int:
        return int(self.env.num_players)

    @property
    def observation_shape(self) -> tuple[int, ...]:
        return tuple(self.env.observation_shape)

    def init(self, key: Array | None = None):
        if key is None:
            raise ValueError(f"{self.id}: init needs a PRNG key (pgx draws who moves first)")
        return _no_moves_when_done(self.env.init(key))

    def step(self, state, action: Array, key: Array | None = None):
        return _no_moves_when_done(self.env.step(state, action, key))

    def observe(self, state) -> Array:
        return state.observation
