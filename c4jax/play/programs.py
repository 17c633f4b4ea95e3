"""The compiled programs behind an agent's answers, held so that they can be let go.

An agent answers a request of the play API with two jitted programs for a batch of one state:
its move (``act_states``) and its numbers (``scores_states``, or for an agent with searched values
``search_stats`` of the game's observations, or ``search_stats_states``). A compiled program costs
the server tens of MiB of memory, a search's up to about 160 MiB; an agent's parameters under one
(docs/results/play_server.md, "Memory"). JAX keeps a program compiled as long as the jitted
function it was compiled for lives; a module-level ``jax.jit`` lives as long as the process, so
:func:`programs_for` wraps fresh functions instead: a :class:`Programs` holds an agent's, and
dropping every reference to it (:meth:`c4jax.play.catalogue.Catalogue` releasing the least recently
used agent beyond its bound) frees its compiled programs, once a request still using them is done.

Programs are shared where their jit keys are equal: by every entry of the same agent (the key is
the agent's pytree structure, its settings included: two agents with equal settings share), and, for
a search agent's statistics, by both of its modes (its search ignores the mode, as
:meth:`c4jax.agents.search_agent.SearchAgent.search_stats` says). ``keep=True`` holds a program for
the whole process, as a module-level ``jax.jit`` would (what a catalogue without a bound asks for:
a later catalogue with the same agents compiles nothing).
"""

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
    """One jitted function of its own (so that its compiled programs die with it): ``fn(agent, *args)``."""

    def __init__(self, kind: str, body: Callable):
        def run(agent, *args):
            return body(agent, *args)

        run.__name__ = run.__qualname__ = f"play_{kind}"  # the program's name in XLA's dumps and the compile cache
        self.kind = kind
        self.jitted = jax.jit(run)

    def __call__(self, agent, *args):
        return self.jitted(agent, *args)


def _act(agent, states, key):
    return agent.act_states(states, key)


def _scores(agent, states):
    return agent.scores_states(states)


def _stats_observed(agent, observations):
    return agent.search_stats(observations)


def _stats_states(agent, states):
    return agent.search_stats_states(states)


BODIES = {"act": _act, "scores": _scores, "stats_observed": _stats_observed, "stats_states": _stats_states}


def program(kind: str, agent, keep: bool = False) -> Program:
    """The :class:`Program` of ``kind`` (a key of :data:`BODIES`) for agents of ``agent``'s pytree
    structure: the live one if there is one, else a new one (held for the process if ``keep``)."""
    key = (kind, jax.tree.structure(agent))
    with _LOCK:
        found = _KEPT.get(key) or _LIVE.get(key)
        if found is None:
            found = _LIVE[key] = Program(kind, BODIES[kind])
        if keep:
            _KEPT[key] = found
        return found


@dataclass(frozen=True)
class Programs:
    """An agent's request path: ``act(states[1], key) -> int32[1]`` and ``numbers(states[1])``, the
    float32[1, A] scores, or ``(shares, values)`` float32[1, A] each for an agent with searched
    values (``numbers_of``: ``"scores"``, ``"stats_observed"``, whose argument is the states'
    observations, ``"stats_states"`` or ``None``: no scores)."""

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
    """Which program gives ``agent``'s numbers: ``values`` (it declares searched values) and
    ``observable`` (its game's observations tell the state) as :mod:`c4jax.play.answers` reads them."""
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


def live_programs() -> int:
    """How many :class:`Program` objects are alive (held by an agent's :class:`Programs` or kept)."""
    with _LOCK:
        return len(set(map(id, _LIVE.values())) | set(map(id, _KEPT.values())))


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None elsewhere (another C library, another system)."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


_TRIM = _malloc_trim()


def give_back_memory() -> None:
    """After programs were let go: collect them (``gc.collect``, for any reference cycle) and hand
    the freed heap back to the system (glibc's ``malloc_trim``, where there is one); the C library
    keeps freed memory for later otherwise, and the process' resident size (what ``top`` shows) stays
    where it was (measured: docs/results/play_server.md, "Memory")."""
    gc.collect()
    if _TRIM is not None:
        _TRIM(0)
