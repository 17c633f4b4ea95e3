"""Ctrl-C and SIGTERM end a script at once with one line (c4jax/io/interrupt.py), even while the main
thread waits inside a jitted computation or the interpreter is exiting, and an interrupted training run
resumes from its last checkpoint."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from c4jax.io import checkpoint, interrupt
from scripts import ROOT, run_script


def test_guard_routes_sigint_to_the_watcher_and_restores_the_handler():
    before = signal.getsignal(signal.SIGINT)
    called = threading.Event()
    with interrupt.guard(on_interrupt=called.set):
        interrupt.set_note("runs/x/last holds 5 updates")
        assert interrupt.message() == "interrupted: runs/x/last holds 5 updates"
        os.kill(os.getpid(), signal.SIGINT)  # no KeyboardInterrupt in this thread
        assert called.wait(5), "the watcher did not see SIGINT"
    assert signal.getsignal(signal.SIGINT) is before
    assert interrupt.message() == "interrupted"  # the note does not outlive the block


def test_guard_routes_sigterm_too_and_restores_both_handlers():
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    called = threading.Event()
    with interrupt.guard(on_interrupt=called.set):
        interrupt.set_note("runs/x/last holds 5 updates")
        assert interrupt.message(signal.SIGTERM) == "terminated: runs/x/last holds 5 updates"
        os.kill(os.getpid(), signal.SIGTERM)  # would end this process without the guard
        assert called.wait(5), "the watcher did not see SIGTERM"
    assert {s: signal.getsignal(s) for s in before} == before
    assert interrupt.EXIT_STATUSES == {signal.SIGINT: 130, signal.SIGTERM: 143}


def test_guard_outside_the_main_thread_is_a_no_op():
    seen = []

    def body():
        with interrupt.guard(on_interrupt=lambda: seen.append(1)):
            seen.append(signal.getsignal(signal.SIGINT))

    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert seen == [signal.getsignal(signal.SIGINT)]


def _interrupt_when(proc: subprocess.Popen, ready, timeout_s: float = 300.0, signum=signal.SIGINT) -> float:
    """Send ``signum`` to ``proc`` once ``ready()`` holds; the seconds it then took to exit."""
    deadline = time.monotonic() + timeout_s
    while not ready():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the process never became ready"
        time.sleep(0.05)
    proc.send_signal(signum)
    t0 = time.monotonic()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the process did not end within 30 s of Ctrl-C")
    return time.monotonic() - t0


@pytest.mark.parametrize("signum, word", [(signal.SIGINT, "interrupted"), (signal.SIGTERM, "terminated")])
def test_a_signal_during_a_long_jitted_computation_exits_at_once(signum, word):
    # Python's own handling of Ctrl-C would wait for the computation (about a minute) and print a
    # traceback; SIGTERM would end the process without a word.
    script = textwrap.dedent("""
        import sys, jax, jax.numpy as jnp
        from c4jax.io import interrupt

        @jax.jit
        def slow(x):
            body = lambda c: (c[0] + 1, c[1] * 1.0000001 + 1e-9)
            inner = lambda _, v: jax.lax.while_loop(lambda c: c[0] < 1_000_000_000, body, (0, v))[1]
            return jax.lax.fori_loop(0, 1000, inner, x)

        with interrupt.guard():
            interrupt.set_note("the note")
            compiled = slow.lower(jnp.ones(())).compile()
            print("ready", flush=True)
            print(compiled(jnp.ones(())).item())
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "JAX_PLATFORMS": "cpu"})
    first = []
    reader = threading.Thread(target=lambda: first.append(proc.stdout.readline()), daemon=True)
    reader.start()
    seconds = _interrupt_when(proc, lambda: bool(first), signum=signum)
    err = proc.stderr.read()
    assert first == ["ready\n"]
    assert proc.returncode == 128 + signum
    assert seconds < 10
    assert err.strip().splitlines() == [f"{word}: the note"]


def test_ctrl_c_while_the_interpreter_exits_is_no_traceback():
    # An atexit callback that waits (as libraries' callbacks wait on their threads and devices),
    # registered before the guard's: Python would report a KeyboardInterrupt from it and exit 0.
    script = textwrap.dedent("""
        import atexit, time
        from c4jax.io import interrupt

        def slow_exit():
            print("exiting", flush=True)
            time.sleep(60)

        atexit.register(slow_exit)
        with interrupt.guard():
            pass
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    first = []
    reader = threading.Thread(target=lambda: first.append(proc.stdout.readline()), daemon=True)
    reader.start()
    seconds = _interrupt_when(proc, lambda: bool(first))
    err = proc.stderr.read()
    assert first == ["exiting\n"]
    assert proc.returncode == interrupt.EXIT_STATUS and seconds < 10
    assert err.strip().splitlines() == ["interrupted"]


DQN = ("--buffer-size", "2000", "--learning-starts", "200", "--eval-every", "200", "--total-updates", "1000",
       "--no-progress")


@pytest.mark.slow
def test_ctrl_c_during_training_names_the_checkpoint_and_resume_finishes(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "experiments/dqn.py", "--out", str(out), *DQN], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "JAX_PLATFORMS": "cpu"})
    _interrupt_when(proc, lambda: checkpoint.exists(out / "last"))
    err = proc.stderr.read()
    assert proc.returncode == interrupt.EXIT_STATUS, err
    assert "Traceback" not in err
    line = err.strip().splitlines()[-1]
    assert line.startswith(f"interrupted: {out / 'last'} holds ") and line.endswith("--resume continues the run")
    done = run_script("dqn.py", "--out", out, *DQN, "--resume")
    assert done.returncode == 0, done.stderr
    assert "resumed" in done.stdout and (out / "best").is_dir()
