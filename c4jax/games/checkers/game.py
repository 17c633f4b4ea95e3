"""Checkers as a :class:`c4jax.games.base.Game`: ``GAME`` plays design.md's rules, ``OPENSPIEL_GAME``
OpenSpiel's draw rule (for the differential test)."""

from __future__ import annotations

from dataclasses import dataclass, field

from jax import Array

from c4jax.games.checkers import env


@dataclass(frozen=True)
class Checkers:
    """English draughts: observations ``int8[8, 8, 2]``, 256 actions, rewards +1 / -1 / 0."""

    rules: env.Rules = field(default_factory=env.Rules)
    id: str = "checkers"
    num_actions: int = env.NUM_ACTIONS
    num_players: int = 2
    observation_shape: tuple[int, ...] = env.OBSERVATION_SHAPE

    @property
    def max_steps(self) -> int:
        return self.rules.max_steps

    def init(self, key: Array | None = None) -> env.State:
        del key  # no chance in Checkers
        return env.init(self.rules)

    def step(self, state: env.State, action: Array, key: Array | None = None) -> env.State:
        del key
        return env.step(self.rules, state, action)

    def observe(self, state: env.State) -> Array:
        return env.observe(state)


GAME = Checkers()
OPENSPIEL_GAME = Checkers(
    rules=env.Rules(max_steps=1000, quiet_limit=40, man_move_resets=False, repetition=False, quiet_draw_first=True),
    id="checkers_openspiel",
)
