"""The tournament and the yardstick on several devices (the CLI's default on a CPU: one device per
core) play the same games and give the same figures as on one device.

JAX fixes its number of CPU devices when its backend starts, so one fresh subprocess with
``XLA_FLAGS=--xla_force_host_platform_device_count=2`` (``tests/support/split_eval_driver.py``) plays
on 1 and 2 of them. The agents: one that samples (Random, its batch laid out over the devices) and a
deterministic network (DQN, each device deciding its share)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from c4jax.io import host_devices
from scripts import ROOT

AGENTS = ("random", "dqn")


@pytest.mark.slow
def test_round_robin_and_yardstick_are_the_same_on_1_and_2_devices(tmp_path):
    env = {**os.environ, "XLA_FLAGS": f"{host_devices.FLAG}=2"}
    result = tmp_path / "result.json"
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "support" / "split_eval_driver.py"), str(result),
                           *AGENTS], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(result.read_text())
    assert out["available"] == 2
    one = out["tournament"]["1"]
    assert len(one["matches"]) == 1 and all(len(m["games"]) == 100 for m in one["matches"])
    assert out["tournament"]["2"] == one
    assert out["yardstick"]["2"] == out["yardstick"]["1"]
    assert out["yardstick"]["1"]["random"]["action"] != out["yardstick"]["1"]["dqn"]["action"]


def test_use_every_core_sets_the_device_count_once():
    env = {"XLA_FLAGS": "--xla_cpu_enable_fast_math=false"}
    n = host_devices.use_every_core(env)
    assert n == host_devices.cores() >= 1
    assert env["XLA_FLAGS"] == f"--xla_cpu_enable_fast_math=false {host_devices.FLAG}={n}"
    assert host_devices.use_every_core(env) == 0  # named already: the user's (or an earlier) choice stays
    mine = {"XLA_FLAGS": f"{host_devices.FLAG}=7"}
    assert host_devices.use_every_core(mine) == 0 and mine["XLA_FLAGS"] == f"{host_devices.FLAG}=7"
