"""kill -9 at any moment loses nothing: every trainer, the supervised trainer and the dataset
generator, killed with SIGKILL at random moments (one the instant a checkpoint write begins)
and resumed with --resume until they finish, end exactly as an uninterrupted run with the same
seed: parameters of last/ and best/, metric rows and summaries (time fields aside).

The harness is tests/support/crash.py. The full matrix is slow (a subprocess per launch), and so is a
DQN run killed mid-write whose checkpoints are then damaged; the un-marked tests kill the dataset
generator mid-write (the cheapest subprocess) and resume it in-process, and make the training
loop fall back from a damaged last/ without training.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import jax
import numpy as np
import orbax.checkpoint as ocp
import pytest

import crash
from c4jax.io import checkpoint, runlog
from c4jax.learning import dataset as data
from c4jax.learning import dqn, loop, stacked
from scripts import run_script
from c4jax import games as c4games

C4 = c4games.make(c4games.DEFAULT)

DQN = ("--buffer-size", "2000", "--learning-starts", "200", "--eval-every", "200", "--no-progress")
PPO = ("--buffer-size", "256", "--games-per-collect", "16", "--epochs", "2", "--no-progress")
REINFORCE = ("--games-per-collect", "5", "--eval-every", "10", "--no-progress")
ALPHAZERO = ("--games", "4", "--num-simulations", "4", "--updates-per-iteration", "2", "--eval-every", "2",
             "--buffer-size", "400", "--batch-size", "8", "--eval-simulations", "4", "--play-simulations", "6",
             "--width", "8", "--eval-opponents", "random", "--select-by", "random", "--no-eval-yardstick",
             "--no-progress")


# --- what the harness watches -------------------------------------------------------------------

def _stat(path: Path):
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_mtime_ns


def _referenced(ckpt: Path) -> set[str]:
    """The state directories that ``ckpt``'s metadata.json and previous.json name."""
    names = set()
    for f in (checkpoint.METADATA_FILE, checkpoint.PREVIOUS_FILE):
        try:
            names.add(f"{ckpt}/{json.loads((ckpt / f).read_text())['state_dir']}")
        except (OSError, ValueError, KeyError):
            pass
    return names


def loop_job(script: str, args: tuple[str, ...], seeds: int = 1) -> crash.Job:
    def ckpt_dirs(out: Path) -> list[Path]:
        bests = [out / "best"] if seeds == 1 else [out / f"seed_{s}" / "best" for s in range(seeds)]
        return [out / "last", *bests]

    return crash.Job(script, args, resumable=lambda out: checkpoint.exists(out / "last"),
                     commit=lambda out: _stat(out / "last" / checkpoint.METADATA_FILE), write_dirs=ckpt_dirs)


def _loop_committed(job: crash.Job):
    return lambda out: set().union(*(_referenced(d) for d in job.write_dirs(out)))


def supervised_job(dataset: Path) -> crash.Job:
    args = ("--dataset", str(dataset), "--epochs", "8", "--chunk-steps", "10", "--no-progress")
    return crash.Job("supervised.py", args,
                     resumable=lambda out: checkpoint.exists(out / "last") or (out / "summary.json").is_file(),
                     commit=lambda out: _stat(out / "last" / checkpoint.METADATA_FILE),
                     write_dirs=lambda out: [out / "last", out])


def dataset_job() -> crash.Job:
    args = ("--num-pairs", "100000", "--batch", "1024", "--seed", "3", "--no-progress")
    return crash.Job("make_dataset.py", args,
                     resumable=lambda out: out.is_file() or (out.parent / (out.name + ".progress")).is_file(),
                     commit=lambda out: _stat(out.parent / (out.name + ".progress")),
                     write_dirs=lambda out: [out.parent],
                     is_write=lambda name: name.startswith(".") and name.endswith(".tmp"))


# --- comparing two runs ---------------------------------------------------------------------------

def _raw(ckpt: Path) -> dict:
    meta = checkpoint.read_metadata(ckpt)
    with ocp.Checkpointer(ocp.StandardCheckpointHandler()) as c:
        return c.restore(ckpt.absolute() / meta["state_dir"])


def assert_same_checkpoint(a: Path, b: Path) -> None:
    ta, tb = _raw(a), _raw(b)
    la, lb = (dict(_leaves(t)) for t in (ta, tb))
    assert la.keys() == lb.keys()
    for k in la:
        np.testing.assert_array_equal(la[k], lb[k], err_msg=f"{b}: {k}")
    ma, mb = checkpoint.read_metadata(a), checkpoint.read_metadata(b)
    assert ma["checksum"] == mb["checksum"]
    assert _timeless(ma.get("metrics")) == _timeless(mb.get("metrics"))
    assert _timeless(ma.get("loop")) == _timeless(mb.get("loop"))


def _leaves(tree) -> list[tuple[str, np.ndarray]]:
    return [(jax.tree_util.keystr(p), np.asarray(x)) for p, x in jax.tree_util.tree_flatten_with_path(tree)[0]]


TIME_KEYS = {"wall_s", "command", "timings", "runs", "saved_at", "generation_s"}


def _timeless(obj):
    """``obj`` without wall-clock times, commands and paths (which differ between two runs)."""
    if isinstance(obj, dict):
        return {k: _timeless(v) for k, v in obj.items() if k not in TIME_KEYS and not k.startswith("time/")}
    if isinstance(obj, list):
        return [_timeless(v) for v in obj]
    return obj


def assert_same_run_dir(a: Path, b: Path) -> None:
    """Metric rows, summary and the best/ checkpoint of two run directories are the same."""
    ra, rb = (runlog.read_metrics(d / runlog.METRICS_JSONL) for d in (a, b))
    assert [r["step"] for r in ra] == [r["step"] for r in rb]
    assert _timeless(ra) == _timeless(rb)
    assert _timeless(json.loads((a / "summary.json").read_text())) == _timeless(json.loads((b / "summary.json").read_text()))
    for f in ("metrics.csv", "curves.png"):
        assert (b / f).is_file(), f
    if (a / "best").exists():
        assert_same_checkpoint(a / "best", b / "best")


def assert_no_litter(out: Path) -> None:
    """No temporary file or orphaned state directory is left behind."""
    litter = [str(p) for p in out.rglob(".*")]
    for meta in out.rglob(checkpoint.METADATA_FILE):
        keep = {Path(n).name for n in _referenced(meta.parent)}
        litter += [str(p) for p in meta.parent.glob(f"{checkpoint.STATE_PREFIX}*") if p.name not in keep]
    assert not litter, litter


# --- the tests ----------------------------------------------------------------------------------

LOOP_JOBS = {
    "dqn": (loop_job("dqn.py", ("--total-updates", "1800", *DQN)), 1),
    "dueling_dqn": (loop_job("dueling_dqn.py", ("--total-updates", "1800", *DQN)), 1),
    "ppo": (loop_job("ppo.py", ("--total-updates", "150", *PPO)), 1),
    "reinforce": (loop_job("reinforce.py", ("--total-updates", "90", *REINFORCE)), 1),
    "alphazero": (loop_job("alphazero.py", ("--total-updates", "18", *ALPHAZERO)), 1),
    "ppo_vmap_seeds": (loop_job("ppo.py", ("--total-updates", "150", "--vmap-seeds", "2", *PPO), seeds=2), 2),
}


def _crash_run(tmp_path: Path, job: crash.Job, seed: int, committed=lambda out: set(), kills: int = 5):
    ref, got = tmp_path / "reference", tmp_path / "crashed"
    timing = crash.run_once(job, ref, tmp_path / "logs")
    assert timing.commits > crash.most_progress(kills), f"the run is too short for {kills} kills: {timing}"
    report = crash.crash_and_resume(job, got, timing, tmp_path / "logs", kills=kills, seed=seed, committed=committed)
    assert len(report.kills) >= kills, report.kills
    assert report.kills_in_writes >= 1, report.kills  # at least one kill tore a checkpoint write
    assert report.resumed_launches >= 2, report.kills
    return ref, got, report


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LOOP_JOBS))
def test_a_trainer_killed_five_times_ends_like_an_uninterrupted_run(tmp_path, name):
    job, seeds = LOOP_JOBS[name]
    ref, got, report = _crash_run(tmp_path, job, seed=sorted(LOOP_JOBS).index(name), committed=_loop_committed(job))
    assert_same_checkpoint(ref / "last", got / "last")
    if seeds == 1:
        assert_same_run_dir(ref, got)
    else:
        for s in range(seeds):
            assert_same_run_dir(ref / f"seed_{s}", got / f"seed_{s}")
        assert _timeless(json.loads((ref / "summary.json").read_text())) == \
            _timeless(json.loads((got / "summary.json").read_text()))
        table = lambda d: [line for line in (d / "seeds.md").read_text().splitlines() if line.startswith("|")]  # noqa: E731
        assert table(ref) == table(got)
    if name == "alphazero":
        assert (got / "curves_wall.png").is_file()
    assert_no_litter(got)


@pytest.mark.slow
def test_the_supervised_trainer_killed_five_times_ends_like_an_uninterrupted_run(tmp_path):
    dataset = tmp_path / "ds.npz"
    data.generate(2000, seed=0, game=C4).save_npz(dataset)
    job = supervised_job(dataset)
    ref, got, _ = _crash_run(tmp_path, job, seed=11,
                             committed=lambda out: _referenced(out / "last") | _referenced(out))
    assert_same_checkpoint(ref, got)  # the agent: the best epoch's weights
    ra, rb = (runlog.read_metrics(d / runlog.METRICS_JSONL) for d in (ref, got))
    assert [r["epoch"] for r in rb] == list(range(1, 9)) and _timeless(ra) == _timeless(rb)
    assert _timeless(json.loads((ref / "summary.json").read_text())) == _timeless(json.loads((got / "summary.json").read_text()))
    assert not (got / "last").exists()  # a finished run leaves nothing to resume
    assert_no_litter(got)


@pytest.mark.slow
def test_the_dataset_generator_killed_five_times_writes_the_same_dataset(tmp_path):
    job = dataset_job()
    ref, got, _ = _crash_run(tmp_path, job, seed=12)
    a, b = data.Dataset.load_npz(ref), data.Dataset.load_npz(got)
    for k in ("observations", "actions", "groups"):
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k))
    assert a.info == b.info
    assert not (got.parent / (got.name + ".progress")).exists()
    assert not [p for p in got.parent.iterdir() if p.name.startswith(".")]


# Runs the script named by argv[1] with os.replace pausing before the second rename onto a
# ``.progress`` file: that write's temporary file stays on disk until the test's SIGKILL. The
# script's folder, which ``python SCRIPT`` would put on sys.path, comes in through PYTHONPATH.
_HOLD_SECOND_PROGRESS_WRITE = """
import os, runpy, sys, time
_replace, _seen = os.replace, []
def _held(src, dst, *a, **k):
    if str(dst).endswith(".progress"):
        _seen.append(dst)
        if len(_seen) == 2:
            time.sleep(600)
    return _replace(src, dst, *a, **k)
os.replace = _held
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def _torn(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.startswith(".crashed.npz.progress.")]


def test_the_dataset_generator_killed_mid_write_resumes_exactly(tmp_path):
    """The cheap representative of the matrix above: a generation killed the instant its second
    progress write begins, resumed in this process, writes the dataset of an uninterrupted run."""
    args = ("--num-pairs", "6000", "--batch", "256", "--seed", "2", "--no-progress")
    job = dataclasses.replace(dataset_job(), args=args)
    ref, got = tmp_path / "reference.npz", tmp_path / "crashed.npz"
    assert run_script("make_dataset.py", "--out", ref, *args).returncode == 0
    # The generator runs with os.replace held back on its second progress write, so the kill
    # lands inside that write every time (a small file's write is otherwise over before the kill).
    command = crash.command(job, got, resume=False)
    env = crash._env()
    env["PYTHONPATH"] = os.pathsep.join([str(Path(command[1]).parent), env["PYTHONPATH"]])
    proc = subprocess.Popen([command[0], "-c", _HOLD_SECOND_PROGRESS_WRITE, *command[1:]], cwd=crash.ROOT,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    progress = tmp_path / "crashed.npz.progress"
    try:
        # The held write is the one whose temporary file exists while a progress file does: the
        # first write's temporary file is gone once its rename made the progress file. Checking
        # the state, not watching for changes, cannot miss the write however late this process runs.
        deadline = time.monotonic() + 300
        while not (progress.exists() and _torn(tmp_path)):
            assert proc.poll() is None, "the generator ended before its second progress write"
            assert time.monotonic() < deadline, "no second progress write within 300 s"
            time.sleep(0.001)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert _torn(tmp_path) and not got.exists()  # killed inside the write of the progress file
    resumed = run_script("make_dataset.py", "--out", got, *args, "--resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resuming from" in resumed.stdout
    a, b = data.Dataset.load_npz(ref), data.Dataset.load_npz(got)
    for k in ("observations", "actions", "groups"):
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["crashed.npz", "reference.npz"]  # no litter


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # orbax, after a failed restore
def test_the_loop_resumes_from_the_checkpoint_before_a_damaged_one(tmp_path, capsys):
    """loop.load_state, what --resume calls, on a last/ whose newest checkpoint is truncated."""
    algo = dqn.DQN(dqn.DQNConfig(buffer_size=200, learning_starts=20), game=C4)
    cfg = loop.LoopConfig(game="connect_four", init_from="")
    state = stacked.stack_seeds([loop.initial_state(algo, cfg, 128, 0)])
    for evals in (1, 2):
        loop.save_state(tmp_path / "last", state.replace(updates=state.updates + evals), state.params,
                        {"evals": evals}, {"seeds": [0]})
    meta = checkpoint.read_metadata(tmp_path / "last")
    biggest = max((p for p in (tmp_path / "last" / meta["state_dir"]).rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)
    biggest.write_bytes(biggest.read_bytes()[:100])
    got, _, counters = loop.load_state(tmp_path / "last", state, state.params, [0])
    assert counters == {"evals": 1} and int(got.updates[0]) == int(state.updates[0]) + 1
    err = capsys.readouterr().err
    assert err.startswith("warning: ") and "previous checkpoint" in err and err.count("\n") == 1
    with pytest.raises(checkpoint.CheckpointError, match="holds seeds"):
        loop.load_state(tmp_path / "last", state, state.params, [1])


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # orbax, after a failed restore
def test_a_kill_mid_write_and_a_damaged_checkpoint_lose_nothing(tmp_path):
    """A DQN run killed the instant the write of its
    second (and last) checkpoint begins, resumed in this process, equals the uninterrupted run.
    Then its newest checkpoint loses half its array data: --resume falls back to the one before
    with one warning and ends exactly there again; with both damaged, --resume is one error line."""
    args = ("--total-updates", "400", *DQN)
    ref, got = tmp_path / "reference", tmp_path / "crashed"
    assert run_script("dqn.py", "--out", ref, *args).returncode == 0
    job = loop_job("dqn.py", args)
    proc = subprocess.Popen(crash.command(job, got, resume=False), cwd=crash.ROOT, env=crash._env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert crash._wait_commits(job, got, proc, 1)
        last_before = set(os.listdir(got / "last"))
        while proc.poll() is None and not {n for n in os.listdir(got / "last") if n.startswith("state-")} - last_before:
            time.sleep(0.0005)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert [r["step"] for r in runlog.read_metrics(got / runlog.METRICS_JSONL)] == [200, 400]  # logged before the write
    resumed = run_script("dqn.py", "--out", got, *args, "--resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "at 200 updates" in resumed.stdout
    assert_same_checkpoint(ref / "last", got / "last")
    assert_same_run_dir(ref, got)
    assert_no_litter(got)

    meta = checkpoint.read_metadata(got / "last")
    data_file = max((p for p in (got / "last" / meta["state_dir"]).rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)
    data_file.write_bytes(data_file.read_bytes()[: data_file.stat().st_size // 2])
    fell_back = run_script("dqn.py", "--out", got, *args, "--resume")
    assert fell_back.returncode == 0 and "Traceback" not in fell_back.stderr, fell_back.stderr[-3000:]
    warnings = [line for line in fell_back.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and "could not be restored" in warnings[0] and "previous checkpoint" in warnings[0]
    assert "at 200 updates" in fell_back.stdout
    assert_same_checkpoint(ref / "last", got / "last")
    assert_same_run_dir(ref, got)

    (got / "last" / checkpoint.METADATA_FILE).write_text("{garbage")
    (got / "last" / checkpoint.PREVIOUS_FILE).write_text(json.dumps({"format_version": 1, "state_dir": "state-0"}))
    bad = run_script("dqn.py", "--out", got, *args, "--resume")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    errors = [line for line in bad.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "unreadable metadata.json" in errors[0] and "previous checkpoint" in errors[0]
