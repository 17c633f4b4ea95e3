"""Search at play time for any network agent (``agents.load("ppo@200")``): the search of
:func:`c4jax.agents.search.run` with PUCT, the network's move preferences as its prior and the
result of one random playout as each node's value (the thesis' networks have no value head trained
for every algorithm). Any agent with ``prior_logits_states(states, q_temperature) -> float32[B, A]``
(:class:`c4jax.agents.network.NetworkAgent`) can guide it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flax import struct
from jax import Array

from c4jax.agents import search as mcts
from c4jax.agents.base import ScoreInfo, searched_value_label
from c4jax.agents.search_agent import SearchAgent
from c4jax.games import base as games

# tau of the prior softmax(Q / tau) of a Q network (docs/results/guided_search.md)
Q_TEMPERATURE = 0.25


@dataclass(frozen=True)
class GuidedEvaluator:
    """A :data:`c4jax.agents.search.LeafEvaluator` whose ``params`` is a network agent: its
    ``prior_logits_states``, and one random playout's value. Hashable (static under ``jit``)."""

    game: Any
    q_temperature: float = Q_TEMPERATURE

    def __call__(self, network, keys: Array, states) -> tuple[Array, Array]:
        logits = network.prior_logits_states(states, self.q_temperature)
        _, value = mcts.RolloutEvaluator(self.game)(None, keys, states)
        return logits, value


@struct.dataclass
class GuidedSearchAgent(SearchAgent):
    """``network`` (any agent with ``prior_logits_states``) playing through ``num_simulations`` of
    the guided search: the most visited action (``:det``) or one sampled from the root visits
    (``:sto``); ``scores``: the root visit shares of a search keyed by the position (illegal ``-inf``).
    ``TypeError`` / ``ValueError`` for a network that cannot guide it or a non-positive ``q_temperature``.
    """

    network: Any
    num_simulations: int = struct.field(pytree_node=False, default=200)
    deterministic: bool = struct.field(pytree_node=False, default=True)
    q_temperature: float = struct.field(pytree_node=False, default=Q_TEMPERATURE)
    pb_c_init: float = struct.field(pytree_node=False, default=mcts.PB_C_INIT)
    game: Any = struct.field(pytree_node=False, kw_only=True)
    solve: bool = struct.field(pytree_node=False, default=False)  # proven values (MCTS-Solver)

    def __post_init__(self):
        self._check_simulations()
        games.check_game(self.game)
        if not callable(getattr(self.network, "prior_logits_states", None)):
            raise TypeError(f"{type(self.network).__name__} cannot guide a search: it has no "
                            "prior_logits_states(states, q_temperature)")
        network_game = self.network.game
        if network_game.id != self.game.id:
            raise ValueError(f"the network plays {network_game.id}, the search {self.game.id}")
        if not self.q_temperature > 0:
            raise ValueError(f"q_temperature must be > 0, got {self.q_temperature!r}")

    @property
    def name(self) -> str:
        label = getattr(self.network, "label", type(self.network).__name__)
        solve = "solve" if self.solve else ""
        return f"{label}@{self.num_simulations}{solve}:{'det' if self.deterministic else 'sto'}"

    def describe_scores(self, action: str = "column", actions: str = "free columns") -> ScoreInfo:
        prior = "Q-values" if getattr(self.network, "output", "policy") == "q" else "policy"
        how = searched_value_label(action, "the mean result of the playouts through that move")
        return ScoreInfo("search", f"visit share of each {action} in a {self.num_simulations}-simulation search "
                                   f"guided by the network's {prior} (random playouts){how}", True)

    def search(self, states, keys: Array) -> mcts.SearchOutput:
        """The agent's search from states [B] of its game with root keys [B] (typed or legacy)."""
        return mcts.run(GuidedEvaluator(self.game, self.q_temperature), self.network, states, keys,
                        self.num_simulations, game=self.game, rule="puct", pb_c_init=self.pb_c_init,
                        solve=self.solve)


def guided(network, num_simulations: int, deterministic: bool = True, **settings) -> GuidedSearchAgent:
    """``network`` searching ``num_simulations`` per move on the game it plays (``settings``:
    ``q_temperature``, ``pb_c_init``, ``solve``)."""
    return GuidedSearchAgent(network=network, num_simulations=num_simulations, deterministic=deterministic,
                             game=network.game, **settings)
