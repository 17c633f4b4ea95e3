"""Test-session settings.

Many tests run the experiment scripts in subprocesses, which compile the same jitted programs
again and again. A JAX persistent compilation cache in a fresh temporary directory, shared by
this process and every subprocess it starts (via the environment), compiles each program once
per test session. The directory is new for every session, so no test depends on an earlier one.
"""

import atexit
import os
import shutil
import tempfile

if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    _cache = tempfile.mkdtemp(prefix="c4jax-test-jax-cache-")
    atexit.register(shutil.rmtree, _cache, ignore_errors=True)
    os.environ["JAX_COMPILATION_CACHE_DIR"] = _cache
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.5")

# Several test processes (pytest-xdist) may share one accelerator: none grabs most of its memory.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
