"""Players: the Agent protocol, the baselines, network agents, games between agents, the registry.

``c4jax.agents.load(name)`` builds any agent from its name (see :mod:`c4jax.agents.registry`);
``c4jax.agents.from_callable(fn)`` makes one of any Python policy (:mod:`c4jax.agents.external`).

Importing ``c4jax.agents`` imports neither JAX nor NumPy: the public names below, and the submodules
as attributes (``agents.arena``), are imported on first use. :mod:`c4jax.agents.shipped` (the shipped
agents' folder and names) and :mod:`c4jax.agents.onnx_opsets` import neither either.
"""

from __future__ import annotations

import importlib
import importlib.util

_REGISTRY_NAMES = ("canonical_name", "checkpoint_path", "checkpoints_dir", "for_game", "game_of", "in_game",
                   "known_names", "load", "register")
_LAZY = {"Agent": "c4jax.agents.base", "AgentBase": "c4jax.agents.base", "from_callable": "c4jax.agents.external",
         **{name: "c4jax.agents.registry" for name in _REGISTRY_NAMES}}

__all__ = ["Agent", "AgentBase", "canonical_name", "checkpoint_path", "checkpoints_dir", "for_game", "from_callable",
           "game_of", "in_game", "known_names", "load", "register"]


def __getattr__(name: str):
    """A public name (:data:`__all__`) or a submodule, imported on first use and kept."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
