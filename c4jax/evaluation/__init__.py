"""Evaluation: protocol matches, the round-robin tournament, decision timing, ratings, and the
perfect-play yardstick.

The public names are re-exported here: ``evaluation.match(a, b, key)``,
``evaluation.round_robin(agents, key)``, ``evaluation.time_decisions(agents, key)``,
``evaluation.optimal_move_rate(agent, key)``.
"""

from c4jax.evaluation.protocol import (
    GAMES_PER_MATCH,
    NUM_OPENINGS,
    GameRecord,
    MatchResult,
    SeatRecord,
    agent_name,
    match,
    match_from_dict,
    match_many,
    openings,
    win_rate,
)
from c4jax.evaluation.timing import REFERENCES, DecisionTime, Timing, device_description, random_boards, time_decisions
from c4jax.evaluation.tournament import Tournament, resolve_agents, round_robin
from c4jax.evaluation.yardstick import load_positions, optimal_move_rate

__all__ = [
    "GAMES_PER_MATCH", "NUM_OPENINGS", "REFERENCES", "DecisionTime", "GameRecord", "MatchResult", "SeatRecord",
    "Timing", "Tournament", "agent_name", "device_description", "match", "match_from_dict", "match_many",
    "load_positions", "openings", "optimal_move_rate", "random_boards", "resolve_agents", "round_robin",
    "time_decisions", "win_rate",
]
