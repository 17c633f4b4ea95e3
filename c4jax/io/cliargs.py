"""Command lines of the package's programs: tyro parsers whose errors are one line.

:func:`one_line_errors` turns a rejected command line, or a ``ValueError`` while the config is built,
into one ``error: ... (see PROG --help)`` line and exit status 2; :func:`fail` writes such a line.
A sequence flag marked :data:`NONE_IF_EMPTY` says ``(default: none)`` when its default is empty.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from pathlib import Path
from typing import Annotated, Any, Iterator, NoReturn, Sequence
from unittest import mock

import tyro

USAGE_ERROR = 2  # the exit status of a rejected command line, as argparse and tyro use

OptionalPath = Annotated[Path | None, tyro.conf.arg(metavar="PATH", help_behavior_hint="(default: none)")]
"""A path flag that may be left out (``None``)."""
NONE_IF_EMPTY = tyro.conf.arg(help_behavior_hint=lambda default: f"(default: {default or 'none'})")
"""The ``Annotated`` marker of a sequence flag whose default, when empty, reads ``(default: none)`` in ``--help``."""


def starting(line: str) -> None:
    """Print ``line`` (a command's first line) to stderr if stderr is a terminal; else nothing."""
    with contextlib.suppress(AttributeError, ValueError):  # no stderr, or a closed one
        if sys.stderr.isatty():
            print(line, file=sys.stderr, flush=True)


def fail(message: str, code: int = USAGE_ERROR) -> NoReturn:
    """Print ``error: MESSAGE`` (on one line) to stderr and exit with ``code``."""
    print("error: " + " ".join(str(message).split()), file=sys.stderr, flush=True)
    raise SystemExit(code)


# --- one-line errors ------------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_FRAME = re.compile(r"^\s*│ ?|\s*│$")


def _box(text: str) -> tuple[str, list[list[str]]]:
    """tyro's error box (box-drawing, or dashed where stdout is not UTF-8) as (title, sections of rows),
    without its frame."""
    lines = [line for line in (_ANSI.sub("", raw).rstrip() for raw in text.splitlines()) if line.strip()]
    if len(lines) < 2 or not (lines[0].lstrip().startswith("╭") or set(lines[1].strip()) == {"-"}):
        return "", []
    sections: list[list[str]] = [[]]
    for line in lines[1:]:
        row = _FRAME.sub("", line) if line.lstrip()[0] in "│╰" else line.removeprefix("  ")
        if set(row.strip()) <= set("─-╰╯"):  # a rule, or the bottom of the frame
            sections.append([])
        else:
            sections[-1].append(row)
    return lines[0].strip("╭╮─ "), [s for s in sections if s]


def _outermost(rows: list[str]) -> list[str]:
    """The rows at the least indentation among ``rows``, stripped."""
    depth = min((len(r) - len(r.lstrip()) for r in rows), default=0)
    return [r.strip() for r in rows if len(r) - len(r.lstrip()) == depth]


def condense(text: str) -> str:
    """The message of tyro's error report ``text``, on one line."""
    title, sections = _box(text)
    if not sections:
        return " ".join(text.split())
    body = sections[0]
    message = " ".join(" ".join(body).split())
    if title == "Required options" and body[1:]:
        message = "missing " + ", ".join(_outermost(body[1:]))
    elif title == "Value error" and (m := re.match(r"Error parsing (\S+?): (.*)$", message)):
        message = f"{m[1]}: {m[2]}" if m[1].startswith("-") or m[1].isupper() else m[2]
    elif m := re.match(r"Missing value for argument '(\S+)'\. Expected (\S+) values?", message):
        message = f"{m[1]} needs {m[2]} value{'s' if m[2] != '1' else ''}"
    elif m := re.match(r"invalid choice (.+) for argument '(\S+)'\. Expected one of \((.*)\)", message):
        message = "{}: invalid choice {}; choose one of {}".format(m[2], m[1], ", ".join(re.findall(r"[^,\s'\"]+", m[3])))
    elif message[:1].isupper() and not message[1:2].isupper():
        message = message[0].lower() + message[1:]
    if title == "Unrecognized options":
        hints = next((s[1:] for s in sections[1:] if s[0].strip().startswith("Perhaps you meant")), [])
        flags = list(dict.fromkeys(row.split()[0].rstrip(",") for row in _outermost(hints)))
        message += f"; did you mean {' or '.join(flags[:3])}?" if flags else ""
    return message.rstrip(".")


@contextlib.contextmanager
def one_line_errors(argv: Sequence[str], prog: str | None = None) -> Iterator[None]:
    """Parse ``argv`` (for ``prog``; default: the script's name) within the block; a rejected command
    line or a ``ValueError`` leaves as one ``error:`` line and exit status 2."""
    prog = prog or sys.argv[0]
    asks_help = any(a in ("-h", "--help") for a in argv)
    captured = io.StringIO()
    message = None
    try:
        # an error box is read back as text, not shown: rendered without wrapping
        wide = contextlib.nullcontext() if asks_help else mock.patch.dict(os.environ, {"COLUMNS": "10000"})
        with wide, contextlib.redirect_stderr(captured):
            yield
    except SystemExit as e:
        text = captured.getvalue()
        if e.code in (0, None) or not text.strip() or text.startswith("error: "):  # help, or already one line
            sys.stderr.write(text)
            raise
        message = condense(text)
    except ValueError as e:
        message = str(e)
    else:
        sys.stderr.write(captured.getvalue())
    if message is not None:
        fail(f"{message} (see {prog} --help)")


def parse(cls: Any, argv: Sequence[str], prog: str | None = None, *, default: Any = None,
          description: str | None = None, config: Sequence[Any] = ()) -> Any:
    """``tyro.cli(cls, ...)`` of ``argv`` over ``default`` (None: the class' defaults) with
    :func:`one_line_errors`."""
    argv = list(argv)
    kwargs = {} if default is None else {"default": default}
    with one_line_errors(argv, prog):
        return tyro.cli(cls, args=argv, prog=prog, description=description, config=tuple(config), **kwargs)
