"""The supervised dataset of design.md §6: generation, splits and file formats.

:func:`generate` lets the deterministic 1StepLA (centre tie-break) play both
sides from design.md §3 random start boards, one jitted batch of games at a time, and
keeps the (board, action) pairs it meets whose board has not been collected yet.
Each new pair is followed by its mirror (board flipped left-right, action
``6 - a``) unless the board is its own mirror. Rows are kept in the order of
discovery; a pair and its mirror share a ``group`` id, which :meth:`Dataset.split`
uses so that mirrors never straddle two splits (a mirror in the test set of a
board seen in training would leak it).

Files: :meth:`Dataset.save_npz` / :meth:`Dataset.load_npz` (the default, a
compressed ``.npz`` with a format version and the generator settings) and
:func:`export_text` / :func:`import_text` (the reference thesis' text format:
42 characters ``0``/``1``/``2`` for the board, row 0 first, ``1`` = player to
move, ``2`` = opponent, then the action digit; pairs separated by ``;``).

Boards everywhere are the public encoding of design.md §1: ``int8[6, 7]``, row 0 on
top, ``1`` = the player to move, ``-1`` = the opponent.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from c4jax import agents
from c4jax.agents import arena
from c4jax.games.connect_four.board import COLS, ROWS, check_boards, mirror_boards
from c4jax.io import atomic

FORMAT_NAME = "c4jax.dataset"
FORMAT_VERSION = 1
GENERATOR_AGENT = "1steplA"  # design.md §6: deterministic, centre tie-break
CELLS = ROWS * COLS


class DatasetNotFoundError(FileNotFoundError, ValueError):
    """A dataset file does not exist (both a ``FileNotFoundError`` and a ``ValueError``)."""


@dataclasses.dataclass
class Dataset:
    """N (board, action) pairs.

    ``groups[i]`` identifies the pair/mirror group of row i: rows sharing a group hold the same
    board or its left-right mirror, and the first row of a group comes first in the dataset
    (for generated data: the pair 1StepLA played; the row after it, if any, is its mirror).
    ``info`` carries the generator settings (saved with the ``.npz``).
    """

    boards: np.ndarray  # int8[N, 6, 7]: public boards, the player to move = 1
    actions: np.ndarray  # int8[N]: the column played, 0..6
    groups: np.ndarray  # int32[N]: pair/mirror group id
    info: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        self.boards = _as_int(self.boards, np.int8, "boards")
        self.actions = _as_int(self.actions, np.int8, "actions")
        self.groups = _as_int(self.groups, np.int32, "groups")
        n = self.boards.shape[0] if self.boards.ndim else -1
        if self.boards.shape != (n, ROWS, COLS) or self.actions.shape != (n,) or self.groups.shape != (n,):
            raise ValueError(
                f"dataset arrays must have shapes boards [N, 6, 7], actions [N], groups [N]; got "
                f"{self.boards.shape}, {self.actions.shape}, {self.groups.shape}"
            )

    def __len__(self) -> int:
        return int(self.boards.shape[0])

    @property
    def is_mirror(self) -> np.ndarray:
        """bool[N]: the row is not the first of its group (in generated data: an added mirror)."""
        first = np.zeros(len(self), bool)
        first[np.unique(self.groups, return_index=True)[1]] = True
        return ~first

    def take(self, indices) -> Dataset:
        """The rows ``indices`` (in that order), groups and info kept."""
        idx = np.asarray(indices)
        return Dataset(self.boards[idx], self.actions[idx], self.groups[idx], dict(self.info))

    def validate(self, where: str = "dataset") -> Dataset:
        """Check every row; ``ValueError`` naming ``where`` and the first bad row. Returns self."""
        _validate(self.boards, self.actions, self.groups, lambda i: f"{where}: row {i}")
        return self

    def split(self, fractions=(0.8, 0.1, 0.1), seed: int = 0) -> tuple[Dataset, ...]:
        """Random disjoint parts (default train/val/test) made of whole groups.

        The groups are permuted with ``seed`` and dealt out in that order; the boundary between
        part k and k+1 is the group boundary closest to ``round(N * sum(fractions[:k+1]))``. A
        group holds one or two rows, so each boundary is within one row of its target and each
        part within two rows of ``fraction * N``, and a board and its mirror always land in the
        same part. Rows keep their dataset order inside each part.
        """
        fr = np.asarray(fractions, dtype=np.float64)
        if fr.ndim != 1 or fr.size == 0 or (fr < 0).any() or abs(fr.sum() - 1.0) > 1e-6:
            raise ValueError(f"fractions must be non-negative and sum to 1, got {tuple(fractions)}")
        n = len(self)
        if n == 0:
            return tuple(self.take(np.arange(0)) for _ in range(fr.size))
        uniq, inverse = np.unique(self.groups, return_inverse=True)
        sizes = np.bincount(inverse, minlength=uniq.size)
        perm = np.random.default_rng(seed).permutation(uniq.size)
        ends = np.cumsum(sizes[perm])  # rows dealt after each permuted group
        targets = np.rint(np.cumsum(fr) * n).astype(np.int64)
        targets[-1] = n
        # Cut after the permuted group whose cumulative row count is closest to each target.
        below = np.searchsorted(ends, targets, side="left")  # groups ending strictly before the target
        prev = np.where(below > 0, ends[np.maximum(below - 1, 0)], 0)
        nxt = ends[np.minimum(below, uniq.size - 1)]
        cuts = below + ((below < uniq.size) & (nxt - targets < targets - prev))
        cuts = np.concatenate([[0], cuts[:-1], [uniq.size]])
        part_of_group = np.empty(uniq.size, np.int64)
        for k in range(fr.size):
            part_of_group[perm[cuts[k]:cuts[k + 1]]] = k
        part = part_of_group[inverse]
        out = []
        for k in range(fr.size):
            d = self.take(np.flatnonzero(part == k))
            d.info["split"] = {"fractions": fr.tolist(), "seed": int(seed), "part": k}
            out.append(d)
        return tuple(out)

    def save_npz(self, path) -> Path:
        """Write a compressed ``.npz`` at exactly ``path`` (parents created); returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_atomic(path, lambda f: np.savez_compressed(
            f,
            format=np.array(FORMAT_NAME),
            version=np.array(FORMAT_VERSION, np.int32),
            boards=self.boards,
            actions=self.actions,
            groups=self.groups,
            info=np.array(json.dumps(self.info, sort_keys=True)),
        ))
        return path

    @classmethod
    def load_npz(cls, path) -> Dataset:
        """Read and validate a file written by :meth:`save_npz`; ``ValueError`` naming the path."""
        path = _existing_file(path, "dataset file")
        try:
            z = np.load(path, allow_pickle=False)
            if not isinstance(z, np.lib.npyio.NpzFile):
                raise _NotADataset("it holds a single .npy array, not an .npz archive")
            with z:
                missing = [k for k in ("format", "version", "boards", "actions", "groups") if k not in z.files]
                if missing:
                    raise _NotADataset(f"missing arrays {missing} (has {sorted(z.files)})")
                fmt = z["format"]
                if fmt.shape != () or str(fmt) != FORMAT_NAME:
                    raise _NotADataset(f"format tag is {fmt!r}, expected {FORMAT_NAME!r}")
                version = int(z["version"])
                arrays = {k: z[k] for k in ("boards", "actions", "groups")}
                info = json.loads(str(z["info"])) if "info" in z.files else {}
        except DatasetNotFoundError:
            raise
        except _NotADataset as e:
            raise ValueError(f"{path} is not a c4jax dataset file: {e}") from None
        except Exception as e:  # corrupted archive: zipfile/zlib/EOF/ValueError from numpy
            raise ValueError(f"{path} cannot be read as a c4jax dataset .npz ({type(e).__name__}: {e})") from e
        if version > FORMAT_VERSION:
            raise ValueError(f"{path}: dataset format version {version} is newer than this c4jax "
                             f"supports ({FORMAT_VERSION}); upgrade c4jax")
        want = {"boards": (np.int8, 3), "actions": (np.int8, 1), "groups": (np.int32, 1)}
        for k, (dtype, ndim) in want.items():
            a = arrays[k]
            if a.dtype != dtype or a.ndim != ndim:
                raise ValueError(f"{path}: array {k!r} must be {np.dtype(dtype).name} with {ndim} "
                                 f"dimension(s), got {a.dtype} with shape {a.shape}")
        n = arrays["boards"].shape[0]
        if arrays["boards"].shape[1:] != (ROWS, COLS) or arrays["actions"].shape != (n,) \
                or arrays["groups"].shape != (n,):
            raise ValueError(f"{path}: shapes must be boards [N, 6, 7], actions [N], groups [N]; got "
                             f"{arrays['boards'].shape}, {arrays['actions'].shape}, {arrays['groups'].shape}")
        _validate(arrays["boards"], arrays["actions"], arrays["groups"], lambda i: f"{path}: row {i}")
        return cls(arrays["boards"], arrays["actions"], arrays["groups"], info)


class _NotADataset(Exception):
    pass


def _existing_file(path, what: str) -> Path:
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a directory, expected a {what}")
    if not path.is_file():
        raise DatasetNotFoundError(2, f"{what} not found", str(path))
    return path


def _as_int(a, dtype, name: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"dataset {name} must hold integers, got dtype {arr.dtype}")
    out = arr.astype(dtype)
    if arr.size and not np.array_equal(out, arr):
        raise ValueError(f"dataset {name} has values that do not fit {np.dtype(dtype).name}")
    return out


_BOARD_MSG = re.compile(r"^board (\d+) (.*)$", re.S)


def _validate(boards: np.ndarray, actions: np.ndarray, groups: np.ndarray | None, where) -> None:
    """Boards valid and unfinished, actions legal, groups hold a board and its mirror only.

    ``where(i)`` names row i in the messages.
    """
    if len(boards) == 0:
        return
    try:
        check_boards(boards, batched=True, allow_finished=False)
    except ValueError as e:
        m = _BOARD_MSG.match(str(e))
        if m is None:
            raise ValueError(f"{where(0)}: invalid boards: {e}") from None
        raise ValueError(f"{where(int(m.group(1)))}: invalid board: the board {m.group(2)}") from None
    bad = (actions < 0) | (actions >= COLS)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{where(i)}: action {int(actions[i])} is outside 0..6")
    full = boards[np.arange(len(boards)), 0, actions.astype(np.int64)] != 0
    if full.any():
        i = int(np.argmax(full))
        raise ValueError(f"{where(i)}: action {int(actions[i])} is a full column")
    if groups is not None:
        canon = _canonical(boards.reshape(-1, CELLS))
        _, first, inverse = np.unique(groups, return_index=True, return_inverse=True)
        bad = (canon != canon[first[inverse]]).any(axis=1)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{where(i)}: shares group {int(groups[i])} with row {int(first[inverse[i]])}, "
                             "but the boards are neither equal nor mirrors")


# --------------------------------------------------------------------------- generation


def _canonical(flat: np.ndarray) -> np.ndarray:
    """int8[n, 42]: the lexicographically smaller of each flat board and its mirror."""
    mirrored = mirror_boards(flat.reshape(-1, ROWS, COLS)).reshape(-1, CELLS)
    diff = flat != mirrored
    first = diff.argmax(axis=1)
    rows = np.arange(flat.shape[0])
    keep = ~diff.any(axis=1) | (flat[rows, first] < mirrored[rows, first])
    return np.where(keep[:, None], flat, mirrored)


def _void(flat: np.ndarray) -> np.ndarray:
    """[n] opaque byte keys of the rows of a contiguous 2-D array (for np.unique)."""
    flat = np.ascontiguousarray(flat)
    return flat.view(np.dtype((np.void, flat.shape[1] * flat.itemsize))).ravel()


@dataclasses.dataclass
class GenerationStats:
    """Where :func:`generate`'s time went (seconds, wall clock) and what it saw."""

    batches: int = 0
    games: int = 0
    positions: int = 0  # boards met (moves played by 1StepLA), duplicates included
    originals: int = 0  # rows 1StepLA played (first of each group)
    mirrors: int = 0  # rows added as mirrors
    first_batch_s: float = 0.0  # the first batch: compilation + games + host work
    device_wait_s: float = 0.0  # blocked on the jitted games after the first batch
    host_s: float = 0.0  # numpy deduplication / mirroring after the first batch
    total_s: float = 0.0


@functools.partial(jax.jit, static_argnames="batch")
def _play(agent, key, batch: int):
    """[batch] self-play games of ``agent`` from design.md §3 random starts, recorded."""
    start_key, play_key = jax.random.split(key)
    states = arena.random_initial_states(start_key, batch)
    traj = arena.rollout(agent, None, states, True, play_key)
    return traj.observations, traj.actions.astype(jnp.int8), traj.valid


def generate(num_pairs: int = 200_000, *, seed: int = 0, batch: int = 4096, progress: bool = False) -> Dataset:
    """design.md §6: ``num_pairs`` rows of unique boards played by 1StepLA, each followed by its mirror.

    1StepLA (deterministic, centre tie-break) plays both sides of ``batch`` games at a time
    from design.md §3 random start boards. Every board it moves on (from the mover's view) with
    the column it picked is kept if neither the board nor its mirror was collected before;
    the row is followed by its mirror (board flipped left-right, action ``6 - a``) unless the
    board is symmetric. Stops at exactly ``num_pairs`` rows (the last batch is truncated, so
    the very last original may lose its mirror). Same arguments -> identical arrays.
    """
    return generate_with_stats(num_pairs, seed=seed, batch=batch, progress=progress)[0]


@dataclasses.dataclass
class Progress:
    """Where :func:`generate_with_stats` stands after a batch: the rows collected so far, the PRNG
    key the next batch is split from, and the counts of :class:`GenerationStats`. Generation
    resumed from it (``resume=``) gives exactly the dataset of an uninterrupted run."""

    boards: np.ndarray
    actions: np.ndarray
    groups: np.ndarray
    key: np.ndarray  # uint32 key data
    info: dict  # the generator settings (num_pairs, seed, batch)
    counts: dict  # batches, games, positions, originals, mirrors

    def save(self, path) -> Path:
        """Write an uncompressed ``.npz`` at ``path`` atomically (temporary file, flushed, renamed)."""
        path = Path(path)
        atomic.write_atomic(path, lambda f: np.savez(
            f, format=np.array(FORMAT_NAME + ".progress"), boards=self.boards, actions=self.actions,
            groups=self.groups, key=self.key, meta=np.array(json.dumps({"info": self.info, "counts": self.counts}))))
        return path

    @classmethod
    def load(cls, path) -> Progress:
        """Read :meth:`save`'s file; ``ValueError`` naming the path when it is damaged."""
        path = _existing_file(path, "generation progress file")
        try:
            with np.load(path, allow_pickle=False) as z:
                if str(z["format"]) != FORMAT_NAME + ".progress":
                    raise ValueError(f"format tag {str(z['format'])!r}")
                meta = json.loads(str(z["meta"]))
                arrays = {k: z[k] for k in ("boards", "actions", "groups", "key")}
            Dataset(arrays["boards"], arrays["actions"], arrays["groups"])  # shapes and dtypes
        except Exception as e:  # a damaged archive: zipfile (CRC), zlib, numpy, json
            raise ValueError(f"{path} cannot be read as generation progress ({type(e).__name__}: "
                             f"{' '.join(str(e).split())[:200]})") from None
        return cls(**arrays, info=meta["info"], counts=meta["counts"])


def generate_with_stats(num_pairs: int = 200_000, *, seed: int = 0, batch: int = 4096,
                        progress: bool = False, resume: Progress | None = None,
                        on_batch=None) -> tuple[Dataset, GenerationStats]:
    """:func:`generate`, also returning the :class:`GenerationStats`.

    ``on_batch(p)``: called with the :class:`Progress` after every batch (e.g. to save it);
    ``resume``: a :class:`Progress` of the same settings to continue from.
    """
    if isinstance(num_pairs, bool) or not isinstance(num_pairs, (int, np.integer)) or num_pairs < 0:
        raise ValueError(f"num_pairs must be a non-negative integer, got {num_pairs!r}")
    if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 1:
        raise ValueError(f"batch must be a positive integer, got {batch!r}")
    num_pairs, batch = int(num_pairs), int(batch)
    info = {"generator": "c4jax.data.generate", "agent": GENERATOR_AGENT, "num_pairs": num_pairs,
            "seed": int(seed), "batch": batch}
    stats = GenerationStats()
    t_start = time.perf_counter()
    agent = agents.load(GENERATOR_AGENT)
    seen: set[bytes] = set()  # canonical (board or mirror) keys of every collected board
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    rows = 0
    key = jax.random.key(seed)
    if resume is not None:
        if resume.info != info:
            raise ValueError(f"the progress to resume was made with {resume.info}, not {info}")
        parts.append((resume.boards, resume.actions, resume.groups))
        rows = len(resume.boards)
        # The collected set is closed under mirroring: its canonical keys are those of every row.
        buf = _canonical(resume.boards.reshape(-1, CELLS)).tobytes()
        seen.update(buf[i * CELLS:(i + 1) * CELLS] for i in range(rows))
        for name, value in resume.counts.items():
            setattr(stats, name, value)
        key = jax.random.wrap_key_data(jnp.asarray(resume.key))
    bar = _progress_bar(num_pairs, rows) if progress else None
    key, subkey = jax.random.split(key)
    pending = _play(agent, subkey, batch) if num_pairs else None
    first = True  # this call's first batch (compilation included)
    try:
        while rows < num_pairs:
            t0 = time.perf_counter()
            boards, actions, valid = (np.asarray(x) for x in pending)  # waits for the games
            # Dispatch the next batch now so that it plays while the host deduplicates this one.
            key_before = key  # what a resumed run splits this next batch's key from
            key, subkey = jax.random.split(key)
            pending = _play(agent, subkey, batch)
            t1 = time.perf_counter()
            b, a, g, n_orig = _new_rows(boards[valid], actions[valid], seen, num_pairs - rows, stats.originals)
            parts.append((b, a, g))
            rows += len(b)
            stats.batches += 1
            stats.games += batch
            stats.positions += int(valid.sum())
            stats.originals += n_orig
            stats.mirrors += len(b) - n_orig
            t2 = time.perf_counter()
            if first:
                stats.first_batch_s, first = t2 - t_start, False
            else:
                stats.device_wait_s += t1 - t0
                stats.host_s += t2 - t1
            if bar is not None:
                bar.update(len(b))
            if on_batch is not None:
                parts = [tuple(np.concatenate(x) for x in zip(*parts))]  # the rows so far, one array each
                counts = {k: getattr(stats, k) for k in ("batches", "games", "positions", "originals", "mirrors")}
                on_batch(Progress(*parts[0], key=np.asarray(jax.random.key_data(key_before)), info=info,
                                  counts=counts))
    finally:
        if bar is not None:
            bar.close()
    if parts:
        boards, actions, groups = (np.concatenate(x) for x in zip(*parts))
    else:
        boards, actions, groups = np.zeros((0, ROWS, COLS), np.int8), np.zeros(0, np.int8), np.zeros(0, np.int32)
    stats.total_s = time.perf_counter() - t_start
    return Dataset(boards, actions, groups, info), stats


def _new_rows(boards: np.ndarray, actions: np.ndarray, seen: set[bytes], room: int, group0: int):
    """Rows for the boards of one batch not collected yet (``seen`` is updated).

    ``boards`` int8[n, 6, 7] / ``actions`` [n] in the order met. Because every collected board
    is followed by its mirror, the collected set is closed under mirroring, so a board is new
    exactly when its canonical key (the smaller of board and mirror) is new; that turns the
    sequential rule into a first-occurrence ``np.unique`` plus one set lookup per distinct key.
    Returns (boards, actions, groups, number of originals), at most ``room`` rows.
    """
    flat = boards.reshape(-1, CELLS)
    canon = _canonical(flat)
    _, first = np.unique(_void(canon), return_index=True)
    first.sort()  # first occurrence of each distinct key, in the order met
    buf = canon[first].tobytes()
    keys = [buf[i * CELLS:(i + 1) * CELLS] for i in range(first.size)]
    fresh = np.fromiter((k not in seen for k in keys), bool, count=first.size)
    idx = first[fresh]
    sym = (boards[idx] == mirror_boards(boards[idx])).all(axis=(1, 2))
    counts = np.where(sym, 1, 2)
    # Truncate to `room` rows: keep originals while their first row fits.
    starts = np.cumsum(counts) - counts
    keep = starts < room
    idx, counts = idx[keep], counts[keep]
    seen.update(keys[i] for i in np.flatnonzero(fresh)[keep])
    src = np.repeat(idx, counts)
    mirror = np.zeros(src.size, bool)
    mirror[np.cumsum(counts)[counts == 2] - 1] = True
    out_boards = boards[src]
    out_boards[mirror] = mirror_boards(out_boards[mirror])
    out_actions = actions[src]
    out_actions[mirror] = COLS - 1 - out_actions[mirror]
    groups = (group0 + np.repeat(np.arange(idx.size), counts)).astype(np.int32)
    out_boards, out_actions, groups = out_boards[:room], out_actions[:room], groups[:room]
    return out_boards, out_actions, groups, int(idx.size)


def _progress_bar(total: int, initial: int = 0):
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, unit="rows", desc="1StepLA pairs", dynamic_ncols=True)


# --------------------------------------------------------------------------- text format


def export_text(dataset: Dataset, path) -> Path:
    """Write the reference text format: per pair 42 chars ``0/1/2`` (row 0 first) + action, ``;``-separated.

    ``1`` = the player to move, ``2`` = the opponent. Groups are not stored (import rebuilds
    them from the boards). Parents are created; returns the path.
    """
    path = Path(path)
    n = len(dataset)
    chars = np.empty((n, CELLS + 2), np.uint8)
    flat = dataset.boards.reshape(n, CELLS)
    chars[:, :CELLS] = np.where(flat == -1, 2, flat).astype(np.uint8) + ord("0")
    chars[:, CELLS] = dataset.actions.astype(np.uint8) + ord("0")
    chars[:, CELLS + 1] = ord(";")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_atomic(path, lambda f: f.write(chars.tobytes()[:-1] if n else b""))
    return path


def import_text(path) -> Dataset:
    """Read the reference text format (see :func:`export_text`) and validate every pair.

    Whitespace around pairs and a trailing ``;`` are tolerated. Each board is grouped with
    its mirror (and with any duplicate of either) when present, else it has its own group;
    group ids follow the order of first appearance. ``ValueError`` naming the path and the
    pair index (from 0) on a wrong length, a bad character, a bad action or an invalid board.
    """
    path = _existing_file(path, "dataset text file")
    pieces = [p.strip() for p in path.read_bytes().split(b";")]
    if pieces and not pieces[-1]:
        pieces.pop()  # a trailing ';' (or an empty file)
    n = len(pieces)
    if n == 0:
        return Dataset(np.zeros((0, ROWS, COLS), np.int8), np.zeros(0, np.int8), np.zeros(0, np.int32),
                       {"imported_from": str(path)})
    lengths = np.fromiter(map(len, pieces), np.int64, count=n)
    bad = lengths != CELLS + 1
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{path}: pair {i} has {lengths[i]} characters, expected {CELLS + 1} "
                         f"(42 board cells + 1 action digit): {pieces[i][:60]!r}")
    chars = np.frombuffer(b"".join(pieces), np.uint8).reshape(n, CELLS + 1)
    cells = chars[:, :CELLS]
    bad_cell = (cells < ord("0")) | (cells > ord("2"))
    if bad_cell.any():
        i, j = np.unravel_index(int(np.argmax(bad_cell)), bad_cell.shape)
        raise ValueError(f"{path}: pair {i} has the bad character {chr(cells[i, j])!r} at board cell {j} "
                         f"(row {j // COLS}, column {j % COLS}); cells must be 0, 1 or 2")
    act = chars[:, CELLS]
    bad_act = (act < ord("0")) | (act > ord("0") + COLS - 1)
    if bad_act.any():
        i = int(np.argmax(bad_act))
        raise ValueError(f"{path}: pair {i} has the bad action {chr(act[i])!r}; actions are digits 0..6")
    digits = cells.astype(np.int8) - ord("0")
    boards = np.where(digits == 2, -1, digits).astype(np.int8).reshape(n, ROWS, COLS)
    actions = (act - ord("0")).astype(np.int8)
    _validate(boards, actions, None, lambda i: f"{path}: pair {i}")
    groups = group_ids(boards)
    return Dataset(boards, actions, groups, {"imported_from": str(path)})


def group_ids(boards: np.ndarray) -> np.ndarray:
    """int32[N]: one id per board-or-mirror class, numbered in order of first appearance."""
    n = len(boards)
    if n == 0:
        return np.zeros(0, np.int32)
    _, first, inverse = np.unique(_void(_canonical(np.asarray(boards).reshape(n, CELLS))),
                                  return_index=True, return_inverse=True)
    rank = np.empty(first.size, np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inverse.ravel()].astype(np.int32)
