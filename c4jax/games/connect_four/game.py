"""Connect Four as a :class:`c4jax.games.base.Game` (the rules are :mod:`c4jax.games.connect_four.env`)."""

from __future__ import annotations

from dataclasses import dataclass

from jax import Array

from c4jax.games.connect_four import env


@dataclass(frozen=True)
class ConnectFour:
    """The 6x7 game: observations ``int8[6, 7]`` (1 = player to move), actions the
    columns 0..6."""

    id: str = "connect_four"
    num_actions: int = env.NUM_ACTIONS
    num_players: int = 2
    observation_shape: tuple[int, ...] = (env.ROWS, env.COLS)
    max_steps: int = env.MAX_MOVES

    def init(self, key: Array | None = None) -> env.EnvState:
        return env.init(key)

    def step(self, state: env.EnvState, action: Array, key: Array | None = None) -> env.EnvState:
        del key  # no chance in Connect Four
        return env.step(state, action)

    def observe(self, state: env.EnvState) -> Array:
        return env.observe(state)


GAME = ConnectFour()
