"""Players: the Agent protocol, the baselines, network agents, games between agents, the registry.

``c4jax.agents.load(name)`` builds any agent from its name (see :mod:`c4jax.agents.registry`);
``c4jax.agents.from_callable(fn)`` makes one of any Python policy (:mod:`c4jax.agents.external`).
"""

from c4jax.agents.base import Agent, AgentBase
from c4jax.agents.external import from_callable
from c4jax.agents.registry import (canonical_name, checkpoint_path, checkpoints_dir, for_game, game_of, in_game,
                                   known_names, load, register)

__all__ = ["Agent", "AgentBase", "canonical_name", "checkpoint_path", "checkpoints_dir", "for_game", "from_callable",
           "game_of", "in_game", "known_names", "load", "register"]
