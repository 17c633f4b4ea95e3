"""Connect Four's own agents under their ``agents.load`` names (its kit's ``agents``):
``1steplA`` .. ``4steplA`` (design.md §4 N-step lookahead, ``:det`` by default: centre tie-break;
``:sto``: random tie-break), ``minimax<D>`` (D = 1 .. 7: seed 002's opponent, design.md §4a, ``:det``
by default: the lowest of the best columns; ``:sto``: random among them), ``perfect`` (the exact solver, listed only when the ``solver`` extra is
installed) and ``openspiel-mcts<N>`` (OpenSpiel's C++ MCTS, listed only with the ``bench-search``
extra)."""

from __future__ import annotations

import re

from c4jax.agents import registry
from c4jax.agents.search import MAX_SIMULATIONS
from c4jax.games.connect_four import minimax, openspiel_mcts, perfect
from c4jax.games.connect_four.lookahead import NStepLookahead
from c4jax.games.connect_four.minimax_agent import MinimaxAgent


def _openspiel_mcts(m: re.Match, mode: str | None):
    n = m.group(1)
    if not (n.isascii() and n.isdigit()) or not 1 <= int(n) <= MAX_SIMULATIONS:
        raise ValueError(f"agent 'openspiel-mcts{n}': the number of simulations must be an integer in "
                         f"1..{MAX_SIMULATIONS}, as in 'openspiel-mcts1000'")
    if mode == "det":
        raise ValueError(f"agent 'openspiel-mcts{n}' has no deterministic mode (its rollouts are random; "
                         "the key of the call seeds them)")
    return openspiel_mcts.openspiel_mcts(int(n))


def _minimax(m: re.Match, mode: str | None) -> MinimaxAgent:
    d = m.group(1)
    if not (d.isascii() and d.isdigit()) or not 1 <= int(d) <= minimax.MAX_DEPTH:
        raise ValueError(f"agent 'minimax{d}': the depth must be an integer in 1..{minimax.MAX_DEPTH}, as in "
                         "'minimax4'")
    return MinimaxAgent(depth=int(d), deterministic=mode != "sto")


def register() -> None:
    """Register Connect Four's agents with :mod:`c4jax.agents.registry`."""
    for n in range(1, 5):
        registry.register(f"{n}steplA", lambda mode, n=n: NStepLookahead(n=n, deterministic=mode != "sto"))
    registry.register_pattern(r"minimax(.*)", _minimax, example="minimax4")
    registry.register("perfect", perfect.load_perfect, listed=lambda: perfect.solver_available())
    registry.register_pattern(r"openspiel-mcts(.*)", _openspiel_mcts, example="openspiel-mcts1000",
                              listed=lambda: openspiel_mcts.openspiel_available())
