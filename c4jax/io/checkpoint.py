"""Checkpoints: one directory per run, an Orbax pytree (``state-<stamp>/``) plus ``metadata.json``
(versions, game, agent and network description, config, command, time, the arrays' SHA-256
``checksum`` and ``state_dir``); ``keep_previous`` saves also keep ``previous.json`` and its state.

A save is atomic: the new state directory is synced, then ``metadata.json`` is replaced (the commit
point), then older state directories are deleted; a kill at any moment leaves the previous
checkpoint readable and touches no other file. Loading restores against an abstract template and
compares the checksum, so another architecture or damaged files raise ``CheckpointError``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import logging
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import jax
import numpy as np
import orbax.checkpoint as ocp

from c4jax._version import __version__
from c4jax.io import atomic
from c4jax.io.jsonutil import json_default
from c4jax.io.metadata import (FORMAT_VERSION, METADATA_FILE, PREVIOUS_FILE, STATE_PREFIX,  # noqa: F401
                                CheckpointError, exists, read_metadata, remove)

class CheckpointWriteError(CheckpointError, OSError):
    """A checkpoint could not be written (a full disk, a read-only folder); the previous one is kept."""


def save(directory: str | os.PathLike, tree: Any, metadata: dict, *, keep_previous: bool = False) -> Path:
    """Atomically write ``tree`` (a pytree of arrays) and ``metadata`` (completed with ``format_version``,
    ``c4jax_version``, ``saved_at``, ``checksum``, ``state_dir`` and, unless given, ``command``; the
    agent loaders need a ``game`` in it) to ``directory``; returns it. ``keep_previous`` keeps the
    replaced checkpoint for :func:`restore_latest`. ``CheckpointWriteError`` when the files cannot be
    written.
    """
    directory = Path(directory).absolute()
    directory.mkdir(parents=True, exist_ok=True)
    state_dir = f"{STATE_PREFIX}{time.time_ns()}"
    host_tree = jax.device_get(tree)
    meta = {
        "format_version": FORMAT_VERSION,
        "c4jax_version": __version__,
        "saved_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join([Path(sys.argv[0]).name] + sys.argv[1:]) if sys.argv else "",
        **metadata,
        "checksum": tree_checksum(host_tree),
        "state_dir": state_dir,
    }
    keep = {state_dir}
    try:
        with _checkpointer() as ckptr, _quiet_orbax():
            ckptr.save(directory / state_dir, args=ocp.args.StandardSave(host_tree))
        _relative_commit_note(directory / state_dir)
        _fsync_tree(directory / state_dir)
        if keep_previous:
            keep |= _keep_previous(directory)
        _write_json_atomic(directory / METADATA_FILE, meta)  # the commit point
    except BaseException as e:  # an error, or Ctrl-C: unless the commit happened, drop the new state
        committed = _committed_state(directory) == state_dir
        if not committed:
            _remove_state(directory, state_dir)
        reason = _write_failure(e)
        if reason is not None and not committed:
            raise CheckpointWriteError(f"cannot write the checkpoint {str(directory)!r}: {reason}; the checkpoint "
                                       f"that was there is kept") from e
        raise
    # The replaced state directory (unless kept), and leftovers of interrupted saves.
    for p in directory.glob(f"{STATE_PREFIX}*"):
        if p.name not in keep:
            shutil.rmtree(p, ignore_errors=True)
    for name in (METADATA_FILE, PREVIOUS_FILE):
        atomic.remove_stale_temporaries(directory / name)
    return directory


def _remove_state(directory: Path, state_dir: str, settle_s: float = 1.0) -> None:
    """Remove the state ``state_dir`` of ``directory`` and Orbax's temporary folder of it
    (``<state_dir>.orbax-checkpoint-tmp``), until neither has come back for 0.1 s or ``settle_s`` have
    passed: a failed save's storage threads may still finish a file (a manifest) after the error."""
    deadline, quiet_since = time.monotonic() + settle_s, None
    while time.monotonic() < deadline:
        leftovers = list(directory.glob(f"{state_dir}*"))
        for p in leftovers:
            shutil.rmtree(p, ignore_errors=True)
        now = time.monotonic()
        quiet_since = (quiet_since or now) if not leftovers else None
        if quiet_since is not None and now - quiet_since >= 0.1:
            return
        time.sleep(0.02)


def _write_failure(e: BaseException) -> str | None:
    """Why a save failed when it failed to write (the OS error's text), else None (a bug, Ctrl-C)."""
    if isinstance(e, OSError) and not isinstance(e, CheckpointError):
        return e.strerror or str(e)
    if isinstance(e, Exception):  # tensorstore (through Orbax) reports an OS error as text
        m = re.search(r"os_error_code='?(\d+)", str(e))
        if m:
            return os.strerror(int(m.group(1)))
    return None


@contextlib.contextmanager
def _quiet_orbax():
    """Silence Orbax's traceback log of a failed write (the error is raised anyway)."""
    logger = logging.getLogger("absl")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def _checkpointer() -> ocp.Checkpointer:
    """Orbax's checkpointer of one pytree; in a multi-process run each process on its own (no barrier)."""
    if jax.process_count() == 1:
        return ocp.Checkpointer(ocp.StandardCheckpointHandler())
    me = jax.process_index()
    return ocp.Checkpointer(ocp.StandardCheckpointHandler(),
                            multiprocessing_options=ocp.options.MultiprocessingOptions(primary_host=me, active_processes={me}))


def _committed_state(directory: Path) -> str | None:
    try:
        return json.loads((directory / METADATA_FILE).read_text()).get("state_dir")
    except (OSError, ValueError, AttributeError):
        return None


def _keep_previous(directory: Path) -> set[str]:
    """Make the committed checkpoint ``previous.json`` before it is replaced; the state directories
    to keep (none when there is no readable committed checkpoint: an older previous.json stays)."""
    try:
        meta = read_metadata(directory, game=None)
    except CheckpointError:
        try:
            return {read_metadata(directory, PREVIOUS_FILE, game=None)["state_dir"]}
        except CheckpointError:
            return set()
    _write_json_atomic(directory / PREVIOUS_FILE, meta)
    return {meta["state_dir"]}


def _write_json_atomic(path: Path, obj: dict) -> None:
    """``obj`` as indented JSON in ``path``, with :func:`atomic.write_atomic`."""
    text = (json.dumps(obj, indent=2, default=json_default) + "\n").encode("utf-8")
    atomic.write_atomic(path, lambda f: f.write(text))


def _fsync_tree(root: Path) -> None:
    """Flush every file and directory below ``root`` to disk."""
    for dirpath, _, files in os.walk(root):
        for name in files:
            with open(os.path.join(dirpath, name), "rb") as f:
                os.fsync(f.fileno())
        atomic.fsync_dir(dirpath)


def tree_checksum(tree: Any) -> str:
    """``sha256:<hex>`` of a pytree's arrays: their dtypes, shapes and bytes in flattening order."""
    h = hashlib.sha256()
    for leaf in jax.tree.leaves(tree):
        a = np.ascontiguousarray(np.asarray(leaf))
        h.update(f"{a.dtype.str}{a.shape};".encode())
        h.update(a.tobytes())
    return f"sha256:{h.hexdigest()}"


def _relative_commit_note(state_path: Path) -> None:
    """Make Orbax's ``commit_success.txt`` name the state directory, not this machine's absolute path."""
    note = state_path / "commit_success.txt"
    if note.is_file():
        note.write_text(f"Checkpoint commit was successful to {state_path.name}")


def restore(directory: str | os.PathLike, like: Any, *, meta: dict | None = None) -> Any:
    """Restore the pytree saved in ``directory``, shaped like the template ``like`` (arrays or
    ``jax.ShapeDtypeStruct``); ``meta``: its metadata when already read. ``CheckpointError`` naming
    the path for missing, truncated or corrupted files or another structure.
    """
    directory = Path(directory).absolute()
    meta = read_metadata(directory, game=None) if meta is None else meta
    abstract = jax.tree.map(lambda x: jax.ShapeDtypeStruct(np.shape(x), x.dtype), like)
    try:
        with _checkpointer() as ckptr:
            tree = ckptr.restore(directory / meta["state_dir"], args=ocp.args.StandardRestore(abstract))
    except Exception as e:  # orbax/tensorstore raise many types for damaged files
        raise CheckpointError(
            f"checkpoint {str(directory)!r} could not be restored (missing, truncated or corrupted "
            f"files, or another architecture): {type(e).__name__}: {_one_line(e)}"
        ) from e
    for (path, got), want in zip(jax.tree_util.tree_flatten_with_path(tree)[0], jax.tree.leaves(abstract)):
        if np.shape(got) != want.shape:
            raise CheckpointError(
                f"checkpoint {str(directory)!r}: {jax.tree_util.keystr(path)} has shape {np.shape(got)}, "
                f"expected {want.shape}"
            )
    if "checksum" in meta and tree_checksum(tree) != meta["checksum"]:  # older checkpoints have none
        raise CheckpointError(f"checkpoint {str(directory)!r} is corrupted: its arrays do not match the "
                              f"checksum in its metadata")
    return tree


def restore_latest(directory: str | os.PathLike, like: Any, *, check=None, warn=None) -> tuple[Any, dict]:
    """``(tree, metadata)`` of the checkpoint in ``directory`` or, when it is missing or damaged, of
    ``previous.json``'s (then made the latest again), with a one-line warning to ``warn`` (default:
    stderr). ``check(metadata)`` may refuse a checkpoint by raising (no fall back). ``CheckpointError``
    when neither restores."""
    directory = Path(directory)
    errors = []
    for name in (METADATA_FILE, PREVIOUS_FILE):
        if name == PREVIOUS_FILE and not (directory / name).is_file():
            break
        try:
            meta = read_metadata(directory, name, game=None)
        except CheckpointError as e:
            errors.append(str(e))
            continue
        if check is not None:
            check(meta)
        try:
            tree = restore(directory, like, meta=meta)
        except CheckpointError as e:
            errors.append(str(e))
            continue
        if errors:
            message = f"warning: {errors[0]}; using the previous checkpoint ({PREVIOUS_FILE}) instead"
            (warn or (lambda m: print(m, file=sys.stderr, flush=True)))(message)
            _write_json_atomic(directory / METADATA_FILE, meta)
        return tree, meta
    raise CheckpointError("; and the previous checkpoint: ".join(errors))


def _one_line(e: BaseException, limit: int = 300) -> str:
    """An exception's message on one line, at most ``limit`` characters."""
    text = " ".join(str(e).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
