"""c4jax: a JAX-native Connect Four reinforcement-learning lab.

Subpackages, each importing only the ones before it (design.md, "Architecture"): ``games``, ``nets``,
``io``, ``agents``, ``evaluation``, ``learning``, ``play`` (and ``cli``, the commands).

``c4jax.agents``, ``c4jax.load`` / ``c4jax.Agent`` (its ``load`` and ``Agent``) and ``c4jax.env``, the
environment of the default game (:data:`c4jax.games.DEFAULT`, Connect Four: its kit's ``env``), with its
``c4jax.EnvState``, are imported on first use: ``import c4jax`` alone imports neither JAX nor NumPy.
"""

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
