"""The Agent protocol and the registry behind ``agents.load(name)``.

An agent plays the ``1`` stones of public boards (SPEC §1): ``int8[B, 6, 7]``,
row 0 on top. Every agent is a ``flax.struct`` dataclass: its arrays (network
parameters) are pytree leaves and its settings are static, so an agent can be
passed as an argument to a jitted function (never closed over), and ``scores``
and ``act`` are jittable and batched.

Names follow ``<agent>[:sto|:det]`` everywhere (CLI, tournament, UI), case
insensitive: ``random``, ``1steplA`` .. ``4steplA`` (``:det`` by default: centre
tie-break; ``:sto``: random tie-break), the trained agents shipped in
``checkpoints/`` (``supervised``: greedy by default, ``supervised:sto`` samples),
or the path of any checkpoint directory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Protocol, runtime_checkable

import jax
from jax import Array

from c4jax.validation import check_boards


@runtime_checkable
class Agent(Protocol):
    name: str  # e.g. "1steplA:det"
    stochastic: bool  # act() samples (depends on the key)

    def scores(self, boards: Array) -> Array:
        """float32[B, 7]: what the agent thinks of each column (illegal: -inf)."""

    def act(self, boards: Array, key: Array) -> Array:
        """int32[B]: a legal column for each board."""


def _is_traced(x) -> bool:
    return isinstance(x, jax.core.Tracer)


@jax.jit
def _jit_scores(agent, boards):
    return agent._scores(boards)


@jax.jit
def _jit_act(agent, boards, key):
    return agent._act(boards, key)


class AgentBase:
    """Shared public entry points; subclasses implement ``_scores`` and ``_act`` (pure, batched).

    Called with concrete arrays (numpy, lists, jax arrays outside ``jit``), boards are
    validated (``ValueError`` on a wrong shape or dtype, values outside {-1, 0, 1},
    impossible or finished positions) and the call runs jitted; called on tracers
    inside a user's ``jit`` the pure implementation is inlined.
    """

    def scores(self, boards) -> Array:
        if _is_traced(boards):
            return self._scores(boards)
        return _jit_scores(self, check_boards(boards, batched=True, allow_finished=False))

    def act(self, boards, key) -> Array:
        if _is_traced(boards) or _is_traced(key):
            return self._act(boards, key)
        return _jit_act(self, check_boards(boards, batched=True, allow_finished=False), key)

    def _scores(self, boards: Array) -> Array:  # pragma: no cover - abstract
        raise NotImplementedError

    def _act(self, boards: Array, key: Array) -> Array:  # pragma: no cover - abstract
        raise NotImplementedError


# name (lower case) -> factory(mode) where mode is "sto", "det" or None (the agent's default).
_REGISTRY: dict[str, Callable[[str | None], Agent]] = {}


def checkpoints_dir() -> Path:
    """Where shipped agents live: ``$C4JAX_CHECKPOINTS`` or the repository's ``checkpoints/``."""
    return Path(os.environ.get("C4JAX_CHECKPOINTS", Path(__file__).resolve().parent.parent / "checkpoints"))


def register(name: str, factory: Callable[[str | None], Agent]) -> None:
    """Make ``load(name[:sto|:det])`` build an agent with ``factory(mode)``."""
    _REGISTRY[name.lower()] = factory


def _shipped() -> list[str]:
    root = checkpoints_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "metadata.json").is_file())


def known_names() -> list[str]:
    """Built-in agents and the trained agents shipped in :func:`checkpoints_dir`."""
    _ensure_builtins()
    return sorted(set(_REGISTRY) | set(_shipped()))


def _ensure_builtins() -> None:
    import c4jax.baselines  # noqa: F401  (registers random and the lookahead players)


def load(name: str) -> Agent:
    """Build an agent from ``<agent>[:sto|:det]`` (case insensitive) or ``<checkpoint dir>[:sto|:det]``.

    ``<agent>`` is a built-in (``random``, ``1steplA`` .. ``4steplA``) or a trained agent
    shipped in ``checkpoints/`` (``supervised``, ...); anything else is read as the path
    of a checkpoint directory. Without a suffix an agent plays its default mode.
    """
    _ensure_builtins()
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"agent name must be a non-empty string, got {name!r}")
    base, sep, mode = name.strip().rpartition(":")
    if not sep:
        base, mode = mode, ""
    mode_l = mode.lower() if sep else None
    if mode_l not in (None, "sto", "det"):
        if Path(name).exists():  # a checkpoint path that happens to contain ':'
            base, mode_l = name, None
        else:
            raise ValueError(f"agent {name!r}: the suffix must be ':sto' or ':det', got ':{mode}'")
    factory = _REGISTRY.get(base.lower())
    if factory is not None:
        return factory(mode_l)
    from c4jax.policies import agent_from_checkpoint

    is_path = "/" in base or os.sep in base or base.startswith(".")
    shipped = checkpoints_dir() / base.lower()
    if not is_path and (shipped / "metadata.json").is_file():
        return agent_from_checkpoint(shipped, mode_l, label=base.lower())
    if is_path or Path(base).exists():
        return agent_from_checkpoint(base, mode_l, label=base)
    raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(known_names())} "
                     "(or give the path of a checkpoint directory)")
