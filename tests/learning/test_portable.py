"""The portable run state (c4jax.learning.portable): a run resumed from ``portable/`` alone refills
its replay buffer by self-play and trains on, with one metrics row per evaluation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from flax import struct

from c4jax.io.checkpoint import CheckpointError
from c4jax.learning import buffer as rb
from c4jax.learning import portable, stacked
from c4jax.learning.train_state import TrainState

from scripts import ROOT, run_script

DATA = ROOT / "tests" / "data" / "portable"


def _rows(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("fixture, script, flags", [
    pytest.param("alphazero", "alphazero.py", (), marks=pytest.mark.slow),
    ("checkers_dqn", "dqn.py", ("--game", "checkers")),
])
def test_a_portable_state_written_by_an_earlier_version_resumes(tmp_path, fixture, script, flags):
    """The committed portable states (a Connect Four AlphaZero and a Checkers DQN smoke run, written
    when the format was introduced) still resume: the buffer is refilled, updates, evaluations and
    best/ go on, and metrics.jsonl keeps one row per evaluation."""
    run = tmp_path / "run"
    shutil.copytree(DATA / fixture, run)
    saved = portable.read_metadata(run / "portable")
    start = saved["updates"][0]
    done = run_script(script, "--preset", "smoke", *flags, "--out", run, "--resume", "--no-progress",
                      "--total-updates", start + 4)
    assert done.returncode == 0, done.stderr
    assert "resuming from the portable state" in done.stdout and "not bit-exact" in done.stdout
    steps = [r["step"] for r in _rows(run)]
    assert steps == sorted(set(steps)) and steps[-1] == start + 4 and len(steps) > saved["loop"]["seeds"][0]["evals"]
    assert (run / "last").is_dir() and (run / "best").is_dir()
    with np.load(run / "portable" / portable.read_metadata(run / "portable")["state_file"]) as arrays:
        assert arrays.files and not [n for n in arrays.files if "buffer/items" in n]
        assert "state/params" in " ".join(arrays.files) and "old_params" in " ".join(arrays.files)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["evaluations"] == len(steps)
    again = portable.read_metadata(run / "portable")
    assert again["updates"] == [start + 4] and again["buffers"]["buffer"][0] > 0
    assert again["loop"]["seeds"][0]["evals"] == len(steps)
    # the process' CPU time: absent from the state written before it was counted, so it counts from this
    # segment on, and goes on in the rows and the state
    new_rows = [r for r in _rows(run) if r["step"] > start]
    cpu = [r["time/cpu_s"] for r in new_rows]
    assert cpu and all(c > 0 for c in cpu) and cpu == sorted(cpu) and "cpu_s" not in saved["loop"]
    assert again["loop"]["cpu_s"] == cpu[-1]


def test_a_damaged_portable_state_or_other_flags_are_refused_in_one_line(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(DATA / "alphazero", run)
    state_file = run / "portable" / portable.read_metadata(run / "portable")["state_file"]
    intact = state_file.read_bytes()
    state_file.write_bytes(intact[:-8] + b"\0" * 8)
    damaged = run_script("alphazero.py", "--preset", "smoke", "--out", run, "--resume", "--no-progress",
                         "--total-updates", 12)
    assert damaged.returncode == 2 and "does not match its checksum" in damaged.stderr
    assert damaged.stderr.count("\n") == 1
    state_file.write_bytes(intact)
    other = run_script("alphazero.py", "--preset", "smoke", "--out", run, "--resume", "--no-progress",
                       "--total-updates", 12, "--num-simulations", 3)
    assert other.returncode == 2 and "--num-simulations" in other.stderr
    assert _rows(run) == _rows(DATA / "alphazero")


class _Toy:
    """An algorithm whose collect adds one row of its step count to the buffer."""

    name = "toy"

    def collect(self, state):
        row = {"x": jnp.full((3, 2), state.updates, jnp.float32)}
        return state.replace(buffer=rb.add(state.buffer, row, jnp.ones(3, jnp.bool_)),
                             key=jax.random.split(state.key)[0])


@struct.dataclass
class _ToyState(TrainState):
    buffer: rb.Buffer


def _toy_state(seed: int):
    params = {"w": jnp.arange(4.0) + seed}
    return _ToyState.create(params, optax.adam(1e-3), jax.random.key(seed), buffer=rb.init({"x": jnp.zeros(2)}, 10))


def test_save_load_round_trip_keeps_everything_but_the_buffer_and_refill_reaches_the_sizes(tmp_path):
    state = stacked.stack_seeds([_toy_state(0), _toy_state(1)])
    state = state.replace(updates=jnp.array([5, 5], jnp.int32))
    state = jax.vmap(_Toy().collect)(jax.vmap(_Toy().collect)(state))  # 6 rows per seed
    old = jax.tree.map(lambda x: x * 2, state.params)
    portable.save(tmp_path / "p", state, old, {"evals": 3}, {"game": "g", "seeds": [0, 1]})
    fresh = stacked.stack_seeds([_toy_state(0), _toy_state(1)])
    got, got_old, loop, targets = portable.load(tmp_path / "p", fresh, fresh.params, [0, 1], "g")
    assert loop == {"evals": 3} and targets == {"buffer": [6, 6]}
    np.testing.assert_array_equal(jax.random.key_data(got.key), jax.random.key_data(state.key))
    for a, b in zip(jax.tree.leaves(got.opt_state), jax.tree.leaves(state.opt_state)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(got_old["w"], old["w"])
    np.testing.assert_array_equal(got.updates, [5, 5])
    assert int(got.buffer.size.max()) == 0
    refilled, rounds = portable.refill(_Toy(), got, targets, 2)
    assert rounds == 2 and list(np.asarray(refilled.buffer.size)) == [6, 6]
    with pytest.raises(CheckpointError, match="seeds"):
        portable.load(tmp_path / "p", fresh, fresh.params, [0], "g")
    with pytest.raises(CheckpointError, match="game"):
        portable.load(tmp_path / "p", fresh, fresh.params, [0, 1], "h")
    bigger = stacked.stack_seeds([_toy_state(0), _toy_state(1)]).replace(params={"w": jnp.zeros((2, 5))})
    with pytest.raises(CheckpointError, match="w is float32"):
        portable.load(tmp_path / "p", bigger, bigger.params, [0, 1], "g")
