"""The supervised stage's dataset (design.md §6): a teacher's moves in any game, generated, split and saved.

:func:`generate` collects the distinct positions a teacher moves in, each followed by its images under
the kit's symmetries (a shared ``group`` id keeps images in one split). Files: :meth:`Dataset.save_npz` /
:meth:`Dataset.load_npz` (a compressed ``.npz`` with a format version, the game and the generator
settings) and :func:`export_text` / :func:`import_text` (the kit's ``text_format``).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import re
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from c4jax import agents, games
from c4jax.agents import arena
from c4jax.games.base import done
from c4jax.io import atomic

FORMAT_NAME = "c4jax.dataset"
FORMAT_VERSION = 2  # 1 (boards only, naming no game) is no longer read


class DatasetNotFoundError(FileNotFoundError, ValueError):
    """A dataset file does not exist (both a ``FileNotFoundError`` and a ``ValueError``)."""


def action_dtype(game) -> np.dtype:
    """The narrowest signed integer that holds ``game``'s actions (int8 for seven)."""
    return np.dtype(np.int8 if game.num_actions <= 128 else np.int16 if game.num_actions <= 2**15 else np.int32)


@functools.lru_cache(maxsize=None)
def observation_dtype(game) -> np.dtype:
    """The dtype of ``game``'s observations (traced, not computed)."""
    state = jax.eval_shape(game.init, jax.random.key(0))
    return np.dtype(jax.eval_shape(game.observe, state).dtype)


@dataclasses.dataclass
class Dataset:
    """N (observation, action) pairs of the game ``game`` (an id); rows sharing a ``groups`` id are images of
    one position under the kit's symmetries, the group's first row first. ``ValueError`` for bad arrays."""

    observations: np.ndarray  # [N, *observation_shape]: the mover's view
    actions: np.ndarray  # int[N]: the action played
    groups: np.ndarray  # int32[N]: group id
    info: dict = dataclasses.field(default_factory=dict)
    game: str = dataclasses.field(kw_only=True)  # a c4jax.games.GAMES id

    def __post_init__(self):
        game = games.make(self.game)
        self.observations = _as_int(self.observations, observation_dtype(game), "observations")
        self.actions = _as_int(self.actions, action_dtype(game), "actions")
        self.groups = _as_int(self.groups, np.int32, "groups")
        n = self.observations.shape[0] if self.observations.ndim else -1
        shape = (n, *game.observation_shape)
        if self.observations.shape != shape or self.actions.shape != (n,) or self.groups.shape != (n,):
            raise ValueError(f"{self.game} dataset arrays must have shapes observations [N, "
                             f"{', '.join(map(str, game.observation_shape))}], actions [N], groups [N]; got "
                             f"{self.observations.shape}, {self.actions.shape}, {self.groups.shape}")

    def __len__(self) -> int:
        return int(self.observations.shape[0])

    def take(self, indices) -> Dataset:
        """The rows ``indices`` (in that order), groups, info and game kept."""
        idx = np.asarray(indices)
        return Dataset(self.observations[idx], self.actions[idx], self.groups[idx], dict(self.info), game=self.game)

    def validate(self, where: str = "dataset") -> Dataset:
        """Check every row; ``ValueError`` naming ``where`` and the first bad row. Returns self."""
        validate_rows(games.make(self.game), self.observations, self.actions, self.groups, lambda i: f"{where}: row {i}")
        return self

    def split(self, fractions=(0.8, 0.1, 0.1), seed: int = 0) -> tuple[Dataset, ...]:
        """Random disjoint parts of whole groups (default train/val/test), each boundary the group boundary
        closest to ``round(N * sum(fractions[:k+1]))``; rows keep their order. ``ValueError`` for bad fractions."""
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
            f, format=np.array(FORMAT_NAME), version=np.array(FORMAT_VERSION, np.int32), game=np.array(self.game),
            observations=self.observations, actions=self.actions, groups=self.groups,
            info=np.array(json.dumps(self.info, sort_keys=True))))
        return path

    @classmethod
    def load_npz(cls, path) -> Dataset:
        """Read and validate a file written by :meth:`save_npz`; ``ValueError`` naming the path."""
        path = existing_file(path, "dataset file")
        try:
            z = np.load(path, allow_pickle=False)
            if not isinstance(z, np.lib.npyio.NpzFile):
                raise _NotADataset("it holds a single .npy array, not an .npz archive")
            with z:
                missing = [k for k in ("format", "version", "actions", "groups") if k not in z.files]
                if missing:
                    raise _NotADataset(f"missing arrays {missing} (has {sorted(z.files)})")
                fmt = z["format"]
                if fmt.shape != () or str(fmt) != FORMAT_NAME:
                    raise _NotADataset(f"format tag is {fmt!r}, expected {FORMAT_NAME!r}")
                version = int(z["version"])
                missing = [k for k in ("observations", "game") if k not in z.files]
                if missing and version == FORMAT_VERSION:
                    raise _NotADataset(f"missing arrays {missing} (has {sorted(z.files)})")
                arrays = {k: z[k] for k in ("observations", "actions", "groups") if k in z.files}
                game_id = str(z["game"]) if "game" in z.files else None
                info = json.loads(str(z["info"])) if "info" in z.files else {}
        except DatasetNotFoundError:
            raise
        except _NotADataset as e:
            raise ValueError(f"{path} is not a c4jax dataset file: {e}") from None
        except Exception as e:  # corrupted archive: zipfile/zlib/EOF/ValueError from numpy
            raise ValueError(f"{path} cannot be read as a c4jax dataset .npz ({type(e).__name__}: {e})") from e
        if version != FORMAT_VERSION:
            raise ValueError(f"{path}: dataset format version {version} " + (
                f"is newer than this c4jax supports ({FORMAT_VERSION}); upgrade c4jax" if version > FORMAT_VERSION
                else "does not exist" if version < 1 else
                f"names no game and is no longer read (this c4jax reads version {FORMAT_VERSION}): make it again"))
        if game_id not in games.GAMES:
            raise ValueError(f"{path} holds a dataset of the game {game_id!r}, which this c4jax has not "
                             f"(games: {', '.join(games.GAMES)})")
        game = games.make(game_id)
        observations = arrays.pop("observations")
        want = {"observations": (observations, observation_dtype(game), 1 + len(game.observation_shape)),
                "actions": (arrays["actions"], action_dtype(game), 1), "groups": (arrays["groups"], np.int32, 1)}
        for k, (a, dtype, ndim) in want.items():
            if a.dtype != dtype or a.ndim != ndim:
                raise ValueError(f"{path}: array {k!r} must be {np.dtype(dtype).name} with {ndim} "
                                 f"dimension(s), got {a.dtype} with shape {a.shape}")
        n = observations.shape[0]
        if observations.shape[1:] != tuple(game.observation_shape) or arrays["actions"].shape != (n,) \
                or arrays["groups"].shape != (n,):
            raise ValueError(f"{path}: shapes must be observations [N, {', '.join(map(str, game.observation_shape))}], "
                             f"actions [N], groups [N]; got {observations.shape}, {arrays['actions'].shape}, "
                             f"{arrays['groups'].shape}")
        validate_rows(game, observations, arrays["actions"], arrays["groups"], lambda i: f"{path}: row {i}")
        return cls(observations, arrays["actions"], arrays["groups"], info, game=game_id)


class _NotADataset(Exception):
    pass


def existing_file(path, what: str) -> Path:
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


def validate_rows(game, observations: np.ndarray, actions: np.ndarray, groups: np.ndarray | None, where) -> None:
    """``ValueError`` (naming row i by ``where(i)``) unless observations are in the kit's range and unfinished,
    actions legal and each group holds images of one position."""
    if len(observations) == 0:
        return
    kit = games.kit_of(game)
    if kit.observation_range is not None:
        low, high = (np.broadcast_to(np.asarray(x), observations.shape[1:]) for x in kit.observation_range)
        bad = ((observations < low) | (observations > high)).reshape(len(observations), -1).any(axis=1)
        if bad.any():
            raise ValueError(f"{where(int(np.argmax(bad)))}: observation values outside the game's range")
    if kit.playable is not None:
        try:
            _, finished = kit.playable(observations)
        except ValueError as e:
            m = _BOARD_MSG.match(str(e))
            if m is None:
                raise ValueError(f"{where(0)}: invalid positions: {e}") from None
            raise ValueError(f"{where(int(m.group(1)))}: invalid board: the board {m.group(2)}") from None
        if finished.any():
            raise ValueError(f"{where(int(np.argmax(finished)))}: invalid position: the game is over")
    bad = (actions < 0) | (actions >= game.num_actions)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{where(i)}: action {int(actions[i])} is outside 0..{game.num_actions - 1}")
    if kit.observation_legal is not None:
        legal = np.asarray(kit.observation_legal(observations))
        illegal = ~legal[np.arange(len(actions)), actions.astype(np.int64)]
        if illegal.any():
            i = int(np.argmax(illegal))
            raise ValueError(f"{where(i)}: action {int(actions[i])} is not legal in that position")
    if groups is not None:
        canon = _canonical(game, observations)
        _, first, inverse = np.unique(groups, return_index=True, return_inverse=True)
        bad = (canon != canon[first[inverse]]).any(axis=1)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{where(i)}: shares group {int(groups[i])} with row {int(first[inverse[i]])}, "
                             "but the positions are not images of one another")


# --------------------------------------------------------------------------- keys of positions


def _images(game, observations: np.ndarray) -> list[np.ndarray]:
    """The images of ``observations`` ``[n, ...]`` under each of the kit's symmetries, in its order."""
    return [np.asarray(s.observation(observations)).astype(observations.dtype)
            for s in games.kit_of(game).symmetries]


def _canonical(game, observations: np.ndarray, images: list[np.ndarray] | None = None) -> np.ndarray:
    """``[n, size]``: the lexicographically smallest of each flat observation and its images."""
    n, size = len(observations), int(np.prod(observations.shape[1:]))
    best = observations.reshape(n, size)
    rows = np.arange(n)
    for image in _images(game, observations) if images is None else images:
        flat = image.reshape(n, size)
        diff = best != flat
        first = diff.argmax(axis=1)
        keep = ~diff.any(axis=1) | (best[rows, first] < flat[rows, first])
        best = np.where(keep[:, None], best, flat)
    return best


def _void(flat: np.ndarray) -> np.ndarray:
    """[n] opaque byte keys of the rows of a contiguous 2-D array (for np.unique)."""
    flat = np.ascontiguousarray(flat)
    return flat.view(np.dtype((np.void, flat.shape[1] * flat.itemsize))).ravel()


def group_ids(observations: np.ndarray, game) -> np.ndarray:
    """int32[N]: one id per class of observations that are images of one another, in order of appearance."""
    n = len(observations)
    if n == 0:
        return np.zeros(0, np.int32)
    _, first, inverse = np.unique(_void(_canonical(game, np.asarray(observations))), return_index=True,
                                  return_inverse=True)
    rank = np.empty(first.size, np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inverse.ravel()].astype(np.int32)


def _text_format(game: str):
    if games.kit_of(game).text_format is None:
        raise ValueError(f"{game} has no dataset text format")
    return importlib.import_module(games.kit_of(game).text_format)


def export_text(dataset: Dataset, path) -> Path:
    """Write ``dataset`` in its game's text format (groups not stored), parents created; returns the path."""
    data = _text_format(dataset.game).format_pairs(dataset.observations, dataset.actions)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_atomic(path, lambda f: f.write(data))
    return path


def import_text(path, game: str) -> Dataset:
    """Read and validate a dataset in ``game``'s text format, grouping images (:func:`group_ids`); ``ValueError``
    naming the path and the pair on a malformed pair or an invalid position."""
    path = existing_file(path, "dataset text file")
    observations, actions = _text_format(game).parse_pairs(path.read_bytes(), str(path))
    played = games.make(game)
    if len(actions):
        validate_rows(played, observations, actions, None, lambda i: f"{path}: pair {i}")
    return Dataset(observations, actions, group_ids(observations, played), {"imported_from": str(path)}, game=played.id)


# --------------------------------------------------------------------------- generation


@dataclasses.dataclass
class GenerationStats:
    """Where :func:`generate`'s time went (seconds, wall clock) and what it saw."""

    batches: int = 0
    games: int = 0
    positions: int = 0  # positions met (moves played by the teacher), duplicates included
    originals: int = 0  # rows the teacher played (first of each group)
    images: int = 0  # rows added as images under the symmetries
    first_batch_s: float = 0.0  # the first batch: compilation + games + host work
    device_wait_s: float = 0.0  # blocked on the jitted games after the first batch
    host_s: float = 0.0  # numpy deduplication / images after the first batch
    total_s: float = 0.0


COUNTS = ("batches", "games", "positions", "originals", "images")
STALLED_BATCHES = 3  # batches in a row without a new position after which generation gives up


def teacher_name(game, teacher: str = "") -> str:
    """The ``agents.load`` name of ``teacher`` (an agent of ``game``; ``""``: the game kit's teacher)."""
    return agents.in_game(teacher or games.kit_of(game).teacher, game.id)


def _random_moves(game, key, plies: int):
    """``game``'s start position after ``plies`` uniformly random legal moves (fewer if it ends)."""
    init_key, key = jax.random.split(key)
    state = game.init(init_key)
    for k in jax.random.split(key, plies):
        action = jax.random.categorical(k, jnp.where(state.legal_action_mask, 0.0, -jnp.inf))
        over = done(state)
        state = jax.tree.map(lambda a, b: jnp.where(over, a, b), state, game.step(state, action))
    return state


def start_positions(key, batch: int, game, opening_plies: int):
    """[batch] start positions: the kit's random ones, else the start after ``opening_plies`` random moves."""
    if games.kit_of(game).random_start is not None:
        return arena.random_initial_states(key, batch, game)
    return jax.vmap(lambda k: _random_moves(game, k, opening_plies))(jax.random.split(key, batch))


@functools.partial(jax.jit, static_argnames=("batch", "game", "opening_plies"))
def _play(agent, key, batch: int, game, opening_plies: int):
    """[batch] self-play games of ``agent`` from :func:`start_positions`, recorded."""
    start_key, play_key = jax.random.split(key)
    states = start_positions(start_key, batch, game, opening_plies)
    traj = arena.rollout(agent, None, states, True, play_key, game=game)
    return traj.observations, traj.actions.astype(action_dtype(game)), traj.valid


def generate(num_pairs: int = 200_000, *, game, seed: int = 0, batch: int = 4096, progress: bool = False,
             teacher: str | None = None, opening_plies: int = 4) -> Dataset:
    """Exactly ``num_pairs`` rows: distinct positions the teacher (an ``agents.load`` name; default the kit's)
    moved in, playing both sides of ``batch`` games of ``game`` at a time, each followed by its differing
    images. Deterministic in its arguments. ``ValueError`` when :data:`STALLED_BATCHES` batches in a row
    bring no new position.
    """
    return generate_with_stats(num_pairs, seed=seed, batch=batch, progress=progress, game=game, teacher=teacher,
                               opening_plies=opening_plies)[0]


@dataclasses.dataclass
class Progress:
    """:func:`generate_with_stats` after a batch: the rows so far, the next key and the counts; resuming from it
    gives exactly the dataset of an uninterrupted run."""

    observations: np.ndarray
    actions: np.ndarray
    groups: np.ndarray
    key: np.ndarray  # uint32 key data
    info: dict  # the generator settings (game, teacher, num_pairs, seed, batch...)
    counts: dict  # batches, games, positions, originals, images

    def save(self, path) -> Path:
        """Write an uncompressed ``.npz`` at ``path`` atomically (temporary file, flushed, renamed)."""
        path = Path(path)
        atomic.write_atomic(path, lambda f: np.savez(
            f, format=np.array(FORMAT_NAME + ".progress"), observations=self.observations, actions=self.actions,
            groups=self.groups, key=self.key, meta=np.array(json.dumps({"info": self.info, "counts": self.counts}))))
        return path

    @classmethod
    def load(cls, path) -> Progress:
        """Read :meth:`save`'s file; ``ValueError`` naming the path when it is damaged."""
        path = existing_file(path, "generation progress file")
        try:
            with np.load(path, allow_pickle=False) as z:
                if str(z["format"]) != FORMAT_NAME + ".progress":
                    raise ValueError(f"format tag {str(z['format'])!r}")
                meta = json.loads(str(z["meta"]))
                arrays = {k: z[k] for k in ("observations", "actions", "groups", "key")}
            Dataset(arrays["observations"], arrays["actions"], arrays["groups"],
                    game=meta["info"]["game"])  # shapes and dtypes
        except Exception as e:  # a damaged archive: zipfile (CRC), zlib, numpy, json
            raise ValueError(f"{path} cannot be read as generation progress ({type(e).__name__}: "
                             f"{' '.join(str(e).split())[:200]})") from None
        return cls(**arrays, info=meta["info"], counts=meta["counts"])


def _check_count(value, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def generate_with_stats(num_pairs: int = 200_000, *, seed: int = 0, batch: int = 4096,
                        progress: bool = False, resume: Progress | None = None,
                        on_batch=None, game, teacher: str | None = None,
                        opening_plies: int = 4) -> tuple[Dataset, GenerationStats]:
    """``(dataset, stats)``: :func:`generate`'s dataset and :class:`GenerationStats`. ``on_batch(progress)`` is called
    after every batch; ``resume`` continues a :class:`Progress` of the same settings (``ValueError`` otherwise)."""
    num_pairs, batch = _check_count(num_pairs, "num_pairs", 0), _check_count(batch, "batch", 1)
    kit = games.kit_of(game)
    teacher = teacher_name(game, teacher or "")
    info = {"generator": "c4jax.learning.dataset.generate", "game": game.id, "agent": teacher,
            "num_pairs": num_pairs, "seed": int(seed), "batch": batch}
    if kit.random_start is None:
        info["opening_plies"] = _check_count(opening_plies, "opening_plies", 0)
    stats = GenerationStats()
    t_start = time.perf_counter()
    agent = agents.load(teacher)
    seen: set[bytes] = set()  # canonical keys of every collected position
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    rows = 0
    key = jax.random.key(seed)
    if resume is not None:
        if resume.info != info:
            raise ValueError(f"the progress to resume was made with {resume.info}, not {info}")
        parts.append((resume.observations, resume.actions, resume.groups))
        rows = len(resume.observations)
        # The collected set is closed under the symmetries: its canonical keys are those of every row.
        seen.update(_void(_canonical(game, resume.observations)).tolist())
        for name, value in resume.counts.items():
            setattr(stats, name, value)
        key = jax.random.wrap_key_data(jnp.asarray(resume.key))
    bar = _progress_bar(num_pairs, rows, teacher) if progress else None
    key, subkey = jax.random.split(key)
    pending = _play(agent, subkey, batch, game, opening_plies) if num_pairs else None
    first, stalled = True, 0  # this call's first batch (compilation included); batches in a row without a new row
    try:
        while rows < num_pairs:
            t0 = time.perf_counter()
            observations, actions, valid = (np.asarray(x) for x in pending)  # waits for the games
            # Dispatch the next batch now so that it plays while the host deduplicates this one.
            key_before = key  # what a resumed run splits this next batch's key from
            key, subkey = jax.random.split(key)
            pending = _play(agent, subkey, batch, game, opening_plies)
            t1 = time.perf_counter()
            b, a, g, n_orig = _new_rows(game, observations[valid], actions[valid], seen, num_pairs - rows,
                                        stats.originals)
            parts.append((b, a, g))
            rows += len(b)
            stats.batches += 1
            stats.games += batch
            stats.positions += int(valid.sum())
            stats.originals += n_orig
            stats.images += len(b) - n_orig
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
                on_batch(Progress(*parts[0], key=np.asarray(jax.random.key_data(key_before)), info=info,
                                  counts={k: getattr(stats, k) for k in COUNTS}))
            stalled = stalled + 1 if len(b) == 0 else 0
            if stalled >= STALLED_BATCHES and rows < num_pairs:
                raise ValueError(f"{teacher} played no new position in {stalled} batches of {batch} games "
                                 f"({rows:,} of {num_pairs:,} rows collected): its games repeat; ask for fewer "
                                 f"rows{', more opening plies' if kit.random_start is None else ''} or a sampling teacher")
    finally:
        if bar is not None:
            bar.close()
    if parts:
        observations, actions, groups = (np.concatenate(x) for x in zip(*parts))
    else:
        observations = np.zeros((0, *game.observation_shape), observation_dtype(game))
        actions, groups = np.zeros(0, action_dtype(game)), np.zeros(0, np.int32)
    stats.total_s = time.perf_counter() - t_start
    return Dataset(observations, actions, groups, info, game=game.id), stats


def _new_rows(game, observations: np.ndarray, actions: np.ndarray, seen: set[bytes], room: int, group0: int):
    """``(observations, actions, groups, originals)``, at most ``room`` rows, of the positions of one batch
    whose canonical key is not in ``seen`` (updated), each followed by its images."""
    images = _images(game, observations)
    canon = _canonical(game, observations, images)
    _, first = np.unique(_void(canon), return_index=True)
    first.sort()  # first occurrence of each distinct key, in the order met
    keys = _void(canon[first]).tolist()
    fresh = np.fromiter((k not in seen for k in keys), bool, count=first.size)
    idx = first[fresh]
    # each original, then its images that differ from it and from the images before them
    rows_obs, rows_act = [observations[idx]], [actions[idx]]
    for sym, image in zip(games.kit_of(game).symmetries, images):
        rows_obs.append(image[idx])
        rows_act.append(np.asarray(sym.action(actions[idx].astype(np.int32))).astype(actions.dtype))
    flat = [o.reshape(len(idx), int(np.prod(o.shape[1:]))) for o in rows_obs]
    distinct = np.stack([np.ones(len(idx), bool)] + [
        ~np.any([(flat[k] == flat[j]).all(axis=1) for j in range(k)], axis=0) for k in range(1, len(flat))], axis=1)
    counts = distinct.sum(axis=1)
    # Truncate to `room` rows: keep originals while their first row fits.
    starts = np.cumsum(counts) - counts
    keep = starts < room
    distinct = distinct[keep]
    seen.update(keys[i] for i in np.flatnonzero(fresh)[keep])
    out_obs = np.stack([o[keep] for o in rows_obs], axis=1)[distinct]  # row-major: each original, then its images
    out_act = np.stack([a[keep] for a in rows_act], axis=1)[distinct]
    groups = (group0 + np.repeat(np.arange(int(keep.sum())), counts[keep])).astype(np.int32)
    return out_obs[:room], out_act[:room], groups[:room], int(keep.sum())


def _progress_bar(total: int, initial: int, teacher: str):
    from c4jax.io import progress

    return progress.bar(total, initial=initial, unit="rows", desc=f"{teacher} pairs")
