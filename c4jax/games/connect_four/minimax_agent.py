"""``minimax<D>`` (D = 1 .. 7): seed 002's opponent as an agent (design.md §4a), the agents-layer
wrapper of the pure search in :mod:`c4jax.games.connect_four.minimax` (which imports nothing above
the games layer).

``:det``, the default, takes the lowest column among those of the best value: the seed's minimax is
deterministic ("the Minimax plays the same moves for every state", which its DQN learned to exploit),
and so is the first-best rule of its pseudocode's ``for each child`` loop. ``:sto`` draws uniformly
among the columns of exactly the best value (integer values, so a tie is exact).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct
from jax import Array

from c4jax.agents.base import AgentBase, ScoreInfo
from c4jax.agents.policy import ILLEGAL_SCORE
from c4jax.games.connect_four import minimax


@struct.dataclass
class MinimaxAgent(AgentBase):
    """Depth-``depth`` minimax with seed 002's window heuristic (:mod:`c4jax.games.connect_four.minimax`).

    ``scores(boards)``: float32[B, 7], each column's exact minimax value for the player to move
    (integers of magnitude at most 10**6, exact in float32: the heuristic sum at the leaves, +-(10**6 - ply)
    for a four, 0 for a draw), ``-inf`` for a full column. ``act(boards, key)``: int32[B], a column of
    the largest value: the lowest one when ``deterministic`` (the key is unused), else uniform among
    them. Both batched and jittable (``depth`` and ``deterministic`` are static fields).
    """

    depth: int = struct.field(pytree_node=False, default=4)
    deterministic: bool = struct.field(pytree_node=False, default=True)

    def __post_init__(self):
        if not isinstance(self.depth, int) or not 1 <= self.depth <= minimax.MAX_DEPTH:
            raise ValueError(f"minimax depth must be an int in 1..{minimax.MAX_DEPTH}, got {self.depth!r}")

    @property
    def name(self) -> str:
        return f"minimax{self.depth}:{'det' if self.deterministic else 'sto'}"

    @property
    def stochastic(self) -> bool:
        return not self.deterministic

    @property
    def costly(self) -> bool:
        return self.depth >= 5  # 7**5 leaves a decision and more: ask it only where it is to move

    def describe_scores(self, action: str = "column", actions: str = "free columns") -> ScoreInfo:
        return ScoreInfo("lookahead", f"depth-{self.depth} minimax value of each {action} with seed 002's window "
                                      "heuristic (higher is better for the agent; 1e6 = a forced four)")

    def _scores(self, boards: Array) -> Array:
        values, legal = minimax.column_values(boards, self.depth)
        return jnp.where(legal, values.astype(jnp.float32), ILLEGAL_SCORE)

    def _act(self, boards: Array, key: Array) -> Array:
        values, legal = minimax.column_values(boards, self.depth)
        if self.deterministic:
            return minimax.first_best(values, legal)
        best = minimax.best_columns(values, legal)
        return jax.random.categorical(key, jnp.where(best, 0.0, -jnp.inf)).astype(jnp.int32)
