"""Run an experiment script in this test process, as ``python experiments/<script> ARGS`` would,
or import one as a module (``load_experiment``).

A subprocess per script run imports JAX and compiles every jitted program again; in-process,
the script's module runs as ``__main__`` with ``sys.argv`` set, sharing this process' compiled
programs. The result mimics ``subprocess.run(..., capture_output=True, text=True)``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import runpy
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]  # the repository: this file is tests/support/scripts.py


@dataclass
class Completed:
    returncode: int
    stdout: str
    stderr: str


@contextlib.contextmanager
def compile_lines_at_start():
    """Within the block, the commands say ``compiling ...`` at the start of each compile, as they do
    without a persistent cache: with the test session's cache, a program found there says nothing."""
    from unittest import mock

    with mock.patch("c4jax.io.compile_cache.persistent", return_value=False):
        yield


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


def load_experiment(name: str) -> ModuleType:
    """``experiments/<name>.py`` imported as the module ``name`` (once per process), without
    putting ``experiments/`` on ``sys.path``."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "experiments" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before it runs: its dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
