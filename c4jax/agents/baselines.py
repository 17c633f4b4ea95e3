"""The baseline player of every game: uniform random over the legal actions (design.md §4's
Random). Connect Four's N-step lookahead is its kit's (:mod:`c4jax.agents.players`)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct
from jax import Array

from c4jax.agents.base import AgentBase, ScoreInfo, in_game_name, observation_legal
from c4jax.agents.policy import ILLEGAL_SCORE


@struct.dataclass
class RandomAgent(AgentBase):
    """Uniform over the legal actions of any game. ``scores`` are the probabilities (illegal: -inf).
    Its name is ``random`` on the default game, ``<game>/random`` on another."""

    stochastic: bool = struct.field(pytree_node=False, default=True)
    game: object = struct.field(pytree_node=False, kw_only=True)
    plays_any_game = True  # no learned parameters: agents.for_game switches its game

    @property
    def name(self) -> str:
        return in_game_name("random", self.game)

    def act_states(self, states, key: Array) -> Array:
        legal = states.legal_action_mask
        return jax.random.categorical(key, jnp.where(legal, 0.0, -jnp.inf)).astype(jnp.int32)

    def _scores_states(self, states) -> Array:
        return self._uniform(states.legal_action_mask)

    def describe_scores(self, action: str = "column", actions: str = "free columns") -> ScoreInfo:
        return ScoreInfo("random", f"probability of each {action} (uniform over the {actions})")

    @staticmethod
    def _uniform(legal: Array) -> Array:
        p = 1.0 / jnp.maximum(legal.sum(-1, keepdims=True), 1)
        return jnp.where(legal, p, ILLEGAL_SCORE).astype(jnp.float32)

    def _scores(self, boards: Array) -> Array:
        return self._uniform(observation_legal(self.game, boards))

    def _act(self, boards: Array, key: Array) -> Array:
        legal = observation_legal(self.game, boards)
        return jax.random.categorical(key, jnp.where(legal, 0.0, -jnp.inf)).astype(jnp.int32)
