"""c4jax: a JAX-native Connect Four reinforcement-learning lab.

Modules: ``env`` (the jitted game), ``bitboard`` (its internal board), ``baselines``
(random and N-step lookahead players), ``agents`` (the Agent protocol and
``agents.load``), ``selfplay`` (batched games between agents), ``validation``
(checks for boards crossing the public API).
"""

from c4jax import agents, baselines, bitboard, env, selfplay, validation
from c4jax.agents import Agent, load
from c4jax.env import EnvState

__version__ = "0.1.0"

__all__ = sorted(
    [
        "Agent",
        "EnvState",
        "agents",
        "baselines",
        "bitboard",
        "env",
        "load",
        "selfplay",
        "validation",
    ]
)
