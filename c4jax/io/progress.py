"""Progress bars: an ordinary tqdm bar on a terminal; elsewhere (a log, a pipe) each refresh as a
line of its own, at most one every :data:`LOG_INTERVAL` seconds.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from tqdm.auto import tqdm

LOG_INTERVAL = 30.0  # seconds between two lines of a bar that does not write to a terminal


class _Lines:
    """A stream for tqdm off a terminal: every new refresh as a line of its own."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.last = None

    def write(self, text: str) -> None:
        line = text.replace("\r", "").rstrip("\n")
        if line.strip() and line != self.last:
            self.stream.write(line + "\n")
            self.last = line

    def flush(self) -> None:
        self.stream.flush()


def interactive(stream: TextIO | None = None) -> bool:
    """Whether ``stream`` (default: ``sys.stderr``) is a terminal."""
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


def bar(total: float | None = None, *, desc: str = "", unit: str = "it", disable: bool = False,
        file: TextIO | None = None, **kwargs: Any) -> tqdm:
    """A tqdm bar writing to ``file`` (default: ``sys.stderr``) as the module docstring says; ``kwargs``
    go to tqdm. Use it as tqdm: ``update``, ``set_postfix_str``, ``close`` or a ``with`` block."""
    stream = sys.stderr if file is None else file
    if interactive(stream):
        return tqdm(total=total, desc=desc, unit=unit, disable=disable, file=stream, dynamic_ncols=True, **kwargs)
    options = {"mininterval": LOG_INTERVAL, "maxinterval": LOG_INTERVAL, "ncols": 100, **kwargs}
    return tqdm(total=total, desc=desc, unit=unit, disable=disable, file=_Lines(stream), **options)
