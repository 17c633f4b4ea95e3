"""Test-session settings.

Compiling the jitted programs is most of the suite's time, and the tests' programs are small
and run briefly, so XLA compiles them without its expensive CPU backend optimisations
(``XLA_FLAGS``, unless set already; measured on ``tests/test_dqn.py``: 29% less CPU time). The
backend's optimisation level changes the machine code, not the arithmetic: XLA compiles float
operations without fast-math either way, and the tests that compare with recorded figures pass.

Tests that start a subprocess (a killed and resumed trainer, several devices, an installed wheel)
compile the same programs again in every subprocess. A JAX persistent compilation cache in a
fresh temporary directory, passed to them through the environment, compiles each program once
per test session; the directory is new for every session, so no test depends on an earlier one.
The test processes themselves do not write to it: in a process that has compiled hundreds of
programs, serialising one more executable for the cache has crashed (a segmentation fault inside
XLA's ``serialize``), and each process keeps its own compiled programs in memory anyway.
"""

import atexit
import os
import shutil
import tempfile

os.environ.setdefault("XLA_FLAGS", "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true")

if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    _cache = tempfile.mkdtemp(prefix="c4jax-test-jax-cache-")
    atexit.register(shutil.rmtree, _cache, ignore_errors=True)
    os.environ["JAX_COMPILATION_CACHE_DIR"] = _cache
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.5")

# Several test processes (pytest-xdist) may share one accelerator: none grabs most of its memory.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax  # noqa: E402  (after the environment above, which JAX reads when it is imported)

jax.config.update("jax_enable_compilation_cache", False)  # this process: see the docstring
