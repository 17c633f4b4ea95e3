"""Players: the Agent protocol, the baselines, network agents, games between agents, the registry.

``agents.load(name)`` builds any agent from its name, ``agents.from_callable(fn)`` one of any Python
policy. Importing ``c4jax.agents`` (or :mod:`~c4jax.agents.shipped`, :mod:`~c4jax.agents.onnx_opsets`)
imports neither JAX nor NumPy: the names below and the submodules are imported on first use.
"""

from __future__ import annotations

from c4jax.io import lazy

_REGISTRY_NAMES = ("canonical_name", "checkpoint_path", "for_game", "game_of", "known_names", "load", "register")
_LAZY = {"Agent": "c4jax.agents.base", "AgentBase": "c4jax.agents.base", "from_callable": "c4jax.agents.external",
         "checkpoints_dir": "c4jax.agents.shipped", "in_game": "c4jax.agents.shipped",
         **{name: "c4jax.agents.registry" for name in _REGISTRY_NAMES}}

__all__ = ["Agent", "AgentBase", "canonical_name", "checkpoint_path", "checkpoints_dir", "for_game", "from_callable",
           "game_of", "in_game", "known_names", "load", "register"]


__getattr__, __dir__ = lazy.attributes(__name__, _LAZY, __all__, globals())
