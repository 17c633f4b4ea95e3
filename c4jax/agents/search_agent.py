"""The agents that play a search (:mod:`c4jax.agents.search`): :class:`SearchAgent`, the entry
points of any agent whose move is its search's, and :class:`MCTSAgent`, pure MCTS
(``agents.load("mcts<N>")``, ``"<game>/mcts<N>"``)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct
from jax import Array

from c4jax.agents.base import (AgentBase, ScoreInfo, in_game_name, observation_legal,
                               searched_value_label, states_of, unfinished)
from c4jax.agents.policy import ILLEGAL_SCORE
from c4jax.agents.search import (MAX_SIMULATIONS, PB_C_INIT, SOLVE, RolloutEvaluator, SearchOutput, board_keys,
                                 default_uct_c, run, select_action, typed_keys)
from c4jax.games import base as games


def _traced(*xs) -> bool:
    return any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves(xs))


class SearchAgent(AgentBase):
    """The entry points (``act``, ``scores``, ``act_states``, ``scores_states``, search statistics) of an
    agent that plays its ``search(states, keys)``."""

    def _check_simulations(self):
        n = self.num_simulations
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_SIMULATIONS:
            raise ValueError(f"MCTS needs 1..{MAX_SIMULATIONS} simulations per move, got {n!r}")

    @property
    def stochastic(self) -> bool:
        return not self.deterministic

    @property
    def costly(self) -> bool:
        return True

    @property
    def keyed(self) -> bool:
        return True  # random playouts (pure MCTS, a guided one): even the most visited move depends on the key

    def describe_scores(self, action: str = "column", actions: str = "free columns") -> ScoreInfo:
        return ScoreInfo("search", f"the search's share of each {action}"
                                   + searched_value_label(action, "its root Q-values"), True)

    def _observed_states(self, boards: Array):
        """States of observations [B] (``TypeError`` where observations do not tell the states)."""
        return states_of(self.game, boards)

    def act_states(self, states, key) -> Array:
        """int32[B]: an action for each of the states [B] (none finished), searched with root keys
        ``split(key, B)`` (typed or legacy key). Jitted unless traced."""
        if _traced(states, key):
            return self._act_states(states, key)
        return _jit_act_states(self, states, key)

    def scores_states(self, states) -> Array:
        """float32[B, A]: the root visit shares of a search keyed by each position
        (:func:`board_keys`), illegal actions ``-inf``; jitted as ``act_states``."""
        if _traced(states):
            return self._scores_states(states)
        return _jit_scores_states(self, states)

    def _act_states(self, states, key) -> Array:
        keys = jax.random.split(typed_keys(key), states.legal_action_mask.shape[0])
        out = self.search(states, keys)
        return select_action(out, keys, states.legal_action_mask, 0.0 if self.deterministic else 1.0)

    def _scores_states(self, states) -> Array:
        out = self.search(states, board_keys(states, game=self.game))
        return jnp.where(states.legal_action_mask, out.visit_probs, ILLEGAL_SCORE)

    def _scores(self, boards: Array) -> Array:
        states = self._observed_states(boards)
        out = self.search(states, board_keys(states, game=self.game))
        return jnp.where(observation_legal(self.game, boards), out.visit_probs, ILLEGAL_SCORE)

    def _act(self, boards: Array, key: Array) -> Array:
        return self._act_states(self._observed_states(boards), key)

    def search_stats(self, boards) -> tuple[Array, Array]:
        """``(shares, values)``, float32[B, A] each, of the search behind ``scores`` (``shares ==
        scores(boards)``; illegal ``-inf``) and each action's root Q-value for the player to move
        (-1 .. 1; 0 where not visited; illegal NaN). Jitted; validated as ``scores``."""
        boards = boards if isinstance(boards, jax.core.Tracer) else unfinished(boards, self.game)
        return _jit_search_stats(self.replace(deterministic=False), boards)


    def search_stats_states(self, states) -> tuple[Array, Array]:
        """:meth:`search_stats` of states [B] of the agent's game, none finished. Jitted unless traced."""
        agent = self.replace(deterministic=False)
        if _traced(states):
            return _search_stats_states(agent, states)
        return _jit_search_stats_states(agent, states)


def _search_stats_states(agent: SearchAgent, states) -> tuple[Array, Array]:
    out, legal = agent.search(states, board_keys(states, game=agent.game)), states.legal_action_mask
    return jnp.where(legal, out.visit_probs, ILLEGAL_SCORE), jnp.where(legal, out.qvalues, jnp.nan)


_jit_search_stats_states = jax.jit(_search_stats_states)


@jax.jit
def _jit_act_states(agent: SearchAgent, states, key) -> Array:
    return agent._act_states(states, key)


@jax.jit
def _jit_scores_states(agent: SearchAgent, states) -> Array:
    return agent._scores_states(states)


@jax.jit
def _jit_search_stats(agent: SearchAgent, boards: Array) -> tuple[Array, Array]:
    states = agent._observed_states(boards)
    out, legal = agent.search(states, board_keys(states, game=agent.game)), observation_legal(agent.game, boards)
    return jnp.where(legal, out.visit_probs, ILLEGAL_SCORE), jnp.where(legal, out.qvalues, jnp.nan)


@struct.dataclass
class MCTSAgent(SearchAgent):
    """Pure MCTS on ``game``: uniform prior, random-playout values, UCT with c = ``uct_c`` (None:
    :func:`default_uct_c`), ``num_simulations`` per move; ``solve`` backs up proven values.

    ``act``: sampled from the root visit counts (``:sto``) or the most visited (``:det``).
    ``scores``: the root visit shares of a search keyed by the position, illegal ``-inf``.
    ``ValueError`` for simulations outside 1..MAX_SIMULATIONS or a non-positive ``uct_c``.
    """

    num_simulations: int = struct.field(pytree_node=False, default=1000)
    deterministic: bool = struct.field(pytree_node=False, default=False)
    rule: str = struct.field(pytree_node=False, default="uct")
    pb_c_init: float = struct.field(pytree_node=False, default=PB_C_INIT)
    uct_c: float | None = struct.field(pytree_node=False, default=None)  # None: default_uct_c(game)
    game: Any = struct.field(pytree_node=False, kw_only=True)
    solve: bool = struct.field(pytree_node=False, default=SOLVE)

    def __post_init__(self):
        self._check_simulations()
        games.check_game(self.game)
        if self.uct_c is not None and not (isinstance(self.uct_c, (int, float)) and 0 < self.uct_c < float("inf")):
            raise ValueError(f"pure MCTS needs a positive UCT constant c, got {self.uct_c!r}")

    @property
    def c(self) -> float:
        """The UCT constant the search uses."""
        return default_uct_c(self.game) if self.uct_c is None else float(self.uct_c)

    @property
    def name(self) -> str:
        """``[<game>/]mcts<N>[solve|nosolve][-c<C>]:<mode>``, as ``agents.load`` reads it."""
        flag = "" if self.solve == SOLVE else ("solve" if self.solve else "nosolve")
        c = "" if self.c == default_uct_c(self.game) else f"-c{self.c:g}"
        return in_game_name(f"mcts{self.num_simulations}{flag}{c}:{'det' if self.deterministic else 'sto'}", self.game)

    plays_any_game = True  # no learned parameters: agents.for_game switches its game

    def describe_scores(self, action: str = "column", actions: str = "free columns") -> ScoreInfo:
        how = searched_value_label(action, "the mean result of the playouts through that move")
        return ScoreInfo("search", f"visit share of each {action} in a {self.num_simulations}-simulation pure MCTS "
                                   f"(random playouts){how}", True)

    def search(self, states, keys: Array) -> SearchOutput:
        """The agent's search from states [B] of its game with root keys [B] (typed or legacy)."""
        return run(RolloutEvaluator(self.game), None, states, keys, self.num_simulations, game=self.game,
                   rule=self.rule, pb_c_init=self.pb_c_init, uct_c=self.c, solve=self.solve)
