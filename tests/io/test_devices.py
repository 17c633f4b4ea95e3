"""Several devices (``--devices``, c4jax.learning.placement, c4jax.io.devices) and several processes.

JAX fixes its number of CPU devices when its backend starts, so the multi-device checks run in a
fresh subprocess with ``XLA_FLAGS=--xla_force_host_platform_device_count=4``
(``tests/support/devices_driver.py``), which writes what it measured to a JSON file judged here.

Tolerance. A run split over 4 devices computes the same thing as on one device, with the same
random numbers (threefry is partitionable); only the order of float32 sums changes (a mean over a
split minibatch is 4 partial sums and an all-reduce), which moves the last bits of a loss and
then, through Adam, of the weights. Measured over the tiny runs: relative differences up to
7e-6 on PPO's losses (2e-6 on its approximate KL), 1e-7 on DQN's and AlphaZero's, none on
REINFORCE's (its one-episode updates are not split, and split self-play is exact). The tests
allow ``|a - b| <= 1e-4 |a| + 1e-6`` (about 1,000 float32 ulps, 10x the worst seen) on every
logged float and exact equality of the win rates, game lengths and counts, which no rounding
of that size changes.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from c4jax import games
from c4jax.io import devices
from c4jax.learning import loop, placement
from c4jax.learning.ppo import PPO, PPOConfig
from c4jax.learning.config import validate
from scripts import ROOT, run_script
from command import error_of

RTOL, ATOL = 1e-4, 1e-6
EXACT = ("eval/", "selfplay/episodes", "buffer/", "step")  # discrete: must be equal


def _driver(tmp_path: Path, *checks: str, timeout: int = 1800) -> dict:
    env = {**os.environ, "XLA_FLAGS": f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=4".strip()}
    result = tmp_path / "result.json"
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "support" / "devices_driver.py"), str(result), str(tmp_path),
                           *checks], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(result.read_text())


def _assert_same_run(one: list[dict], other: list[dict]) -> None:
    """Two metrics logs: the same rows, equal up to the float tolerance (discrete ones exactly)."""
    assert [r["step"] for r in one] == [r["step"] for r in other]
    for a, b in zip(one, other):
        assert set(a) == set(b)
        for k, va in a.items():
            if k.startswith("time/"):
                continue
            if k.startswith(EXACT):
                assert va == b[k], (a["step"], k, va, b[k])
            else:
                assert abs(va - b[k]) <= RTOL * abs(va) + ATOL, (a["step"], k, va, b[k])


# --- in this process (one device) -------------------------------------------------------------


def test_one_device_plans_no_mesh_and_clear_errors():
    n = len(devices.select())  # all of them
    assert placement.plan(PPO(PPOConfig(), games.make(games.DEFAULT)), 1) is placement.ONE_DEVICE
    if n == 1:
        assert placement.plan(PPO(PPOConfig(), games.make(games.DEFAULT)), 0) is placement.ONE_DEVICE  # the default on a one-device machine
    with pytest.raises(devices.DeviceError, match=f"--devices {n + 1}: only {n} "):
        devices.select(n + 1)
    with pytest.raises(devices.DeviceError, match="multiple of 4: --games 6, --buffer-size 10"):
        devices.check_divisible({"--games": 6, "--batch-size": 8, "--buffer-size": 10}, 4)
    tree = {"x": 1}
    assert devices.shard_batch(tree) is tree  # no mesh: nothing added to a program
    with pytest.raises(ValueError, match="--shard"):
        validate(loop.LoopConfig(game="connect_four", shard="games"))
    with pytest.raises(ValueError, match="--process-id"):
        validate(loop.LoopConfig(game="connect_four", num_processes=2, process_id=2, coordinator_address="localhost:1234"))
    with pytest.raises(ValueError, match="--coordinator-address"):
        validate(loop.LoopConfig(game="connect_four", num_processes=2))


def test_more_devices_than_there_are_is_one_error_line(tmp_path):
    n = len(devices.select()) + 1
    proc = run_script("ppo.py", "--out", tmp_path / "x", "--devices", n, "--no-progress")
    assert proc.returncode == 2 and error_of(proc.stderr).startswith(f"error: --devices {n}: only"), proc.stderr[-2000:]
    assert not (tmp_path / "x" / "metrics.jsonl").exists()


# --- 4 forced CPU devices, in a subprocess ----------------------------------------------------


@pytest.mark.slow
def test_on_4_devices_matches_split_games_updates_average_gradients_and_buffers_are_split(tmp_path):
    r = _driver(tmp_path, "cheap")["cheap"]
    assert r["devices"] == 4
    assert r["too_many_error"].startswith("--devices 5: only 4 CPU device(s)")
    assert "--games-per-collect (games per buffer) 10, --buffer-size 250" in r["divisible_error"]
    assert r["auto_modes"] == {"K=1": "batch", "K=2": "batch", "K=4": "seeds", "K=8": "seeds"}
    assert r["two_devices_mode"] == "seeds"
    assert r["auto_fallback"] == 2
    # a protocol match: its games split over 4 devices, the same 100 games (random agents: same random numbers)
    assert r["match_same_games"]
    assert r["match_actions"] == {"devices": 4, "spec": "P('batch',)", "shard_shape": [25, 42], "shape": [100, 42]}
    # a PPO update with its minibatches split: the same loss and weights; the weights replicated
    u = r["ppo_update"]
    assert abs(u["loss_1"] - u["loss_4"]) <= RTOL * abs(u["loss_1"]) + ATOL
    assert u["max_param_diff"] < 1e-4  # after 4 Adam steps of lr 1e-4: a few % of one step at most
    assert u["params"] == {"devices": 4, "spec": "P()", "shard_shape": [128, 7], "shape": [128, 7]}
    # a DQN state: the replay storage split over the devices behind the seed axis, the rest replicated
    d = r["dqn_placed"]
    assert d["buffer_board"] == {"devices": 4, "spec": "P(None, 'batch')", "shard_shape": [1, 500, 6, 7],
                                 "shape": [1, 2000, 6, 7]}
    assert d["params"]["spec"] == "P()" and d["params"]["devices"] == 4 and d["updates"]["spec"] == "P()"


@pytest.mark.slow
def test_ppo_on_4_devices_equals_1_device_and_2_seeds_on_2_devices(tmp_path):
    r = _driver(tmp_path, "ppo")["ppo"]
    one, four = r["rows"]
    _assert_same_run(one, four)
    for pair in r["seeds_rows"]:  # seeds 0 and 1 of --vmap-seeds 2: on 1 device, then one seed per device
        _assert_same_run(*pair)
    assert r["seeds_meta"] == {"count": 2, "split": "seeds"}
    for name, layout in r["seeds_state"].items():  # whole seeds per device: every leaf split on the seed axis
        assert layout["devices"] == 2 and layout["spec"] == "P('seeds',)" and layout["shard_shape"][0] == 1, name


@pytest.mark.slow
def test_reinforce_on_4_devices_equals_1_device(tmp_path):
    r = _driver(tmp_path, "reinforce")["reinforce"]
    _assert_same_run(*r["rows"])


@pytest.mark.slow
def test_dqn_on_4_devices_equals_1_device_and_resumes_on_2_and_on_1(tmp_path):
    r = _driver(tmp_path, "dqn")["dqn"]
    rows = r["rows"]
    _assert_same_run(rows["one"], rows["four"])
    _assert_same_run(rows["four"], rows["resumed_2"])  # stopped after its first evaluation, resumed on 2 devices
    _assert_same_run(rows["four"], rows["resumed_1"])  # and on 1
    board = r["state"][".buffer.items.board"]
    assert board == {"devices": 4, "spec": "P(None, 'batch')", "shard_shape": [1, 500, 6, 7], "shape": [1, 2000, 6, 7]}
    bad = r["bad_batch"]
    assert bad["returncode"] == 2 and "--episodes-per-iteration 10" in bad["stderr"] and "Traceback" not in bad["stderr"]


@pytest.mark.slow
def test_alphazero_on_4_devices_equals_1_device(tmp_path):
    r = _driver(tmp_path, "alphazero")["alphazero"]
    one, four = r["rows"]
    _assert_same_run(one, four)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_processes_on_localhost_train_like_one_device(tmp_path):
    """Two processes of 2 forced CPU devices each join one run (jax.distributed, gloo): a mesh of
    4 devices over both; process 0 writes the run, process 1 nothing; the numbers are those of a
    one-device run."""
    flags = ("--buffer-size", "256", "--games-per-collect", "16", "--epochs", "2", "--total-updates", "20",
             "--no-progress")
    one = run_script("ppo.py", "--out", tmp_path / "one", "--devices", "1", *flags)
    assert one.returncode == 0, one.stderr[-3000:]
    env = {**os.environ, "XLA_FLAGS": f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=2".strip()}
    address = f"127.0.0.1:{_free_port()}"
    procs = [subprocess.Popen([sys.executable, "experiments/ppo.py", "--out", str(tmp_path / f"two{i}"),
                               "--coordinator-address", address, "--num-processes", "2", "--process-id", str(i), *flags],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(2)]
    outs = [p.communicate(timeout=1200) for p in procs]
    for p, (_, err) in zip(procs, outs):
        assert p.returncode == 0, err[-4000:]
    rows = lambda d: [json.loads(line) for line in (d / "metrics.jsonl").read_text().splitlines()]  # noqa: E731
    _assert_same_run(rows(tmp_path / "one"), rows(tmp_path / "two0"))
    meta = json.loads((tmp_path / "two0" / "last" / "metadata.json").read_text())
    assert meta["devices"] == {"count": 4, "split": "batch"}
    assert not (tmp_path / "two1").exists()  # process 1 writes nothing
