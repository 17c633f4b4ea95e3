"""The perfect-play yardstick: how often an agent picks a game-theoretically best column (design.md §8).

The shipped position set (``yardstick_positions.npz``, described by the ``.json`` beside it) holds
unfinished boards of the game its ``.json`` names with the exact solver score of every
column (the convention of that game's perfect-play solver; full columns :data:`ILLEGAL`). Only
positions whose legal columns differ in outcome are graded: a column **keeps** the outcome when its
score has the best score's sign, and is **exact** when it equals the best score.
"""

from __future__ import annotations

import contextlib
import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from c4jax import games
from c4jax.io.devices import make_mesh, select, shard_batch, split_rows, to_host

POSITIONS_FILE = Path(__file__).resolve().parent / "yardstick_positions.npz"
ILLEGAL = -100  # the score of an illegal column in a position set (the perfect player's solve_scores convention)
PHASES = ("opening", "middle", "end")
PHASE_STONES = ((0, 11), (12, 27), (28, 41))  # stones on the board in each phase (inclusive)
PREFIX = "yardstick/"


def phase_of(stones) -> np.ndarray:
    """int[...]: the phase index (0 opening, 1 middle, 2 end) of positions with ``stones`` stones."""
    return np.searchsorted([lo for lo, _ in PHASE_STONES[1:]], np.asarray(stones), side="right")


@dataclass(frozen=True)
class Positions:
    """A graded position set of the game ``game`` (a :data:`c4jax.games.GAMES` id): public boards and
    every column's exact score; ``ValueError`` when the arrays do not fit the game."""

    boards: np.ndarray  # int8[N, 6, 7]: row 0 on top, 1 = player to move
    scores: np.ndarray  # int32[N, 7]: exact scores, full columns ILLEGAL
    meta: dict = field(default_factory=dict)  # how the set was made (the JSON beside the file)
    game: str = field(kw_only=True)

    def __post_init__(self):
        b, s = np.asarray(self.boards), np.asarray(self.scores)
        game = games.make(self.game)
        shape, actions = tuple(game.observation_shape), game.num_actions
        if b.shape[1:] != shape or s.shape != (b.shape[0], actions):
            raise ValueError(f"positions: boards must be [N, {', '.join(map(str, shape))}] and scores [N, {actions}], "
                             f"got {b.shape} and {s.shape}")
        if not np.array_equal(s == ILLEGAL, ~np.asarray(games.kit_of(game).observation_legal(b))):
            raise ValueError("positions: scores must be ILLEGAL exactly on the full columns")

    def __len__(self) -> int:
        return int(self.boards.shape[0])

    @property
    def stones(self) -> np.ndarray:
        return np.count_nonzero(self.boards.reshape(len(self), -1), axis=1)

    @property
    def phase(self) -> np.ndarray:
        """int[N]: 0 opening (0-11 stones), 1 middle (12-27), 2 end (28+)."""
        return phase_of(self.stones)

    @property
    def legal(self) -> np.ndarray:
        return self.scores != ILLEGAL

    @property
    def best(self) -> np.ndarray:
        """int[N]: the best score of each position."""
        return np.where(self.legal, self.scores, ILLEGAL).max(axis=1)

    @property
    def nontrivial(self) -> np.ndarray:
        """bool[N]: some legal column has another outcome (win / draw / loss) than the best one."""
        signs = np.sign(self.scores)
        worst = np.where(self.legal, signs, 2).min(axis=1)
        return worst != np.sign(self.best)

    def save(self, path: str | Path) -> Path:
        """Write the boards and scores to the ``.npz`` at ``path`` and ``meta`` with the game to the ``.json``
        beside it (what :func:`load_positions` reads); returns ``path``."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, boards=self.boards.astype(np.int8), scores=self.scores.astype(np.int8))
        path.with_suffix(".json").write_text(json.dumps({"game": self.game, **self.meta}, indent=2) + "\n")
        return path


def load_positions(path: str | Path | None = None) -> Positions:
    """The shipped position set (default, cached) or the ``.npz`` at ``path``, with the ``.json`` beside it
    that names its ``game``; ``ValueError`` when that file is missing or names no game."""
    if path is None:
        return _shipped()
    return _read(Path(path))


@functools.cache
def _shipped() -> Positions:
    return _read(POSITIONS_FILE)


def _read(path: Path) -> Positions:
    if not path.is_file():
        raise FileNotFoundError(f"yardstick positions not found: {path}")
    with np.load(path) as z:
        boards, scores = z["boards"].astype(np.int8), z["scores"].astype(np.int32)
    meta_path = path.with_suffix(".json")
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    if not isinstance(meta.get("game"), str):
        raise ValueError(f"yardstick positions {path}: {meta_path.name} beside it must name their game "
                         "(\"game\": a game id)")
    return Positions(boards, scores, meta, game=meta["game"])


# --------------------------------------------------------------------------------------------- grading


def _act_rows(agent, boards: Array, key: Array) -> Array:
    """int32[B]: ``agent``'s column for each of ``boards`` [B, ...], split over the current mesh's devices
    (rows for a key-independent agent, the batch's layout for a sampling one: the same result)."""
    if getattr(agent, "keyed", True):
        return agent._act(shard_batch(boards), key).astype(jnp.int32)
    return split_rows(lambda shared, rows: shared[0]._act(rows, shared[1]).astype(jnp.int32), (agent, key), boards)


_act_chunk = jax.jit(_act_rows)


def _chunks(boards: np.ndarray, key: Array, batch_size: int) -> tuple[np.ndarray, Array]:
    """``boards`` [N, ...] as ``ceil(N / batch_size)`` chunks of ``batch_size`` (the last one filled
    with copies of board 0) and one key per chunk (``split(key, chunks)``)."""
    n = boards.shape[0]
    chunks = -(-n // batch_size)
    pad = chunks * batch_size - n
    padded = np.concatenate([boards, np.broadcast_to(boards[:1], (pad,) + boards.shape[1:])]) if pad else boards
    return padded.reshape((chunks, batch_size) + boards.shape[1:]), jax.random.split(key, chunks)


def _counts(action: Array, scores: Array, phase: Array, graded: Array) -> dict[str, Array]:
    """Per-phase counts of graded positions, outcome-keeping and exact choices (int32[3] each)."""
    legal = scores != ILLEGAL
    best = jnp.max(jnp.where(legal, scores, ILLEGAL), axis=-1)
    actions = scores.shape[-1]
    ok = (action >= 0) & (action < actions)
    chosen = jnp.take_along_axis(scores, jnp.clip(action, 0, actions - 1)[:, None], axis=-1)[:, 0]
    chosen = jnp.where(ok, chosen, ILLEGAL)
    keep = (chosen != ILLEGAL) & (jnp.sign(chosen) == jnp.sign(best))
    exact = (chosen != ILLEGAL) & (chosen == best)
    onehot = (phase[:, None] == jnp.arange(len(PHASES))[None]) & graded[:, None]
    count = lambda m: jnp.sum(onehot & m[:, None], axis=0, dtype=jnp.int32)  # noqa: E731
    return {"n": count(jnp.ones_like(keep)), "keep": count(keep), "exact": count(exact)}


_counts_jit = jax.jit(_counts)


def grade(agent, key: Array, *, positions: Positions | None = None, batch_size: int = 512,
          jit: bool = True, devices: int = 1,
          progress: Callable[[int, int], None] | None = None) -> dict[str, np.ndarray]:
    """The raw grading: the agent's column for every position (``action``, int32[N]) and per-phase
    counts (int[3]) of graded positions ``n``, outcome-keeping ``keep`` and ``exact`` choices.

    A key-independent agent (``keyed`` false) is asked only about the graded positions (``action``
    -1 at the others), a sampling one about every position. The positions asked go in chunks of
    ``batch_size``, chunk ``c`` with key ``split(key, chunks)[c]``; ``progress(done, asked)`` after
    each. ``jit`` and ``devices`` change no figure. ``ValueError`` for a non-positive ``batch_size``."""
    pos = positions if positions is not None else load_positions()
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    asked = np.ones(len(pos), bool) if getattr(agent, "keyed", True) else pos.nontrivial
    if not asked.any():  # nothing to grade: every position, so that the call has a batch
        asked = np.ones(len(pos), bool)
    n_asked = int(asked.sum())
    batch_size = min(batch_size, n_asked)
    chunks, keys = _chunks(pos.boards[asked], key, batch_size)
    act = _act_chunk if jit else _act_rows
    n_devices = len(select(devices))
    parts = []
    with contextlib.nullcontext() if n_devices == 1 else jax.set_mesh(make_mesh(n_devices)):
        if progress is not None:
            progress(0, n_asked)
        for c in range(len(chunks)):
            parts.append(np.asarray(to_host(act(agent, jnp.asarray(chunks[c]), keys[c]))))
            if progress is not None:
                progress(min((c + 1) * batch_size, n_asked), n_asked)
    action_asked = np.concatenate(parts)[:n_asked]
    counts = _counts_jit if jit else _counts
    out = counts(jnp.asarray(action_asked), jnp.asarray(pos.scores[asked]), jnp.asarray(pos.phase[asked]),
                 jnp.asarray(pos.nontrivial[asked]))
    out = {k: np.asarray(v) for k, v in to_host(out).items()}
    action = np.full(len(pos), -1, np.int32)
    action[asked] = action_asked
    return {**out, "action": action}


def metrics(raw: dict[str, np.ndarray]) -> dict[str, float]:
    """Flat metrics from :func:`grade`'s counts: ``yardstick/keep``, ``yardstick/exact``,
    ``yardstick/n`` and the same with ``_opening``, ``_middle``, ``_end`` (rates ``nan`` for no positions)."""
    out = {}
    for suffix, sl in [("", slice(None))] + [(f"_{p}", i) for i, p in enumerate(PHASES)]:
        n = int(np.sum(raw["n"][sl]))
        for what in ("keep", "exact"):
            out[f"{PREFIX}{what}{suffix}"] = float(np.sum(raw[what][sl]) / n) if n else float("nan")
        out[f"{PREFIX}n{suffix}"] = float(n)
    return out


def optimal_move_rate(agent, key: Array, *, positions: Positions | None = None, batch_size: int = 512,
                      jit: bool = True, devices: int = 1,
                      progress: Callable[[int, int], None] | None = None) -> dict[str, float]:
    """Grade ``agent``'s moves on the non-trivial positions of the yardstick set.

    Args:
      agent, key: any agent of the default game and its sampling key.
      positions, batch_size, jit, devices, progress: as :func:`grade`'s (default: the shipped set).

    Returns:
      :func:`metrics`: the shares of graded positions where the agent's column keeps the outcome /
      is exact, and their counts, overall and per phase.
    """
    return metrics(grade(agent, key, positions=positions, batch_size=batch_size, jit=jit, devices=devices,
                         progress=progress))
