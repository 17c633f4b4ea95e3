"""Output directories: :func:`claim` refuses, in one line (:class:`OutputError`), a ``--out`` that
holds results of its :class:`Kind` unless ``--resume`` or ``--overwrite`` is given, or that cannot
be written, before anything is computed or deleted. ``--overwrite`` deletes exactly what the kind owns.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping

from c4jax.io import metadata


class OutputError(ValueError):
    """An output destination that holds results the command would replace, or cannot be written."""


def _nonempty_file(p: Path) -> bool:
    try:
        return p.is_file() and p.stat().st_size > 0
    except OSError:
        return False


def _run_markers(d: Path) -> list[str]:
    found = []
    if _nonempty_file(d / "metrics.jsonl"):
        found.append("metrics.jsonl")
    for sub in ("last", "best"):
        if metadata.exists(d / sub):
            found.append(f"{sub}/")
    if (d / "portable" / "metadata.json").is_file():
        found.append("portable/")
    if (d / metadata.METADATA_FILE).is_file():
        found.append(metadata.METADATA_FILE)
    if (d / "summary.json").is_file():
        found.append("summary.json")
    return found


def _run_found(d: Path) -> list[str]:
    found = _run_markers(d)
    seeds = sorted(p.name + "/" for p in _glob(d, "seed_*") if p.is_dir() and _run_markers(p))
    return found + seeds


def _glob(d: Path, pattern: str) -> list[Path]:
    try:
        return sorted(d.glob(pattern)) if d.is_dir() else []
    except OSError:
        return []


def _files_found(names: Iterable[str]) -> Callable[[Path], list[str]]:
    def found(d: Path) -> list[str]:
        return sorted({p.name + ("/" if p.is_dir() else "") for pattern in names for p in _glob(d, pattern)})
    return found


@dataclass(frozen=True)
class Kind:
    """One kind of output: its name in messages, what shows that a destination holds one (``found``),
    the paths it owns (``--overwrite`` deletes them) and whether it resumes."""

    noun: str
    found: Callable[[Path], list[str]]
    owned: tuple[str, ...]
    resumable: bool = True
    is_file: bool = False  # the destination is a file (its folder is where it is written)


RUN = Kind(
    noun="run",
    found=_run_found,
    owned=("metrics.jsonl", "metrics.csv", "summary.json", "seeds.md", "curves.png", "curves_wall.png", "last", "portable", "best",
           "seed_*", metadata.METADATA_FILE, metadata.PREVIOUS_FILE, f"{metadata.STATE_PREFIX}*", "tb", "wandb"),
)
def _dataset_found(path: Path) -> list[str]:
    progress = path.with_name(path.name + ".progress")
    return [p.name for p in (path, progress) if p.exists()]


DATASET = Kind(noun="dataset", found=_dataset_found, owned=(), is_file=True)
TOURNAMENT = Kind(
    noun="tournament",
    found=_files_found(("tournament.json", "report.md", "table_5_*")),
    owned=("tournament.json", "report.md", "table_5_*", "ratings.md", "ratings.csv", "heatmap.png"),
    resumable=False,
)
YARDSTICK = Kind(
    noun="yardstick grading",
    found=_files_found(("yardstick.json", "yardstick.md", "yardstick.csv")),
    owned=("yardstick.json", "yardstick.md", "yardstick.csv", "yardstick.png"),
    resumable=False,
)
REPRODUCTION = Kind(
    noun="reproduction",
    found=_files_found(("report.md", "stages.json")),
    owned=("report.md", "stages.json"),
    resumable=False,
)


def found(out: str | os.PathLike, kind: Kind) -> list[str]:
    """What in ``out`` shows that it holds results of ``kind`` (empty: nothing)."""
    return kind.found(Path(out))


def _writable_dir(d: Path, flag: str) -> None:
    """Create ``d`` (and its parents) and check that a file can be created in it."""
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"cannot create {flag} {str(d)!r}: {e.strerror or e}") from None
    if not d.is_dir():
        raise OutputError(f"{flag} {str(d)!r} is not a directory")
    try:
        fd, probe = tempfile.mkstemp(prefix=".c4jax-write-test.", dir=d)
    except OSError as e:
        raise OutputError(f"cannot write to {flag} {str(d)!r}: {e.strerror or e}") from None
    os.close(fd)
    os.unlink(probe)


def remove(out: str | os.PathLike, kind: Kind) -> None:
    """Delete what ``kind`` owns in ``out`` (the dataset file and its progress for :data:`DATASET`)."""
    out = Path(out)
    if kind.is_file:
        for p in (out, out.with_name(out.name + ".progress")):
            p.unlink(missing_ok=True)
        return
    for pattern in kind.owned:
        for p in _glob(out, pattern):
            if p.is_dir() and not p.is_symlink():
                if metadata.exists(p):
                    metadata.remove(p)  # its metadata first: never a checkpoint naming deleted files
                else:
                    shutil.rmtree(p)
            else:
                p.unlink(missing_ok=True)


def claim(out: str | os.PathLike, kind: Kind, *, resume: bool = False, overwrite: bool = False,
          flag: str = "--out") -> Path:
    """Check that ``out`` may receive results of ``kind`` and make it ready; returns it as a Path.

    :class:`OutputError` when ``out`` cannot be written, for ``resume`` with ``overwrite``, and when
    ``out`` holds results of ``kind`` and neither is given. ``overwrite`` deletes what ``kind`` owns
    there (after the write check); ``resume`` leaves everything in place."""
    out = Path(out)
    if resume and overwrite:
        raise OutputError("--resume continues the run in --out and --overwrite replaces it: give one of them")
    if resume and not kind.resumable:
        raise OutputError("this command has no --resume")
    _writable_dir(out.parent if kind.is_file else out, flag if not kind.is_file else f"the folder of {flag}")
    held = found(out, kind)
    if held and not resume:
        if not overwrite:
            how = "pass --resume to continue it, --overwrite to replace it" if kind.resumable else \
                "pass --overwrite to replace it"
            raise OutputError(f"{flag} {str(out)!r} already holds a {kind.noun} ({', '.join(held)}): {how}, "
                              f"or choose another {flag}")
        try:
            remove(out, kind)
        except OSError as e:
            raise OutputError(f"--overwrite: cannot delete the {kind.noun} in {str(out)!r}: {e.strerror or e}") from None
    return out


def flag_name(key: str) -> str:
    """The command-line flag of a config field: ``total_updates`` -> ``--total-updates``."""
    return "--" + key.replace("_", "-")


def config_differences(saved: Mapping, current: Mapping, may_change: Iterable[str]) -> list[str]:
    """The settings (as flags, sorted) whose value in ``current`` differs from ``saved``, leaving out
    ``may_change`` and keys only one side has; tuples and lists compare equal."""
    skip = set(may_change)

    def norm(v):
        if isinstance(v, (list, tuple)):
            return [norm(x) for x in v]
        if isinstance(v, Mapping):
            return {k: norm(x) for k, x in v.items()}
        if isinstance(v, os.PathLike):
            return os.fspath(v)
        return v

    return sorted(flag_name(k) for k in saved.keys() & current.keys()
                  if k not in skip and norm(saved[k]) != norm(current[k]))


def check_resume_config(saved: Mapping | None, current: Mapping, may_change: Iterable[str], where: str) -> None:
    """:class:`OutputError` naming the flags and saved values of :func:`config_differences`
    (nothing to compare when ``saved`` is None)."""
    if saved is None:
        return
    diff = config_differences(saved, current, may_change)
    if diff:
        was = ", ".join(f"{d} {saved[d[2:].replace('-', '_')]!r}" for d in diff)
        raise OutputError(f"--resume: the run in {where!r} was started with other settings ({was}); resume it with "
                          f"those, or start a new run (another --out, or --overwrite)")
