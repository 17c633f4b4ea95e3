"""Test-session settings.

Compiling the jitted programs is most of the suite's time, and the tests' programs are small
and run briefly, so XLA compiles them without its expensive CPU backend optimisations and with
its older fusion code generator, which compiles faster (``XLA_FLAGS``, unless set already;
measured: 29% less CPU time on ``tests/learning/test_dqn.py``, and the older emitters 39% less again on
``tests/agents/test_search.py``). XLA also emits each program as one object file instead of splitting it
for parallel code generation: a program then holds fewer memory mappings (32% fewer on
``tests/learning/test_alphazero.py``), so a test process reaches the mapping budget below later or never.
Its dots and convolutions are Eigen's, not XNNPACK's, whose fusion passes add compile time
(docs/results/test_suite.md). The programs carry no Python source locations (JAX's
``JAX_TRACEBACK_IN_LOCATIONS_LIMIT=0``, ``JAX_INCLUDE_FULL_TRACEBACKS_IN_LOCATIONS=false``, unless set
already), which lowering would otherwise build for every operation.
XLA compiles float operations without fast-math either way (a dot's kernel may sum in another order),
and the tests that compare with recorded figures or with mctx's own search bit for bit pass.

Many tests build the same program again (a new trainer or agent object is a new jitted function,
whatever its settings), and both test processes and the subprocesses some tests start (a killed
and resumed trainer, several devices, an installed wheel) compile programs the others compiled.
A JAX persistent compilation cache in a fresh temporary directory, shared by them all through the
environment, compiles each program (of 0.5 s or more) once per test session and loads it from
there afterwards; the directory is new for every session, so no test depends on an earlier one.
The command-line programs, which turn on a persistent cache in the user's cache folder by default
(c4jax.io.compile_cache), leave JAX's settings alone when ``JAX_COMPILATION_CACHE_DIR`` is set,
and ``C4JAX_COMPILE_CACHE=off`` keeps them off that folder however a test sets the environment.
A test that checks the line a command prints before a compile asks for it at the compile's start
(``scripts.compile_lines_at_start``): a program found in the cache prints nothing.
"""

import atexit
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile

_FAST_COMPILE = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"
_IF_KNOWN = "--xla_cpu_use_fusion_emitters=false --xla_cpu_parallel_codegen_split_count=1 --xla_cpu_use_xnnpack=false"


def _xla_flags() -> str:
    """The flags above, the emitters' and the split count only where this jaxlib knows them (XLA
    aborts on an unknown flag): probed once in a subprocess, whose environment the test workers inherit."""
    probe = subprocess.run([sys.executable, "-c", "import jax.numpy as jnp; jnp.zeros(1).block_until_ready()"],
                           env={**os.environ, "XLA_FLAGS": f"{_FAST_COMPILE} {_IF_KNOWN}", "JAX_PLATFORMS": "cpu"},
                           capture_output=True, timeout=300)
    return f"{_FAST_COMPILE} {_IF_KNOWN}" if probe.returncode == 0 else _FAST_COMPILE


if "XLA_FLAGS" not in os.environ:
    os.environ["XLA_FLAGS"] = _xla_flags()

if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    _cache = tempfile.mkdtemp(prefix="c4jax-test-jax-cache-")
    atexit.register(shutil.rmtree, _cache, ignore_errors=True)
    os.environ["JAX_COMPILATION_CACHE_DIR"] = _cache
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.5")

os.environ["C4JAX_COMPILE_CACHE"] = "off"

# A folder for what the test processes of one session build once and share (export_web_site.py's
# sites), new for every session like the compilation cache above.
if "C4JAX_TEST_SESSION_DIR" not in os.environ:
    _shared = tempfile.mkdtemp(prefix="c4jax-test-session-")
    atexit.register(shutil.rmtree, _shared, ignore_errors=True)
    os.environ["C4JAX_TEST_SESSION_DIR"] = _shared

# No Python source locations in the lowered programs (see above); subprocesses inherit it.
os.environ.setdefault("JAX_TRACEBACK_IN_LOCATIONS_LIMIT", "0")
os.environ.setdefault("JAX_INCLUDE_FULL_TRACEBACKS_IN_LOCATIONS", "false")

# Several test processes (pytest-xdist) may share one accelerator: none grabs most of its memory.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax  # noqa: E402  (after the environment above, which JAX reads when it is imported)
import pytest  # noqa: E402



def _memory_maps() -> int | None:
    """How many memory mappings this process holds (Linux), or None where that is not known."""
    try:
        with open("/proc/self/maps") as maps:
            return sum(1 for _ in maps)
    except OSError:
        return None


# the mappings one test file may add after the check: well above the 7,250 that tests/agents/test_search.py,
# the file with the most compiled programs measured, adds on its own
_FILE_HEADROOM = 20_000


def _map_budget() -> int | None:
    try:
        with open("/proc/sys/vm/max_map_count") as limit:
            limit_maps = int(limit.read())
    except (OSError, ValueError):
        return None
    return max(limit_maps // 2, limit_maps - _FILE_HEADROOM)


_MAP_BUDGET = _map_budget()


@pytest.fixture(autouse=True, scope="module")
def _drop_compiled_programs_when_mappings_run_short():
    """Every program XLA compiles for the CPU holds a few memory mappings for as long as JAX
    caches it, and a process may hold at most ``vm.max_map_count`` of them (65,530 by default).
    The whole suite in one process (``-n 1``, or ``-n 0``) compiles enough programs to reach that
    limit, and XLA then crashes in the next compilation (a segmentation fault, not an error).
    After a test file, once the process holds more than the limit less a file's headroom (or
    half the limit, where that is more), JAX's caches are cleared; the later files compile what
    they need again."""
    yield
    if _MAP_BUDGET is not None and (_memory_maps() or 0) > _MAP_BUDGET:
        jax.clear_caches()
        gc.collect()


_PROFILE_COMPILES = os.environ.get("C4JAX_PROFILE_COMPILES")
# test node id -> backend compiles and their seconds, and the seconds of tracing and of lowering to MLIR
_compiles: dict[str, dict[str, float]] = {}
_current_test: list[str] = ["(outside a test)"]
_EVENTS = {"/jax/core/compile/backend_compile_duration": "seconds", "/jax/core/compile/jaxpr_trace_duration":
           "trace_seconds", "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower_seconds"}


def _record_compile(event: str, seconds: float, **_: object) -> None:
    if event in _EVENTS:
        counted = _compiles.setdefault(_current_test[0], dict.fromkeys(("compiles", *_EVENTS.values()), 0))
        counted[_EVENTS[event]] += seconds
        counted["compiles"] += event.endswith("backend_compile_duration")


if _PROFILE_COMPILES:
    jax.monitoring.register_event_duration_secs_listener(_record_compile)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """With ``C4JAX_PROFILE_COMPILES=path``, counts the backend compiles (XLA's, the bulk of the
    suite's time) of each test and their seconds, and the seconds of tracing and of lowering to MLIR
    (which a persistent compilation cache does not save), setup and teardown included (a module-scoped fixture's compiles
    count for the first test that uses it), in this process, not in the subprocesses a test
    starts; the session writes them to ``path`` as JSON (``path.<worker>`` under pytest-xdist)."""
    _current_test[0] = item.nodeid
    try:
        return (yield)
    finally:
        _current_test[0] = "(outside a test)"


def pytest_sessionfinish(session):
    if not _PROFILE_COMPILES:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    path = f"{_PROFILE_COMPILES}.{worker}" if worker else _PROFILE_COMPILES
    tests = sorted(_compiles.items(), key=lambda kv: -sum(v for k, v in kv[1].items() if k != "compiles"))
    totals = {key: round(sum(c[key] for c in _compiles.values()), 3) for key in ("compiles", *_EVENTS.values())}
    with open(path, "w") as out:
        json.dump({"compiles": int(totals.pop("compiles")), "compile_seconds": totals.pop("seconds"), **totals,
                   "tests": {node: {k: round(v, 3) for k, v in c.items()} for node, c in tests}}, out, indent=1)


def pytest_collection_modifyitems(config, items):
    """A test marked ``slow`` (a long end-to-end run, ``-m slow``) has no time limit unless it sets
    its own (``@pytest.mark.timeout``); the default run's tests keep pyproject's ``timeout``."""
    for item in items:
        if item.get_closest_marker("slow") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(0))
