"""Atomic file writes, the one way this package replaces a file.

:func:`write_atomic` writes to ``.<name>.<pid>.tmp`` beside the target, syncs it, renames it over
the target and syncs the directory: a reader, or a run resumed after a kill or a power cut, finds
the old file or the new one. A write that raises leaves the target as it was. Temporaries left by a
killed process are deleted after the next successful write of the same target.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Callable


def temporary_path(path: str | os.PathLike) -> Path:
    """Where this process writes ``path`` before renaming it: ``.<name>.<pid>.tmp`` beside it."""
    path = Path(path)
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def write_atomic(path: str | os.PathLike, write: Callable[[IO[bytes]], object]) -> Path:
    """Replace the file ``path`` with what ``write(f)`` writes to the binary file ``f``, atomically;
    the parent directory must exist. Returns ``path``."""
    path = Path(path)
    tmp = temporary_path(path)
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
    remove_stale_temporaries(path)
    return path


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Replace the file ``path`` with ``text`` (UTF-8), atomically (:func:`write_atomic`)."""
    data = text.encode("utf-8")
    return write_atomic(path, lambda f: f.write(data))


def remove_stale_temporaries(path: str | os.PathLike) -> None:
    """Delete the temporary files of ``path`` (``.<name>.*.tmp``)."""
    path = Path(path)
    for stale in path.parent.glob(f".{path.name}.*.tmp"):
        stale.unlink(missing_ok=True)


def fsync_dir(path: str | os.PathLike) -> None:
    """Sync the directory ``path``'s entries to disk where the file system can."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
