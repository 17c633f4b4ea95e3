"""A run's portable state: everything that continues its training except the replay buffers.

``<out>/portable/`` is written beside ``<out>/last/`` at every evaluation (:func:`save`), a few MB.
``--resume`` without ``last/`` starts from it (:func:`load`) and refills the buffers by self-play
(:func:`refill`), which is not bit-exact.

Layout (format ``c4jax-portable-state``, version :data:`FORMAT_VERSION`):

- ``state-<updates>.npz``: one array per leaf of ``{"state": ..., "old_params": ...}``, named by
  its path (``state/params/conv/kernel``, ``state/opt_state/0/mu/...``); PRNG keys as their
  ``uint32`` key data;
- ``metadata.json``: ``format``, ``format_version``, ``state_file`` (the ``.npz`` it belongs to),
  ``checksum`` (``sha256:`` of that file's bytes), ``algorithm``, ``game``, ``seeds``, ``config``,
  ``loop`` (the host loop's counters), ``updates`` (per seed), ``buffers`` (each buffer's path and
  its size per seed) and ``keys`` (the paths stored as key data).

The ``.npz`` is written first, then ``metadata.json`` (both atomically), then older ``.npz`` files
are deleted: a run killed at any moment leaves a metadata file naming a complete state.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any

import jax
import numpy as np

from c4jax.io import atomic, devices
from c4jax.io.checkpoint import CheckpointError
from c4jax.learning import buffer as rb
from c4jax.learning.stacked import seed_slice, stack_seeds
from c4jax.learning.train_state import data_to_keys, is_key, keys_to_data

PORTABLE = "portable"  # the folder inside a run directory
FORMAT = "c4jax-portable-state"
FORMAT_VERSION = 1
METADATA_FILE = "metadata.json"


def _is_buffer(x) -> bool:
    return isinstance(x, rb.Buffer)


def _strip(tree):
    return jax.tree.map(lambda x: None if _is_buffer(x) else x, tree, is_leaf=_is_buffer)


def _part(entry) -> str:
    for attr in ("key", "name", "idx"):
        if hasattr(entry, attr):
            return str(getattr(entry, attr))
    return str(entry)


def _named(tree) -> tuple[list[str], list[Any], Any]:
    """``(/-joined path names, leaves, treedef)`` of ``tree``."""
    with_paths, treedef = jax.tree_util.tree_flatten_with_path(tree)
    return ["/".join(_part(e) for e in path) for path, _ in with_paths], [leaf for _, leaf in with_paths], treedef


def _buffer_paths(state) -> list[tuple[str, rb.Buffer]]:
    with_paths, _ = jax.tree_util.tree_flatten_with_path(state, is_leaf=_is_buffer)
    return [("/".join(_part(e) for e in path), leaf) for path, leaf in with_paths if _is_buffer(leaf)]


def buffer_sizes(state) -> dict[str, list[int]]:
    """``{buffer path: filled rows per seed}`` of a seed-stacked training state."""
    return {path: [int(n) for n in np.asarray(devices.to_host(b.size)).reshape(-1)] for path, b in _buffer_paths(state)}


def exists(directory: str | os.PathLike) -> bool:
    """Whether ``directory`` holds a portable state's metadata (it may still be damaged)."""
    return (Path(directory) / METADATA_FILE).is_file()


def save(directory: str | os.PathLike, state, old_params, loop: dict, meta: dict, write: bool = True) -> Path:
    """Write the seed-stacked ``state`` (leaves ``[K, ...]``) without buffers, ``old_params``, the loop
    counters ``loop`` and the run's ``meta`` to ``directory``. Every process calls it; only the one with
    ``write`` writes. Returns the ``.npz`` path."""
    directory = Path(directory)
    tree = devices.to_host({"state": keys_to_data(_strip(state)), "old_params": old_params})
    sizes = buffer_sizes(state)
    updates = [int(u) for u in np.asarray(devices.to_host(state.updates)).reshape(-1)]
    state_file = f"state-{min(updates)}.npz"
    if not write:
        return directory / state_file
    directory.mkdir(parents=True, exist_ok=True)
    keys = [n for n, leaf in zip(*_named({"state": _strip(state), "old_params": old_params})[:2]) if is_key(leaf)]
    names, leaves, _ = _named(tree)
    data = io.BytesIO()
    np.savez(data, **{n: np.asarray(leaf) for n, leaf in zip(names, leaves)})
    data = data.getvalue()
    atomic.write_atomic(directory / state_file, lambda f: f.write(data))
    record = {**meta, "format": FORMAT, "format_version": FORMAT_VERSION, "state_file": state_file,
              "checksum": "sha256:" + hashlib.sha256(data).hexdigest(), "loop": loop, "updates": updates,
              "buffers": sizes, "keys": keys}
    atomic.write_text_atomic(directory / METADATA_FILE, json.dumps(record, indent=1, default=str))
    for old in directory.glob("state-*.npz"):
        if old.name != state_file:
            old.unlink(missing_ok=True)
    return directory / state_file


def read_metadata(directory: str | os.PathLike) -> dict:
    """``metadata.json`` in ``directory``; :class:`CheckpointError` if missing, unreadable, foreign or newer."""
    path = Path(directory) / METADATA_FILE
    try:
        meta = json.loads(path.read_text())
    except FileNotFoundError:
        raise CheckpointError(f"{str(directory)!r} holds no portable state (no {METADATA_FILE})") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"portable state {str(directory)!r}: unreadable {METADATA_FILE}: {e}") from e
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{str(path)!r} is not a c4jax portable state")
    if meta.get("format_version", 0) > FORMAT_VERSION:
        raise CheckpointError(f"portable state {str(directory)!r} has format version {meta['format_version']}; this "
                              f"c4jax reads up to {FORMAT_VERSION}: upgrade c4jax")
    return meta


def load(directory: str | os.PathLike, state_like, params_like, seeds: list[int], game: str):
    """``(state, old_params, loop, targets)`` from the portable state in ``directory``.

    ``state_like``/``params_like``: the run's fresh templates (buffers stay empty); ``targets``: the rows
    per seed each buffer held (for :func:`refill`). :class:`CheckpointError` when the state is missing,
    damaged, of another game, seeds or shape."""
    directory = Path(directory)
    meta = read_metadata(directory)
    where = f"portable state {str(directory)!r}"
    if meta.get("game") != game:
        raise CheckpointError(f"{where} is of the game {meta.get('game')!r}, not {game!r}")
    if meta.get("seeds") != seeds:
        raise CheckpointError(f"--resume: {where} holds seeds {meta.get('seeds')}, not {seeds}")
    path = directory / str(meta.get("state_file"))
    try:
        data = path.read_bytes()
    except OSError as e:
        raise CheckpointError(f"{where}: its state file is unreadable: {e}") from e
    if "sha256:" + hashlib.sha256(data).hexdigest() != meta.get("checksum"):
        raise CheckpointError(f"{where} is damaged: {path.name} does not match its checksum")
    like = {"state": keys_to_data(_strip(state_like)), "old_params": params_like}
    names, leaves, treedef = _named(like)
    with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
        missing, extra = sorted(set(names) - set(arrays.files)), sorted(set(arrays.files) - set(names))
        if missing or extra:
            raise CheckpointError(f"{where} does not fit this run's training state (another algorithm or network?): "
                                  f"missing {missing[:3]}, unexpected {extra[:3]}")
        restored = []
        for name, leaf in zip(names, leaves):
            a = arrays[name]
            if a.shape != tuple(leaf.shape) or a.dtype != np.dtype(leaf.dtype):
                raise CheckpointError(f"{where}: {name} is {a.dtype}{list(a.shape)}, this run's is "
                                      f"{np.dtype(leaf.dtype)}{list(leaf.shape)}")
            restored.append(a)
    tree = jax.tree_util.tree_unflatten(treedef, restored)
    loaded = iter(jax.tree.leaves(data_to_keys(tree["state"], _strip(state_like))))
    fresh, structure = jax.tree.flatten(state_like, is_leaf=_is_buffer)
    state = jax.tree.unflatten(structure, [x if _is_buffer(x) else next(loaded) for x in fresh])
    return state, tree["old_params"], meta["loop"], meta.get("buffers", {})


def refill(algo, state, targets: dict[str, list[int]], k_seeds: int):
    """``(state, rounds)``: rounds of ``algo.collect`` until every buffer holds its ``targets`` rows per seed
    (capped at its capacity)."""
    paths = dict(_buffer_paths(state))
    # leaves of a stacked buffer are [K, capacity, ...]
    goal = {p: np.minimum(np.asarray(n), jax.tree.leaves(paths[p].items)[0].shape[1])
            for p, n in targets.items() if p in paths}
    if not any(g.max() > 0 for g in goal.values()):
        return state, 0
    if k_seeds > 1:
        collect = jax.jit(jax.vmap(algo.collect))
    else:
        one = jax.jit(algo.collect)
        collect = lambda s: stack_seeds([one(seed_slice(s, 0))])  # noqa: E731
    rounds = 0
    while True:
        sizes = buffer_sizes(state)
        if all((np.asarray(sizes[p]) >= g).all() for p, g in goal.items()):
            return state, rounds
        state = collect(state)
        rounds += 1
