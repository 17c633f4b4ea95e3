"""The compiled programs behind an agent's answers, held so that they can be let go.

JAX keeps a program compiled as long as the jitted function lives, so each :class:`Program` jits a fresh
function: dropping every reference to an agent's :class:`Programs` (the catalogue releasing it) frees its
compiled programs. Programs are shared where their jit keys are equal (the agent's pytree structure, and a
search agent's statistics for both modes); ``keep=True`` holds one for the process."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Callable

import jax

from c4jax.agents.search_agent import SearchAgent

_LOCK = threading.Lock()
_LIVE: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # (kind, agent's treedef) -> Program
_KEPT: dict[Any, Program] = {}  # programs held for the process (keep=True)


class Program:
    """One jitted function of its own (so that its compiled programs die with it): ``agent.<method>(*args)``."""

    def __init__(self, kind: str):
        def run(agent, *args):
            return getattr(agent, METHODS[kind])(*args)

        run.__name__ = run.__qualname__ = f"play_{kind}"  # the program's name in XLA's dumps and the compile cache
        self.kind = kind
        self.jitted = jax.jit(run)

    def __call__(self, agent, *args):
        return self.jitted(agent, *args)


# a program's kind -> the agent's method it runs
METHODS = {"act": "act_states", "scores": "scores_states", "stats_observed": "search_stats",
           "stats_states": "search_stats_states"}


def program(kind: str, agent, keep: bool = False) -> Program:
    """The :class:`Program` of ``kind`` (a key of :data:`METHODS`) for agents of ``agent``'s pytree
    structure: the live one if there is one, else a new one (held for the process if ``keep``)."""
    key = (kind, jax.tree.structure(agent))
    with _LOCK:
        found = _KEPT.get(key) or _LIVE.get(key)
        if found is None:
            found = _LIVE[key] = Program(kind)
        if keep:
            _KEPT[key] = found
        return found


@dataclass(frozen=True)
class Programs:
    """An agent's request path: ``act(states[1], key) -> int32[1]`` and ``numbers(inputs)``: float32[1, A]
    scores, or ``(shares, values)`` for an agent with searched values (``numbers_of``: the program's kind,
    ``"stats_observed"`` taking the states' observations; ``None``: no scores)."""

    agent: Any
    act_program: Program
    numbers_program: Program | None
    numbers_agent: Any  # the agent the numbers program takes (a search's both modes: one program)

    @property
    def numbers_of(self) -> str | None:
        return None if self.numbers_program is None else self.numbers_program.kind

    def act(self, states, key):
        return self.act_program(self.agent, states, key)

    def numbers(self, inputs):
        return self.numbers_program(self.numbers_agent, inputs)


def numbers_kind(agent, values: bool, observable: bool) -> str | None:
    """Which program gives ``agent``'s numbers (``values``: it declares searched values;
    ``observable``: its game's observations tell the state)."""
    if values:
        return "stats_observed" if observable else "stats_states"
    return "scores" if callable(getattr(agent, "scores_states", None)) else None


def programs_for(agent, values: bool, observable: bool, keep: bool = False) -> Programs:
    """``agent``'s :class:`Programs` (not compiled until first called); ``keep``: held for the process."""
    kind = numbers_kind(agent, values, observable)
    numbers_agent = agent.replace(deterministic=False) if kind and kind.startswith("stats") and isinstance(
        agent, SearchAgent) else agent
    return Programs(agent, program("act", agent, keep),
                    None if kind is None else program(kind, numbers_agent, keep), numbers_agent)


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None elsewhere (another C library, another system)."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


_TRIM = _malloc_trim()


def give_back_memory() -> None:
    """Collect freed programs and hand the freed heap back to the system (glibc's
    ``malloc_trim``, where there is one), so that the resident size shrinks."""
    gc.collect()
    if _TRIM is not None:
        _TRIM(0)
