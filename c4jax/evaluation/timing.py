"""Decision timing (thesis Table 5.1): seconds per decision at batch 1 and batched.

Agents of a game with the board API and random starts (:func:`on_boards`) decide with
``agent.act(boards, key)`` on random start boards; others with ``agent.act_states(states, key)`` on
positions of random legal play. The kit's ``plain_lookahead`` gives the plain-Python rows.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import platform
import statistics
import time
from dataclasses import dataclass
from typing import Sequence

import jax
import numpy as np
from jax import Array

from c4jax import games
from c4jax.agents import registry, shipped
from c4jax.evaluation.protocol import agent_name
from c4jax.evaluation.tournament import resolve_agents
from c4jax.games.base import random_positions
from c4jax.games.kit import resolve
from c4jax.io.progress import bar as progress_bar
from c4jax.io.tables import Table


@jax.jit
def _decide(agent, boards: Array, key: Array) -> Array:
    return agent.act(boards, key)


@jax.jit
def _decide_states(agent, states, key: Array) -> Array:
    return agent.act_states(states, key)


def on_boards(game_id: str) -> bool:
    """Whether the agents of ``game_id`` are timed with ``act`` on random start boards (module docstring)."""
    kit = games.kit_of(game_id)
    return kit.playable is not None and kit.random_start is not None


@functools.partial(jax.jit, static_argnums=(1, 2))
def random_boards(key: Array, batch: int, game) -> Array:
    """``[batch, *observation_shape]``: random start positions of ``game`` (a game object whose kit
    has ``random_start``), from the mover's point of view."""
    states = jax.vmap(games.kit_of(game).random_start)(jax.random.split(key, batch))
    return jax.vmap(game.observe)(states)


@dataclass(frozen=True)
class DecisionTime:
    """Measured wall-clock seconds of single jitted ``act`` calls of one agent."""

    agent: str
    batch: int
    single: tuple[float, ...]  # seconds per call on one board (batch 1)
    batched: tuple[float, ...]  # seconds per call on ``batch`` boards

    @property
    def single_s(self) -> float:
        """Median seconds per decision at batch 1."""
        return statistics.median(self.single)

    @property
    def batched_call_s(self) -> float:
        """Median seconds per call at ``batch``."""
        return statistics.median(self.batched)

    @property
    def batched_s(self) -> float:
        """Median seconds per decision at ``batch`` (call time / batch)."""
        return self.batched_call_s / self.batch

    def to_dict(self) -> dict:
        return {"agent": self.agent, "batch": self.batch, "single_s": self.single_s,
                "batched_call_s": self.batched_call_s, "batched_s": self.batched_s,
                "single_samples": list(self.single), "batched_samples": list(self.batched)}


@dataclass(frozen=True)
class Timing:
    """Table 5.1: seconds per decision of every agent, and speed-ups over the references."""

    entries: tuple[DecisionTime, ...]
    batch: int
    references: tuple[str, ...]  # labels of the reference entries (1StepLA, 2StepLA)
    added: tuple[str, ...] = ()  # references timed although not in the agent list
    device: str = ""
    python_references: tuple[str, ...] = ()  # labels of plain-Python lookahead entries (GameKit.plain_lookahead)
    budget_s: float = 0.0  # the batched call's time budget that sized expensive agents' batches (0: none)
    game: str = dataclasses.field(kw_only=True)  # the game whose positions the agents decided on

    def entry(self, agent: str) -> DecisionTime:
        for e in self.entries:
            if e.agent == agent:
                return e
        raise KeyError(f"no timing for {agent!r}; timed: {[e.agent for e in self.entries]}")

    def speedup(self, agent: str, reference: str, batched: bool = False) -> float:
        """``time(reference) / time(agent)`` per decision: > 1 when ``agent`` decides faster."""
        a, r = self.entry(agent), self.entry(reference)
        return r.batched_s / a.batched_s if batched else r.single_s / a.single_s

    @property
    def one_batch(self) -> bool:
        """Every jitted agent was timed at the same batch size (``batch``)."""
        return all(e.batch == self.batch for e in self.entries if e.agent not in self.python_references)

    def table(self) -> Table:
        refs = self.references
        big = f"batch {self.batch}" if self.one_batch else "batched"
        header = ("agent", "s/decision (batch 1)", f"s/decision ({big})", f"decisions/s ({big})")
        if not self.one_batch:
            header += ("batch",)
        header += tuple(f"{r} time / agent time (batch 1)" for r in refs)
        header += tuple(f"{r} time / agent time ({big})" for r in refs)
        py = self.python_references
        header += tuple(f"{r} time / agent time (batch 1)" for r in py)
        rows = []
        for e in self.entries:
            label = e.agent + (" (reference)" if e.agent in self.added else "")
            rows.append((label, e.single_s, e.batched_s, 1.0 / e.batched_s)
                        + (() if self.one_batch else (e.batch,))
                        + tuple(self.speedup(e.agent, r) for r in refs)
                        + tuple(self.speedup(e.agent, r, batched=True) for r in refs)
                        + tuple(self.speedup(e.agent, r) for r in py))
        py_note = ""
        if py:
            n_py = self.entry(py[0])
            py_note = (f" The plain-Python rows are `{games.kit_of(self.game).plain_lookahead.replace(':', '.')}` (nested lists and recursion, one board "
                       f"per call, the thesis' kind of implementation; the same moves as the jitted lookahead): "
                       f"median of {len(n_py.single)} calls at batch 1, and a Python loop over {n_py.batch} boards "
                       f"in the batched column.")
        if on_boards(self.game):
            call, positions, unit = "`act`", "design.md §3 random non-terminal boards", "boards"
            thesis = (". 'X time / agent time' > 1: the agent decides faster than X (thesis, batch 1 on a laptop: "
                      "trained agents ≈20× faster than 1StepLA and ≈70× faster than 2StepLA).")
        else:
            call, positions, unit = ("`act_states`", f"random unfinished {self.game} positions (random legal play)",
                                     "positions")
            thesis = "." + (" 'X time / agent time' > 1: the agent decides faster than X." if refs else "")
        return Table(
            name="table_5_1_timing",
            title="Table 5.1: time to choose an action",
            header=header,
            rows=tuple(rows),
            formats=("", ".2e", ".2e", ",.0f") + (() if self.one_batch else ("d",)) + (".3g",) * (2 * len(refs) + len(py)),
            note=(f"One jitted {call} call as a caller makes it (dispatch included), compile excluded, median of "
                  f"{len(self.entries[0].single) if self.entries else 0} calls at batch 1 and "
                  f"{len(self.entries[0].batched) if self.entries else 0} at batch {self.batch} (agents "
                  f"interleaved), on {positions}"
                  + ("" if self.one_batch else
                     f"; a search whose call on {self.batch} {unit} would take more than {self.budget_s:g} s is "
                     "timed at the largest power-of-two batch that fits (its 'batch' column), estimated from its "
                     "batch-1 time") + (f", {self.device}" if self.device else "")
                  + thesis + py_note),
        )

    def to_dict(self) -> dict:
        return {"game": self.game, "batch": self.batch, "budget_s": self.budget_s, "references": list(self.references),
                "added": list(self.added), "python_references": list(self.python_references), "device": self.device,
                "entries": [e.to_dict() for e in self.entries], "table": self.table().to_dict()}


def time_decisions(agent_list: Sequence, key: Array, *, batch: int = 4096, repeats: int = 101,
                   batched_repeats: int = 5, names: Sequence[str] | None = None,
                   references: Sequence[str] | None = None, python_lookahead: Sequence[int] = (1, 2),
                   python_boards: int = 32, budget_s: float = 0.0, progress: bool = False) -> Timing:
    """Measure Table 5.1: median seconds per decision at batch 1 and at ``batch``.

    Jitted calls, compilation excluded: ``repeats`` on single positions and ``batched_repeats`` on
    ``batch`` positions, the agents interleaved call by call. The ``references`` (None: the game's
    kit's ``baselines``, the agents Table 5.1's speed-ups are relative to) are timed too.

    ``python_lookahead``: depths N of the kit's ``plain_lookahead`` timed as extra rows
    ``"<N>steplA (plain Python)"`` (``repeats`` single calls, one loop over ``python_boards`` boards).
    ``budget_s`` > 0: a ``costly`` agent whose batch-1 time times ``batch`` exceeds it is timed at
    the largest power of two (>= 16) within it; its entry records its batch.

    ``ValueError`` for no agents, agents of different games or a negative ``budget_s``.
    """
    if budget_s < 0:
        raise ValueError(f"budget_s must be >= 0, got {budget_s}")

    loaded, labels = resolve_agents(agent_list, names)
    played = {registry.game_of(a) for a in loaded}
    if len(played) > 1:
        raise ValueError(f"the agents play different games ({', '.join(sorted(played))}); time one game's agents")
    if not played:
        raise ValueError("no agents to time")
    game_id = played.pop()
    if references is None:
        references = tuple(shipped.in_game(r, game_id) for r in games.kit_of(game_id).baselines)
    ref_labels, added = [], []
    for ref in references:
        ref_agent = registry.load(ref)
        if registry.game_of(ref_agent) != game_id:
            raise ValueError(f"reference {ref!r} plays {registry.game_of(ref_agent)}, not {game_id}")
        label = agent_name(ref_agent)
        if label not in labels:
            loaded.append(ref_agent)
            labels.append(label)
            added.append(label)
        ref_labels.append(label)
    plain = games.kit_of(game_id).plain_lookahead
    if plain is None or not on_boards(game_id):
        python_lookahead = ()
    else:
        plain_act = resolve(plain)
    board_key, act_key = jax.random.split(key)
    if on_boards(game_id):
        decide, boards = _decide, random_boards(board_key, max(batch, 16), games.make(game_id))
    else:
        decide, boards = _decide_states, random_positions(games.make(game_id), board_key, max(batch, 16))

    def take(lo: int, hi: int):
        return jax.block_until_ready(jax.tree.map(lambda x: x[lo:hi], boards))

    singles = [take(k, k + 1) for k in range(16)]
    sizes = []
    loaded = [_unlabelled(a) for a in loaded]
    for a in loaded:  # compile and warm up both shapes; size the batch to a search's cost
        decide(a, singles[0], act_key).block_until_ready()
        decide(a, singles[0], act_key).block_until_ready()
        size = batch
        if budget_s > 0 and getattr(a, "costly", True):
            probe = []
            for k in range(3):
                t0 = time.perf_counter()
                decide(a, singles[k + 1], act_key).block_until_ready()
                probe.append(time.perf_counter() - t0)
            size = _batch_within(budget_s, statistics.median(probe), batch)
        sizes.append(size)
        decide(a, take(0, size), act_key).block_until_ready()
        decide(a, take(0, size), act_key).block_until_ready()
    bigs = [take(0, size) for size in sizes]
    np_singles = [np.asarray(b[0]) for b in singles] if python_lookahead else []
    py_single: list[list[float]] = [[] for _ in python_lookahead]
    single: list[list[float]] = [[] for _ in loaded]
    batched: list[list[float]] = [[] for _ in loaded]
    total = repeats + batched_repeats
    with progress_bar(total, desc="timing", unit="round", disable=not progress) as bar:
        for r in range(repeats):
            for k, a in enumerate(loaded):
                t0 = time.perf_counter()
                decide(a, singles[r % 16], act_key).block_until_ready()
                single[k].append(time.perf_counter() - t0)
            for k, n in enumerate(python_lookahead):
                board = np_singles[r % 16]
                t0 = time.perf_counter()
                plain_act(board, n)
                py_single[k].append(time.perf_counter() - t0)
            bar.update()
        for _ in range(batched_repeats):
            for k, a in enumerate(loaded):
                t0 = time.perf_counter()
                decide(a, bigs[k], act_key).block_until_ready()
                batched[k].append(time.perf_counter() - t0)
            bar.update()
    py_entries = []
    np_boards = np.asarray(boards[:python_boards]) if python_lookahead else []
    for n, s_times in zip(python_lookahead, py_single):
        t0 = time.perf_counter()
        for b in np_boards:
            plain_act(b, n)
        py_entries.append(DecisionTime(agent=f"{n}steplA (plain Python)", batch=len(np_boards), single=tuple(s_times),
                                       batched=(time.perf_counter() - t0,)))
    return Timing(
        entries=tuple(DecisionTime(agent=l, batch=size, single=tuple(s), batched=tuple(b))
                      for l, size, s, b in zip(labels, sizes, single, batched)) + tuple(py_entries),
        batch=batch, references=tuple(ref_labels), added=tuple(added),
        device=device_description(), python_references=tuple(e.agent for e in py_entries), budget_s=budget_s,
        game=game_id,
    )


def _unlabelled(agent):
    """``agent`` with an empty ``label`` where it has one: one compiled program for agents differing only by it."""
    if dataclasses.is_dataclass(agent) and any(f.name == "label" for f in dataclasses.fields(agent)):
        return dataclasses.replace(agent, label="")
    return agent


def _batch_within(budget_s: float, single_s: float, batch: int, smallest: int = 16) -> int:
    """``batch`` if ``batch * single_s`` fits ``budget_s``, else the largest power of two that does
    (at least ``smallest``, at most ``batch``)."""
    if batch * single_s <= budget_s:
        return batch
    size = smallest
    while size * 2 * single_s <= budget_s and size * 2 < batch:
        size *= 2
    return min(size, batch)


def device_description() -> str:
    """The JAX device the measurements ran on, e.g. ``cpu (x86_64, 2 cores)``."""
    dev = jax.devices()[0]
    if dev.platform == "cpu":
        return f"cpu ({platform.machine()}, {os.cpu_count()} cores)"
    return f"{dev.platform} ({getattr(dev, 'device_kind', '')})"
