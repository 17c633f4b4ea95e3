"""The tournament and the yardstick on several devices (the CLI's default on a CPU: one device per
core) play the same games and give the same figures as on one device.

JAX fixes its number of CPU devices when its backend starts, so one fresh subprocess with
``XLA_FLAGS=--xla_force_host_platform_device_count=3`` (``tests/support/split_eval_driver.py``) plays
on 1, 2 and 3 of them: 2 split every agent's games evenly, 3 leave a remainder (50 games per seat and
pair) that the split fills. The agents: one that samples (Random), a deterministic lookahead and a
deterministic search (AlphaZero with 2 simulations, asked once per distinct position)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from c4jax.io import host_devices
from scripts import ROOT

AGENTS = ("random", "2steplA", "alphazero@2")


def test_round_robin_and_yardstick_are_the_same_on_1_2_and_3_devices(tmp_path):
    env = {**os.environ, "XLA_FLAGS": f"{host_devices.FLAG}=3"}
    result = tmp_path / "result.json"
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "support" / "split_eval_driver.py"), str(result),
                           *AGENTS], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(result.read_text())
    assert out["available"] == 3
    one = out["tournament"]["1"]
    assert len(one["matches"]) == 3 and all(len(m["games"]) == 100 for m in one["matches"])
    for n in ("2", "3"):
        assert out["tournament"][n] == one, n
        assert out["yardstick"][n] == out["yardstick"]["1"], n
    assert out["yardstick"]["1"]["random"]["action"] != out["yardstick"]["1"]["2steplA"]["action"]


def test_use_every_core_sets_the_device_count_once():
    env = {"XLA_FLAGS": "--xla_cpu_enable_fast_math=false"}
    n = host_devices.use_every_core(env)
    assert n == host_devices.cores() >= 1
    assert env["XLA_FLAGS"] == f"--xla_cpu_enable_fast_math=false {host_devices.FLAG}={n}"
    assert host_devices.use_every_core(env) == 0  # named already: the user's (or an earlier) choice stays
    mine = {"XLA_FLAGS": f"{host_devices.FLAG}=7"}
    assert host_devices.use_every_core(mine) == 0 and mine["XLA_FLAGS"] == f"{host_devices.FLAG}=7"
