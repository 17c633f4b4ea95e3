"""The host side of a training run that the RL loop and the supervised stage share: the run folder's
resumable state, the Ctrl-C note, the progress bar and the end of a run's log.
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
    """The ``config`` (inside ``section``) of ``last``'s latest or previous metadata; None when neither has it."""
    for name in (checkpoint.METADATA_FILE, checkpoint.PREVIOUS_FILE):
        try:
            meta = checkpoint.read_metadata(last, name, game=None)
            return (meta[section] if section else meta).get("config")
        except (checkpoint.CheckpointError, KeyError, AttributeError):
            continue
    return None


def clear_state(out: Path, *also: str) -> None:
    """Delete ``out/last`` and the files or folders ``also`` of an older run in ``out``."""
    checkpoint.remove(out / LAST)
    for name in also:
        path = out / name
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def note_saved(out: Path, holds: str) -> None:
    """Ctrl-C from now on says that ``out/last`` holds ``holds`` (e.g. "2,000 updates")."""
    interrupt.set_note(interrupt.resume_note(out / LAST, holds))


def note_nothing_saved(out: Path, when: str) -> None:
    """Ctrl-C from now on says that nothing is saved yet (``out/last`` comes ``when``)."""
    interrupt.set_note(f"nothing saved yet (the first checkpoint, {out / LAST}, is written {when})")


def progress_bar(total: int, initial: int, desc: str, unit: str, show: bool) -> tqdm:
    """The run's progress bar (:func:`c4jax.io.progress.bar`), hidden unless ``show``."""
    return progress.bar(total, initial=initial, desc=desc, unit=unit, disable=not show)


def say(line: str, bar: tqdm) -> None:
    """``line`` on stdout, above the progress bar while it is shown."""
    if bar.disable:
        print(line, flush=True)
    else:
        tqdm.write(line, file=sys.stdout)
        sys.stdout.flush()


def compiling(what: str, name: str, bar: tqdm, first: bool) -> ContextManager[None]:
    """Where ``first``, a block that says ``NAME: compiling WHAT ...`` above ``bar`` if ``what`` compiles."""
    if not first:
        return contextlib.nullcontext()
    return compile_cache.announce(what, say=lambda line: say(f"{name}: {line}", bar))


def finish(log: runlog.RunLog, draw: Callable[[list[dict]], object], summary: Mapping) -> dict:
    """Close ``log``; where it writes, write ``metrics.csv``, the curves (``draw(log.rows)``) and
    ``summary.json`` (``summary`` and the command). Returns summary.json's content, or {}."""
    log.close()
    if not log.write:
        return {}
    log.write_csv()
    draw(log.rows)
    summary = {**summary, "command": runlog.command_line()}
    runlog.write_json(log.out_dir / SUMMARY, summary)
    return summary
