"""c4jax: a JAX-native Connect Four reinforcement-learning lab (subpackages and their layers: design.md,
"Architecture"). ``agents``, ``load``, ``Agent``, ``env`` (the default game's environment) and ``EnvState``
are imported on first use: ``import c4jax`` alone imports neither JAX nor NumPy."""

from __future__ import annotations

import importlib

from c4jax._version import __version__

__all__ = ["Agent", "EnvState", "__version__", "agents", "env", "load"]


def __getattr__(name: str):
    """The public names that need JAX (:data:`__all__`), imported on first use and kept."""
    if name == "agents":
        value = importlib.import_module("c4jax.agents")
    elif name in ("Agent", "load"):
        value = getattr(importlib.import_module("c4jax.agents"), name)
    elif name == "env":
        from c4jax import games

        value = importlib.import_module(games.kit_of(games.DEFAULT).env)
    elif name == "EnvState":
        value = __getattr__("env").EnvState
    else:
        raise AttributeError(f"module 'c4jax' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
