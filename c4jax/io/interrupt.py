"""Ctrl-C in a long-running script: one line and an exit at once.

A jitted program that is running (a chunk of training, an evaluation match, a search) does not
return to Python until it ends, which on Checkers takes minutes. Python's own handling of Ctrl-C
waits for it, then prints a ``KeyboardInterrupt`` traceback from wherever the program was, and the
interpreter's exit can wait again on the computations that were queued behind it.

:func:`guard` routes SIGINT to a watcher thread instead (``signal.set_wakeup_fd``: the signal's
number is written to a socket, which a thread reads while the main thread waits inside XLA). The
watcher prints ``interrupted`` and the note the script last set with :func:`set_note` (for a
training run: which checkpoint holds how many updates, and that ``--resume`` continues it), and
ends the process at once with status 130, the shell's status for Ctrl-C.

Ending the process there loses nothing that was written: every file the package replaces is
written to a temporary file and renamed (``io/atomic.py``), a checkpoint is committed by its
metadata file last (``io/checkpoint.py``), and a metrics log is read past a torn last line
(``io/runlog.py``). A resumed run drops the metrics rows after its checkpoint.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading
from typing import Callable, Iterator

EXIT_STATUS = 130  # 128 + SIGINT, what a shell reports for a process ended by Ctrl-C

_note = ""


def set_note(text: str) -> None:
    """What the line printed on Ctrl-C says after ``interrupted:`` (``""``: nothing)."""
    global _note
    _note = text


def resume_note(checkpoint, holds: str) -> str:
    """The note of a resumable run: ``checkpoint`` (its last/) holds ``holds`` (e.g. "2,000 updates")."""
    return f"{checkpoint} holds {holds}; the same command with --resume continues the run"


def message() -> str:
    """The line printed on Ctrl-C."""
    return "interrupted" + (f": {_note}" if _note else "")


def _exit_now() -> None:
    print("\n" + message(), file=sys.stderr, flush=True)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    os._exit(EXIT_STATUS)


@contextlib.contextmanager
def guard(on_interrupt: Callable[[], None] | None = None) -> Iterator[None]:
    """Within the block, Ctrl-C (SIGINT) calls ``on_interrupt`` from a watcher thread, by default
    printing :func:`message` and ending the process with status :data:`EXIT_STATUS`, without
    waiting for the computation the main thread is in. The note starts empty in each block.

    Outside the main thread (where signal handlers cannot be set) the block runs unguarded. On
    leaving the block the previous SIGINT handler and wakeup file descriptor are restored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    on_interrupt = on_interrupt or _exit_now
    set_note("")
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    old_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    try:
        old_handler = signal.signal(signal.SIGINT, lambda signum, frame: None)  # the watcher acts on it
    except BaseException:
        signal.set_wakeup_fd(old_fd)
        reader.close()
        writer.close()
        raise

    def watch() -> None:
        while True:
            try:
                data = reader.recv(64)
            except OSError:
                return
            if not data:  # the block ended and closed the writer
                return
            if signal.SIGINT in data:
                on_interrupt()

    watcher = threading.Thread(target=watch, name="c4jax-interrupt", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old_handler)
        signal.set_wakeup_fd(old_fd)
        writer.close()
        watcher.join(timeout=5)
        reader.close()
        set_note("")
