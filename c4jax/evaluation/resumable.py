"""Protocol matches kept in a folder as they are played (``c4jax match --out DIR [--resume]``): an
interrupted match continues where it stopped and ends with the result of an uninterrupted one.

:func:`play` plays :func:`c4jax.evaluation.protocol.match`'s games a few plies per jitted call. After
each call the match in flight replaces ``in_flight.npz``, and each opening pair whose two games have
ended is appended to ``pairs.jsonl`` (``{"match": k, "opening": o, "games": [A first, B first]}``,
synced; a torn last line is dropped on reading). Several matches share ``pairs.jsonl``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from pathlib import Path
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from c4jax.games import base as games, kit_of
from c4jax.agents import arena
from c4jax.evaluation import protocol
from c4jax.evaluation.match_files import IN_FLIGHT_FILE, PAIRS_FILE
from c4jax.io import atomic

PLIES = 4  # plies per jitted call: the most a kill loses


class FolderError(ValueError):
    """A folder whose files do not hold one match's progress (changed by hand)."""


@dataclasses.dataclass(frozen=True)
class _Plies:
    """``game`` with a ply budget: a rollout of it plays at most ``max_steps`` plies per call."""

    game: object
    max_steps: int

    def __getattr__(self, name):  # id, init, step, observe, num_actions, ...
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.game, name)


@functools.partial(jax.jit, static_argnames=("plies", "compact"))
def _segment(agent_a, agent_b, states, a_to_move: Array, key: Array, plies: _Plies, compact: bool) -> dict:
    """At most ``plies.max_steps`` plies of the match's rollout from ``states``, and what the next call
    continues from: the states, whether A is to move in each, and the rollout's key after these plies."""
    traj = arena.rollout(agent_a, agent_b, states, a_to_move, key, game=plies, compact=compact, gather_searches=True)
    a_player = jnp.where(a_to_move, states.current_player, 1 - states.current_player)
    played = jnp.any(traj.valid, axis=0).sum()  # the rollout's loop ran once per ply where a game was live
    next_key = jax.lax.fori_loop(0, played, lambda _, k: jax.random.split(k, 3)[0], key)
    return {"actions": traj.actions, "valid": traj.valid, "outcome_a": traj.outcome_a, "states": traj.final,
            "a_to_move": traj.final.current_player == a_player, "key": next_key, "done": games.done(traj.final)}


def _key_data(key: Array) -> tuple[np.ndarray, bool]:
    typed = jnp.issubdtype(key.dtype, jax.dtypes.prng_key)
    return np.asarray(jax.random.key_data(key) if typed else key), bool(typed)


def read_pairs(folder: str | os.PathLike) -> list[dict]:
    """The complete lines of ``folder``'s ``pairs.jsonl`` (a torn last line is dropped from the file)."""
    path = Path(folder) / PAIRS_FILE
    if not path.is_file():
        return []
    raw = path.read_bytes()
    lines, kept = [], []
    for line in raw.split(b"\n"):
        if not line.strip():
            continue
        try:
            lines.append(json.loads(line))
        except json.JSONDecodeError:
            break  # a line cut by a kill, the last one written
        kept.append(line)
    text = b"".join(line + b"\n" for line in kept)
    if text != raw:
        atomic.write_atomic(path, lambda f: f.write(text))
    return lines


def _append(folder: Path, lines: list[dict]) -> None:
    if not lines:
        return
    with open(folder / PAIRS_FILE, "a", encoding="utf-8") as f:
        f.write("".join(json.dumps(line) + "\n" for line in lines))
        f.flush()
        os.fsync(f.fileno())


def _in_flight_index(path: Path) -> int | None:
    """The match that ``path`` (an ``in_flight.npz``) holds, ``None`` when there is none."""
    if not path.is_file():
        return None
    with np.load(path) as z:
        return int(z["match"])


@dataclasses.dataclass
class _InFlight:
    """A match being played: ``t`` plies so far, the states [100] and what the next call continues from,
    A's outcome so far and every action [100, t] (``valid``: played)."""

    t: int
    states: object
    a_to_move: np.ndarray
    key: Array
    outcome_a: np.ndarray
    actions: np.ndarray
    valid: np.ndarray

    def save(self, path: Path, index: int) -> None:
        key, typed = _key_data(self.key)
        arrays = {"match": np.int64(index), "t": np.int64(self.t), "key": key, "typed": np.bool_(typed),
                  "a_to_move": self.a_to_move, "outcome_a": self.outcome_a, "actions": self.actions,
                  "valid": self.valid}
        arrays |= {f"state_{i}": np.asarray(x) for i, x in enumerate(jax.tree.leaves(self.states))}
        atomic.write_atomic(path, lambda f: np.savez(f, **arrays))

    @classmethod
    def load(cls, path: Path, index: int, template) -> _InFlight | None:
        """The match ``index`` saved in ``path`` (``None``: none saved, or another match's)."""
        if _in_flight_index(path) != index:
            return None
        with np.load(path) as z:
            leaves, treedef = jax.tree.flatten(template)
            states = jax.tree.unflatten(treedef, [jnp.asarray(z[f"state_{i}"]) for i in range(len(leaves))])
            key = jax.random.wrap_key_data(jnp.asarray(z["key"])) if bool(z["typed"]) else jnp.asarray(z["key"])
            return cls(t=int(z["t"]), states=states, a_to_move=z["a_to_move"], key=key, outcome_a=z["outcome_a"],
                       actions=z["actions"], valid=z["valid"])


def play(agent_a, agent_b, key: Array, folder: str | os.PathLike, *, index: int = 0, game=None, plies: int = PLIES,
         on_progress: Callable[[int], None] | None = None) -> protocol.MatchResult:
    """The protocol match of ``agent_a`` against ``agent_b`` with ``key`` (the result of
    :func:`c4jax.evaluation.protocol.match`), kept in ``folder`` as match number ``index``: continued
    from what the folder holds of it. ``on_progress(pairs kept)`` after each call. ``FolderError``
    for a folder changed by hand."""
    folder = Path(folder)
    game = protocol.game_of(agent_a, game)
    moves, a_first, a_to_move = protocol.seats(game)
    name_a, name_b = protocol.agent_name(agent_a), protocol.agent_name(agent_b)
    kept = {line["opening"]: line for line in read_pairs(folder) if line["match"] == index}
    if len(kept) == protocol.NUM_OPENINGS:
        records = [protocol.game_from_dict(kept[o]["games"][seat]) for seat in (0, 1)
                   for o in range(protocol.NUM_OPENINGS)]
        if _in_flight_index(folder / IN_FLIGHT_FILE) == index:  # the process stopped before deleting it
            (folder / IN_FLIGHT_FILE).unlink()
        return protocol.result_of_games(records, name_a, name_b)
    start = protocol.match_states(game, jnp.asarray(moves))
    path = folder / IN_FLIGHT_FILE
    flight = _InFlight.load(path, index, start)
    if flight is None:
        if kept:
            raise FolderError(f"{folder / PAIRS_FILE} holds {len(kept)} pairs of match {index} but {path} is "
                             "not that match: the folder was changed by hand")
        n = protocol.GAMES_PER_MATCH
        flight = _InFlight(t=0, states=start, a_to_move=np.asarray(a_to_move), key=key,
                           outcome_a=np.zeros(n, np.float32), actions=np.zeros((n, 0), np.int32),
                           valid=np.zeros((n, 0), bool))
    compact = kit_of(game).match.compact
    done = np.asarray(games.done(flight.states))
    while True:
        kept = _keep_pairs(folder, index, game, flight, done, kept, a_first, moves)
        if on_progress is not None:
            on_progress(len(kept))
        if done.all() or flight.t >= game.max_steps:
            break
        budget = _Plies(game, min(plies, game.max_steps - flight.t))
        out = jax.device_get(_segment(agent_a, agent_b, flight.states, jnp.asarray(flight.a_to_move), flight.key,
                                      budget, compact))
        flight = _InFlight(t=flight.t + budget.max_steps, states=jax.tree.map(jnp.asarray, out["states"]),
                           a_to_move=out["a_to_move"], key=out["key"], outcome_a=flight.outcome_a + out["outcome_a"],
                           actions=np.concatenate([flight.actions, out["actions"]], axis=1),
                           valid=np.concatenate([flight.valid, out["valid"]], axis=1))
        flight.save(path, index)
        done = out["done"]
    result = protocol.match_result(_host_games(game, flight), a_first, moves, name_a, name_b)
    path.unlink(missing_ok=True)
    return result


def _host_games(game, flight: _InFlight) -> dict:
    length = np.asarray(protocol.game_lengths(game, flight.states, jnp.asarray(flight.valid)))
    return {"actions": flight.actions, "valid": flight.valid, "outcome_a": flight.outcome_a, "length": length}


def _keep_pairs(folder: Path, index: int, game, flight: _InFlight, done: np.ndarray, kept: dict,
                a_first: np.ndarray, moves: np.ndarray) -> dict:
    """Append the pairs of ``flight`` that have ended and are not in ``kept`` yet; returns all kept."""
    half = protocol.NUM_OPENINGS
    new = [o for o in range(half) if o not in kept and done[o] and done[half + o]]
    if not new:
        return kept
    out = _host_games(game, flight)
    lines = [{"match": index, "opening": o,
              "games": [protocol.game_record(out, i, a_first, moves).to_dict() for i in (o, half + o)]} for o in new]
    _append(folder, lines)
    return kept | {line["opening"]: line for line in lines}
