"""Ctrl-C or SIGTERM in a long-running script: one line and an exit at once.

Within :func:`guard` a watcher thread, which runs while the main thread waits inside a jitted program,
prints ``interrupted`` / ``terminated`` and the note of :func:`set_note` and ends the process at once
with status 130 / 143 (no traceback, no wait); leaving the block arms it for the interpreter's exit.
"""

from __future__ import annotations

import atexit
import contextlib
import inspect
import os
import signal
import socket
import sys
import threading
from typing import Callable, Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM)
EXIT_STATUS = 128 + signal.SIGINT  # 130, what a shell reports for a process ended by Ctrl-C
EXIT_STATUSES = {signum: 128 + signum for signum in SIGNALS}  # SIGTERM: 143
WORDS = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}

_note = ""


def set_note(text: str) -> None:
    """What the line printed on Ctrl-C or SIGTERM says after ``interrupted:`` (``""``: nothing)."""
    global _note
    _note = text


def resume_note(checkpoint, holds: str) -> str:
    """The note of a resumable run: ``checkpoint`` (its last/) holds ``holds`` (e.g. "2,000 updates")."""
    return f"{checkpoint} holds {holds}; the same command with --resume continues the run"


def message(signum: int = signal.SIGINT) -> str:
    """The line printed on ``signum`` (Ctrl-C: ``interrupted``, SIGTERM: ``terminated``) and the note."""
    return WORDS[signum] + (f": {_note}" if _note else "")


def _exit_now(signum: int = signal.SIGINT) -> None:
    print("\n" + message(signum), file=sys.stderr, flush=True)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    os._exit(EXIT_STATUSES[signum])


class _Watcher:
    """SIGINT and SIGTERM routed to a thread that calls ``act(signum)``; :meth:`close` puts the previous
    handlers and wakeup file descriptor back."""

    def __init__(self, act: Callable[[int], None]):
        self.reader, self.writer = socket.socketpair()
        self.writer.setblocking(False)
        self.old_fd = signal.set_wakeup_fd(self.writer.fileno(), warn_on_full_buffer=False)
        self.old_handlers = {}
        try:
            for signum in SIGNALS:  # the watcher acts on them
                self.old_handlers[signum] = signal.signal(signum, lambda signum, frame: None)
        except BaseException:
            self._restore()
            raise
        self.thread = threading.Thread(target=self._watch, args=(act,), name="c4jax-interrupt", daemon=True)
        self.thread.start()

    def _watch(self, act: Callable[[int], None]) -> None:
        while True:
            try:
                data = self.reader.recv(64)
            except OSError:
                return
            if not data:  # closed by close()
                return
            for signum in SIGNALS:
                if signum in data:
                    act(signum)
                    break

    def _restore(self) -> None:
        for signum, handler in self.old_handlers.items():
            signal.signal(signum, handler)
        signal.set_wakeup_fd(self.old_fd)
        self.writer.close()

    def close(self) -> None:
        self._restore()
        self.thread.join(timeout=5)
        self.reader.close()


def _arm_at_exit() -> None:
    """The atexit callback: from here on to the end of the process, SIGINT and SIGTERM exit at once."""
    if threading.current_thread() is threading.main_thread():
        set_note("")
        _Watcher(_exit_now)


@contextlib.contextmanager
def guard(on_interrupt: Callable[..., None] | None = None) -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM call ``on_interrupt`` (with the signal's number if it takes
    an argument) from a watcher thread; by default print :func:`message` and exit with
    :data:`EXIT_STATUSES`. The note starts empty. Outside the main thread the block runs unguarded; on
    leaving it the previous handlers are restored and the interpreter's exit is guarded."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    set_note("")
    if on_interrupt is None:
        act = _exit_now
    else:
        try:
            takes_signum = bool(inspect.signature(on_interrupt).parameters)
        except (TypeError, ValueError):  # a builtin without a signature
            takes_signum = False
        act = on_interrupt if takes_signum else lambda signum: on_interrupt()
    watcher = _Watcher(act)
    try:
        yield
    finally:
        watcher.close()
        set_note("")
        # atexit runs its callbacks last registered first: registered again, this one runs before every
        # callback registered so far (the libraries' ones that wait on their threads and devices)
        atexit.unregister(_arm_at_exit)
        atexit.register(_arm_at_exit)
