"""Evaluation: protocol matches, the round-robin tournament, decision timing, ratings, and the
perfect-play yardstick.

The public names below and the submodules (``evaluation.ratings``) are imported on first use:
importing ``c4jax.evaluation`` (or :mod:`c4jax.evaluation.field`) imports neither JAX nor NumPy.
"""

from __future__ import annotations

from c4jax.io import lazy

_FROM = {
    "c4jax.evaluation.protocol": ("GAMES_PER_MATCH", "NUM_OPENINGS", "GameRecord", "MatchResult", "SeatRecord",
                                  "agent_name", "match", "match_from_dict", "match_many", "openings", "win_rate"),
    "c4jax.evaluation.timing": ("DecisionTime", "Timing", "device_description", "random_boards",
                                "time_decisions"),
    "c4jax.evaluation.tournament": ("Tournament", "resolve_agents", "round_robin"),
    "c4jax.evaluation.yardstick": ("load_positions", "optimal_move_rate"),
}
_LAZY = {name: module for module, names in _FROM.items() for name in names}

__all__ = [
    "GAMES_PER_MATCH", "NUM_OPENINGS", "DecisionTime", "GameRecord", "MatchResult", "SeatRecord",
    "Timing", "Tournament", "agent_name", "device_description", "match", "match_from_dict", "match_many",
    "load_positions", "openings", "optimal_move_rate", "random_boards", "resolve_agents", "round_robin",
    "time_decisions", "win_rate",
]


__getattr__, __dir__ = lazy.attributes(__name__, _LAZY, __all__, globals())
