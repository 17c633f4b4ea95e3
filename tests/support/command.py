"""The ``c4jax`` command in this test process, as the tests of its subcommands run it."""

from __future__ import annotations

import contextlib
import io

from c4jax.cli import main as c4jax_main


def run_command(*argv) -> tuple[int, str, str]:
    """``c4jax ARGV`` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = c4jax_main.main([str(a) for a in argv])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return code, out.getvalue(), err.getvalue()
