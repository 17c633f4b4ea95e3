"""The host side of a training run that every trainer shares: the RL loop (:mod:`c4jax.learning.loop`) and
the supervised stage (:mod:`c4jax.cli.supervised`).

- ``--out``, claimed with :func:`c4jax.io.outdir.claim` (a new run refuses a folder that holds one,
  ``--overwrite`` replaces it, ``--resume`` continues it): :func:`saved_config` reads the settings a resumable
  state was saved with, which :func:`c4jax.io.outdir.check_resume_config` compares with a ``--resume``'s, and
  :func:`clear_state` removes an older run's resumable state from a new run's folder;
- the note that Ctrl-C prints (:mod:`c4jax.io.interrupt`): :func:`note_saved`, :func:`note_nothing_saved`;
- the progress bar (:func:`progress_bar`), lines above it (:func:`say`) and the line when the first chunk's
  program compiles (:func:`compiling`);
- the end of a run's log: ``metrics.csv``, the curves and ``summary.json`` (:func:`finish`).
"""

from __future__ import annotations

import contextlib
import shutil
import sys
from pathlib import Path
from typing import Callable, ContextManager, Mapping

from tqdm.auto import tqdm

from c4jax.io import checkpoint, compile_cache, interrupt, progress, runlog

LAST = "last"  # the resumable training state, inside --out
SUMMARY = "summary.json"


def saved_config(last: Path, section: str | None = None) -> dict | None:
    """The settings that the resumable state ``last`` was saved with: its metadata's ``config`` (inside
    ``section`` when given), read from the latest save or the one before it; None when neither records
    them."""
    for name in (checkpoint.METADATA_FILE, checkpoint.PREVIOUS_FILE):
        try:
            meta = checkpoint.read_metadata(last, name, game=None)
            return (meta[section] if section else meta).get("config")
        except (checkpoint.CheckpointError, KeyError, AttributeError):
            continue
    return None


def clear_state(out: Path, *also: str) -> None:
    """A new run in ``out``: delete ``out/last`` and the files or folders ``also`` (an older run's resumable
    state and results), so that they cannot pass for this run's."""
    checkpoint.remove(out / LAST)
    for name in also:
        path = out / name
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def note_saved(out: Path, holds: str) -> None:
    """Ctrl-C from now on says that ``out/last`` holds ``holds`` (e.g. "2,000 updates") and that ``--resume``
    continues it."""
    interrupt.set_note(interrupt.resume_note(out / LAST, holds))


def note_nothing_saved(out: Path, when: str) -> None:
    """Ctrl-C from now on says that nothing is saved yet: the first checkpoint, ``out/last``, is written
    ``when`` (e.g. "at the first evaluation")."""
    interrupt.set_note(f"nothing saved yet (the first checkpoint, {out / LAST}, is written {when})")


def progress_bar(total: int, initial: int, desc: str, unit: str, show: bool) -> tqdm:
    """The run's progress bar from ``initial`` to ``total`` ``unit``s, hidden unless ``show``
    (:func:`c4jax.io.progress.bar`: redrawn on a terminal, a line at a time in a log)."""
    return progress.bar(total, initial=initial, desc=desc, unit=unit, disable=not show)


def say(line: str, bar: tqdm) -> None:
    """``line`` on stdout, above the progress bar while it is shown."""
    if bar.disable:
        print(line, flush=True)
    else:
        tqdm.write(line, file=sys.stdout)
        sys.stdout.flush()


def compiling(what: str, name: str, bar: tqdm, first: bool) -> ContextManager[None]:
    """The block that runs ``what`` (e.g. "the training program"): where ``first``, it says
    ``NAME: compiling WHAT ...`` above ``bar`` if the program compiles
    (:func:`c4jax.io.compile_cache.announce`); else it says nothing."""
    if not first:
        return contextlib.nullcontext()
    return compile_cache.announce(what, say=lambda line: say(f"{name}: {line}", bar))


def finish(log: runlog.RunLog, draw: Callable[[list[dict]], object], summary: Mapping) -> dict:
    """Close ``log`` (its trackers) and, where it writes, write ``metrics.csv``, the curves
    (``draw(log.rows)``) and ``summary.json`` (``summary`` and the ``command`` that ran) in its folder.
    Returns what summary.json holds ({} where the log does not write)."""
    log.close()
    if not log.write:
        return {}
    log.write_csv()
    draw(log.rows)
    summary = {**summary, "command": runlog.command_line()}
    runlog.write_json(log.out_dir / SUMMARY, summary)
    return summary
