"""Players: the Agent protocol, the baselines, network agents, games between agents, the registry.

``c4jax.agents.load(name)`` builds any agent from its name (see :mod:`c4jax.agents.registry`);
``c4jax.agents.from_callable(fn)`` makes one of any Python policy (:mod:`c4jax.agents.external`).

Importing ``c4jax.agents`` imports neither JAX nor NumPy: the public names below, and the submodules
as attributes (``agents.arena``), are imported on first use. :mod:`c4jax.agents.shipped` (the shipped
agents' folder and names) and :mod:`c4jax.agents.onnx_opsets` import neither either.
"""

from __future__ import annotations

from c4jax.io import lazy

_REGISTRY_NAMES = ("canonical_name", "checkpoint_path", "checkpoints_dir", "for_game", "game_of", "in_game",
                   "known_names", "load", "register")
_LAZY = {"Agent": "c4jax.agents.base", "AgentBase": "c4jax.agents.base", "from_callable": "c4jax.agents.external",
         **{name: "c4jax.agents.registry" for name in _REGISTRY_NAMES}}

__all__ = ["Agent", "AgentBase", "canonical_name", "checkpoint_path", "checkpoints_dir", "for_game", "from_callable",
           "game_of", "in_game", "known_names", "load", "register"]


__getattr__, __dir__ = lazy.attributes(__name__, _LAZY, __all__, globals())
