"""Atomic file writes, the one way this package replaces a file.

:func:`write_atomic` hands a callback a binary file open on a temporary file beside the target,
named ``.<name>.<pid>.tmp``; the file is flushed and synced to disk, renamed over the target with
``os.replace`` and the directory is synced, so that a reader, or a run resumed after a kill or a
power cut, finds the old file or the new one, never a part of either. A write that raises leaves
the target as it was and deletes its temporary file. Temporary files that a killed process left
behind (``.<name>.*.tmp``) are deleted after the next successful write of the same target.
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
    """Replace the file ``path`` with what ``write(f)`` writes to the binary file ``f``, atomically
    and durably (see the module docstring). The parent directory must exist. Returns ``path``."""
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
    """Delete the temporary files of ``path`` (``.<name>.*.tmp``) that a process killed while
    writing it left behind."""
    path = Path(path)
    for stale in path.parent.glob(f".{path.name}.*.tmp"):
        stale.unlink(missing_ok=True)


def fsync_dir(path: str | os.PathLike) -> None:
    """Sync the directory ``path`` to disk (its entries: a rename, a new file); a file system that
    cannot sync a directory is left as it is."""
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
