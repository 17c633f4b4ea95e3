"""c4jax: a JAX-native Connect Four reinforcement-learning lab.

Imported here: ``env`` (the jitted game), ``bitboard`` (its internal board),
``baselines`` (random and N-step lookahead players), ``agents`` (the Agent protocol
and ``agents.load``), ``selfplay`` (batched games between agents), ``validation``
(checks for boards crossing the public API).

Imported on use (they pull in flax/optax/orbax/matplotlib): ``networks`` (CNET128),
``policies`` (masking, NetworkAgent), ``data`` (the supervised dataset),
``checkpoint`` (Orbax + metadata), ``buffer`` (replay buffer), ``losses``,
``trainers`` (supervised, dqn, ppo, reinforce and the shared RL loop), ``evaluate``
(match protocol, round robin, timing), ``ratings`` (Bradley-Terry), ``runlog``
(metrics files and plots), ``play`` (the browser UI), ``reference`` (a plain-Python
lookahead, the yardstick of Table 5.1).
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
