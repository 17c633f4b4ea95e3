"""Players: the Agent protocol, the baselines, network agents, games between agents, the registry.

``c4jax.agents.load(name)`` builds any agent from its name (see :mod:`c4jax.agents.registry`).
"""

from c4jax.agents.base import Agent, AgentBase
from c4jax.agents.registry import checkpoints_dir, known_names, load, register

__all__ = ["Agent", "AgentBase", "checkpoints_dir", "known_names", "load", "register"]
