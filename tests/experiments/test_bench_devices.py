"""experiments/bench_devices.py: flags are checked, and a tiny run on 1 and 2 forced CPU devices
measures both (in a subprocess: the script forces host devices before JAX starts)."""

import os
import subprocess
import sys

import pytest

from scripts import ROOT, load_experiment, run_script

bench_devices = load_experiment("bench_devices")


@pytest.mark.parametrize("argv", [["--chunks", "0"], ["--algos", "a2c"], ["--devices", "0"]])
def test_bad_flags_exit_2(argv):
    with pytest.raises(SystemExit) as e:
        bench_devices.main(argv)
    assert e.value.code == 2


def test_more_devices_than_jax_started_with_is_one_error_line(monkeypatch):
    import jax

    monkeypatch.setenv("XLA_FLAGS", os.environ.get("XLA_FLAGS", ""))  # whatever happens, restored afterwards
    jax.devices()  # JAX runs in this process: the script cannot force host devices any more
    proc = run_script("bench_devices.py", "--devices", "1", "10000")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: --devices 10000: only") and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_tiny_run_on_1_and_2_forced_devices():
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    proc = subprocess.run([sys.executable, "experiments/bench_devices.py", "--algos", "reinforce", "--devices", "1", "2",
                           "--chunks", "1"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "forced host devices" in proc.stdout
    assert "| reinforce | 1 | one |" in proc.stdout and "| reinforce | 2 | batch |" in proc.stdout
    one, two = (line for line in proc.stdout.splitlines() if line.startswith("| reinforce |"))
    assert one.rstrip(" |").endswith("1.00") and float(two.rstrip(" |").split("|")[-1]) < 1.0  # work per device
