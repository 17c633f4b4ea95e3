"""The ``c4jax`` command in this test process, as the tests of its subcommands run it."""

from __future__ import annotations

import contextlib
import io

from c4jax.cli import main as c4jax_main


def error_of(stderr: str) -> str:
    """The ``error:`` line of a rejected command's ``stderr``, which holds that line alone or after the
    command's first line (``cliargs.starting``: a mistake found once the command began, such as an
    agent that does not load); fails on anything else."""
    lines = stderr.strip().splitlines()
    assert lines and lines[-1].startswith("error: "), stderr
    assert len(lines) == 1 or (len(lines) == 2 and lines[0].endswith(" ...") and not lines[0].startswith("error")), stderr
    return lines[-1] + "\n"


def run_command(*argv) -> tuple[int, str, str]:
    """``c4jax ARGV`` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = c4jax_main.main([str(a) for a in argv])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return code, out.getvalue(), err.getvalue()
