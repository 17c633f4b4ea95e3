"""Checkpoints: one directory per run, an Orbax pytree plus ``metadata.json``.

Layout of a checkpoint directory (it may also hold a run's logs and plots)::

    metadata.json   format version, c4jax version, algorithm, network (width, heads),
                    agent settings, config, metrics, command line, saved-at time, and
                    ``state_dir``: the name of the directory below
    state-<stamp>/  Orbax StandardCheckpointHandler directory of the pytree

A save is atomic: the pytree goes to a new ``state-<stamp>`` directory, then
``metadata.json`` is replaced in one ``os.replace`` (the commit point), then the
older state directories are deleted. An interrupted save leaves the previous
checkpoint readable, and files that are not part of the checkpoint (logs) are
never touched. Loading checks the metadata and restores the pytree against an
abstract template (shapes and dtypes), so a checkpoint of another architecture
fails loudly instead of loading garbage.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import jax
import numpy as np
import orbax.checkpoint as ocp

from c4jax._version import __version__
from c4jax.io.jsonutil import json_default

FORMAT_VERSION = 1
METADATA_FILE = "metadata.json"
STATE_PREFIX = "state-"


class CheckpointError(ValueError):
    """A checkpoint directory is missing, not a checkpoint, or unreadable."""


def save(directory: str | os.PathLike, tree: Any, metadata: dict) -> Path:
    """Atomically write ``tree`` (a pytree of arrays) and ``metadata`` to ``directory``.

    ``metadata`` gets ``format_version``, ``c4jax_version``, ``saved_at``, ``state_dir``
    and, unless given, ``command`` (this process' command line). Returns the directory.
    """
    directory = Path(directory).absolute()
    directory.mkdir(parents=True, exist_ok=True)
    state_dir = f"{STATE_PREFIX}{time.time_ns()}"
    meta = {
        "format_version": FORMAT_VERSION,
        "c4jax_version": __version__,
        "saved_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join([Path(sys.argv[0]).name] + sys.argv[1:]) if sys.argv else "",
        **metadata,
        "state_dir": state_dir,
    }
    try:
        with _checkpointer() as ckptr:
            ckptr.save(directory / state_dir, args=ocp.args.StandardSave(jax.device_get(tree)))
        _relative_commit_note(directory / state_dir)
        fd, tmp = tempfile.mkstemp(prefix=f".{METADATA_FILE}.", dir=directory)
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps(meta, indent=2, default=json_default) + "\n")
        os.replace(tmp, directory / METADATA_FILE)  # the commit point
    except BaseException:
        shutil.rmtree(directory / state_dir, ignore_errors=True)
        raise
    # The previous state directory, and leftovers of interrupted saves.
    for p in directory.glob(f"{STATE_PREFIX}*"):
        if p.name != state_dir:
            shutil.rmtree(p, ignore_errors=True)
    return directory


def _checkpointer() -> ocp.Checkpointer:
    """Orbax's checkpointer of one pytree. In a multi-process run each process saves and restores
    on its own (no barrier with the others): only process 0 saves, every process restores."""
    if jax.process_count() == 1:
        return ocp.Checkpointer(ocp.StandardCheckpointHandler())
    me = jax.process_index()
    return ocp.Checkpointer(ocp.StandardCheckpointHandler(),
                            multiprocessing_options=ocp.options.MultiprocessingOptions(primary_host=me, active_processes={me}))


def _relative_commit_note(state_path: Path) -> None:
    """Orbax's ``commit_success.txt`` names the absolute path it wrote to; keep only the state
    directory's name, so a checkpoint that is copied or shipped names no path of this machine."""
    note = state_path / "commit_success.txt"
    if note.is_file():
        note.write_text(f"Checkpoint commit was successful to {state_path.name}")


def read_metadata(directory: str | os.PathLike) -> dict:
    """The metadata of a checkpoint; ``CheckpointError`` naming the path if it is not one."""
    directory = Path(directory)
    if not directory.exists():
        raise CheckpointError(f"checkpoint {str(directory)!r} does not exist")
    if not directory.is_dir():
        raise CheckpointError(f"checkpoint {str(directory)!r} is not a directory")
    meta_path = directory / METADATA_FILE
    if not meta_path.is_file():
        raise CheckpointError(
            f"{str(directory)!r} is not a c4jax checkpoint: it has no {METADATA_FILE}"
        )
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"checkpoint {str(directory)!r}: unreadable {METADATA_FILE}: {e}") from e
    if not isinstance(meta, dict) or "format_version" not in meta:
        raise CheckpointError(f"checkpoint {str(directory)!r}: {METADATA_FILE} has no format_version")
    if meta["format_version"] > FORMAT_VERSION:
        raise CheckpointError(
            f"checkpoint {str(directory)!r} has format version {meta['format_version']}; this c4jax "
            f"reads up to {FORMAT_VERSION}: upgrade c4jax"
        )
    state_dir = meta.get("state_dir")
    if not isinstance(state_dir, str) or not (directory / state_dir).is_dir():
        raise CheckpointError(f"checkpoint {str(directory)!r} is incomplete: no state directory {state_dir!r}")
    return meta


def restore(directory: str | os.PathLike, like: Any) -> Any:
    """Restore the pytree saved in ``directory``, shaped like the template ``like``.

    ``like`` is a pytree of arrays or ``jax.ShapeDtypeStruct`` (e.g. freshly initialised
    parameters of the same architecture). Raises ``CheckpointError`` naming the path when
    the files are missing, truncated or corrupted, or the structure does not match.
    """
    directory = Path(directory).absolute()
    meta = read_metadata(directory)
    abstract = jax.tree.map(lambda x: jax.ShapeDtypeStruct(np.shape(x), x.dtype), like)
    try:
        with _checkpointer() as ckptr:
            tree = ckptr.restore(directory / meta["state_dir"], args=ocp.args.StandardRestore(abstract))
    except Exception as e:  # orbax/tensorstore raise many types for damaged files
        raise CheckpointError(
            f"checkpoint {str(directory)!r} could not be restored (missing, truncated or corrupted "
            f"files, or another architecture): {type(e).__name__}: {e}"
        ) from e
    for (path, got), want in zip(jax.tree_util.tree_flatten_with_path(tree)[0], jax.tree.leaves(abstract)):
        if np.shape(got) != want.shape:
            raise CheckpointError(
                f"checkpoint {str(directory)!r}: {jax.tree_util.keystr(path)} has shape {np.shape(got)}, "
                f"expected {want.shape}"
            )
    return tree
