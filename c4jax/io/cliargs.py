"""Command lines of the package's programs: tyro parsers whose errors are one line.

:func:`one_line_errors` turns a rejected command line, or a ``ValueError`` while the config is built,
into one ``error: ... (see PROG --help)`` line and exit status 2; :func:`fail` writes such a line.
A sequence flag whose default is empty says ``(default: none)`` in ``--help``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import re
import sys
from pathlib import Path
from typing import Annotated, Any, Iterator, NoReturn, Sequence
from unittest import mock

import tyro
from tyro.constructors import ConstructorRegistry, PrimitiveConstructorSpec, PrimitiveTypeInfo

USAGE_ERROR = 2  # the exit status of a rejected command line, as argparse and tyro use

OptionalPath = Annotated[Path | None, tyro.conf.arg(metavar="PATH", help_behavior_hint="(default: none)")]
"""A path flag that may be left out (``None``)."""


def starting(line: str) -> None:
    """Print ``line`` (a command's first line) to stderr if stderr is a terminal; else nothing."""
    try:
        interactive = sys.stderr.isatty()
    except (AttributeError, ValueError):
        interactive = False
    if interactive:
        print(line, file=sys.stderr, flush=True)


def fail(message: str, code: int = USAGE_ERROR) -> NoReturn:
    """Print ``error: MESSAGE`` (on one line) to stderr and exit with ``code``."""
    print("error: " + " ".join(str(message).split()), file=sys.stderr, flush=True)
    raise SystemExit(code)


# --- help texts -----------------------------------------------------------------------------------

HELP_REGISTRY = ConstructorRegistry()
_resolving: list[PrimitiveTypeInfo] = []


@HELP_REGISTRY.primitive_rule
def _empty_sequence_says_none(info: PrimitiveTypeInfo) -> PrimitiveConstructorSpec | None:
    """tyro's own rule for a tuple or list type, whose default, when empty, reads ``none``."""
    if info.type_origin not in (tuple, list) or info in _resolving:
        return None
    _resolving.append(info)  # the lookup below then falls through to tyro's default rules
    try:
        spec = ConstructorRegistry.get_primitive_spec(info)
    finally:
        _resolving.pop()
    if not isinstance(spec, PrimitiveConstructorSpec):
        return None
    words = spec.str_from_instance
    return dataclasses.replace(spec, str_from_instance=lambda value: words(value) if len(value) else ["none"])


# --- one-line errors ------------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _box(text: str) -> tuple[str, list[list[str]]]:
    """tyro's error box (box-drawing or dashed) as (title, sections of rows), without frame and padding."""
    lines = [line for line in (_ANSI.sub("", raw).rstrip() for raw in text.splitlines()) if line.strip()]
    if lines and lines[0].lstrip().startswith("╭"):
        title, rule = lines[0].strip().strip("╭╮─ "), "─"
        rows = [line.strip().removeprefix("│").removesuffix("│").rstrip().removeprefix(" ")
                for line in lines[1:] if not line.strip().startswith("╰")]
    elif len(lines) > 1 and set(lines[1].strip()) == {"-"}:
        title, rule = lines[0].strip(), "-"
        rows = [line.removeprefix("  ") for line in lines[2:]]
    else:
        return "", []
    sections: list[list[str]] = [[]]
    for row in rows:
        if set(row.strip()) == {rule}:
            sections.append([])
        else:
            sections[-1].append(row)
    return title, [s for s in sections if s]


def _indent(row: str) -> int:
    return len(row) - len(row.lstrip())


def _flag(row: str) -> str:
    """The first flag of a row of tyro's argument list (``--game {a,b}`` -> ``--game``)."""
    return row.split()[0].rstrip(",")


def condense(text: str) -> str:
    """The message of tyro's error report ``text``, on one line."""
    title, sections = _box(text)
    if not sections:
        return " ".join(text.split())
    body = sections[0]
    if title == "Required options":
        missing = [r.strip() for r in body[1:] if _indent(r) == min(_indent(x) for x in body[1:])] if body[1:] else []
        return "missing " + ", ".join(missing) if missing else " ".join(" ".join(body).split())
    message = " ".join(" ".join(r.strip() for r in body).split())
    if title == "Value error":
        m = re.match(r"Error parsing (\S+?): (.*)$", message)
        if m:
            name, rest = m.groups()
            message = f"{name}: {rest}" if name.startswith("-") or name.isupper() else rest
    elif title == "Unrecognized options":
        message = message[0].lower() + message[1:]
        hints = next((s for s in sections[1:] if s[0].strip().startswith("Perhaps you meant")), [])
        if hints[1:]:
            depth = min(_indent(r) for r in hints[1:])
            flags = list(dict.fromkeys(_flag(r) for r in hints[1:] if _indent(r) == depth))
            message += f"; did you mean {' or '.join(flags[:3])}?"
    elif m := re.match(r"Missing value for argument '(\S+)'\. Expected (\S+) values?", message):
        message = f"{m[1]} needs {m[2]} value{'s' if m[2] != '1' else ''}"
    elif m := re.match(r"invalid choice (.+) for argument '(\S+)'\. Expected one of \((.*)\)", message):
        choices = ", ".join(c.strip(" '\"") for c in m[3].split(",") if c.strip())
        message = f"{m[2]}: invalid choice {m[1]}; choose one of {choices}"
    elif message[:1].isupper() and not message[1:2].isupper():
        message = message[0].lower() + message[1:]
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
        with wide, HELP_REGISTRY, contextlib.redirect_stderr(captured):
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
