"""Run an experiment script in this test process, as ``python experiments/<script> ARGS`` would.

A subprocess per script run imports JAX and compiles every jitted program again; in-process,
the script's module runs as ``__main__`` with ``sys.argv`` set, sharing this process' compiled
programs. The result mimics ``subprocess.run(..., capture_output=True, text=True)``.
"""

from __future__ import annotations

import contextlib
import io
import runpy
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Completed:
    returncode: int
    stdout: str
    stderr: str


def run_script(script: str, *args) -> Completed:
    """Run ``experiments/<script>`` with ``args``; SystemExit becomes the return code."""
    path = ROOT / "experiments" / script
    out, err = io.StringIO(), io.StringIO()
    argv, code = sys.argv, 0
    sys.argv = [str(path), *map(str, args)]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            runpy.run_path(str(path), run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if isinstance(e.code, str):
            err.write(e.code + "\n")
    finally:
        sys.argv = argv
    return Completed(code, out.getvalue(), err.getvalue())
