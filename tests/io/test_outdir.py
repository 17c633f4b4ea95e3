"""Runs are never lost by accident: every entry point refuses an --out that holds results unless
--resume or --overwrite says what to do, refuses a --resume with other settings, and faults (a
read-only output, a full disk, a checkpoint of another game or network) end with one line and
leave the files that were there as they were."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import resource
import shutil
import subprocess
from pathlib import Path

import jax
import numpy as np
import pytest

from c4jax import agents
from c4jax.io import checkpoint, outdir
from c4jax.nets import cnet
from scripts import run_script

PPO = ("--buffer-size", "256", "--games-per-collect", "16", "--epochs", "2", "--eval-every", "16", "--no-progress")


def _snapshot(root: Path) -> dict[str, str]:
    """sha256 of every file below ``root``, by relative path."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _one_error_line(proc) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-3000:])
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr[-3000:]
    return lines[0]


@pytest.fixture(scope="module")
def ppo_run(tmp_path_factory) -> Path:
    """A finished two-evaluation PPO run (copied by the tests that change it)."""
    out = tmp_path_factory.mktemp("ppo") / "run"
    proc = run_script("ppo.py", "--out", out, "--total-updates", "20", *PPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def _copy(run: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "run"
    shutil.copytree(run, dst)
    return dst


@contextlib.contextmanager
def _read_only(d: Path):
    """``d`` made unwritable: mode 0o555, and for root (whom modes do not stop) the immutable attribute."""
    mode = d.stat().st_mode
    os.chmod(d, 0o555)
    immutable = False
    try:
        probe = d / ".probe"
        try:
            probe.touch()
            probe.unlink()
            writable = True
        except OSError:
            writable = False
        if writable and shutil.which("chattr"):
            immutable = subprocess.run(["chattr", "+i", str(d)], capture_output=True).returncode == 0
            try:
                probe.touch()
                probe.unlink()
            except OSError:
                writable = False
        if writable:
            pytest.skip("cannot make a directory read-only here (root without chattr +i)")
        yield d
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(d)], check=True)
        os.chmod(d, mode)


# --- what "holds a run" means ---------------------------------------------------------------------


def test_found_names_what_holds_results_of_each_kind(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    assert outdir.found(run, outdir.RUN) == []
    (run / "metrics.jsonl").write_text("")  # a run killed before its first evaluation left nothing
    (run / "curves.png").write_text("x")
    assert outdir.found(run, outdir.RUN) == []
    (run / "metrics.jsonl").write_text('{"step": 1}\n')
    assert outdir.found(run, outdir.RUN) == ["metrics.jsonl"]
    checkpoint.save(run / "best", {"a": np.zeros(3)}, {})
    checkpoint.save(run / "seed_3" / "last", {"a": np.zeros(3)}, {})
    (run / "seed_4").mkdir()  # an empty seed folder holds nothing
    assert outdir.found(run, outdir.RUN) == ["metrics.jsonl", "best/", "seed_3/"]

    data = tmp_path / "d" / "set.npz"
    assert outdir.found(data, outdir.DATASET) == []
    data.parent.mkdir()
    (data.parent / "set.npz.progress").write_text("x")
    assert outdir.found(data, outdir.DATASET) == ["set.npz.progress"]

    t = tmp_path / "t"
    t.mkdir()
    (t / "heatmap.png").write_text("x")
    assert outdir.found(t, outdir.TOURNAMENT) == []
    (t / "table_5_2_first_player.md").write_text("x")
    assert outdir.found(t, outdir.TOURNAMENT) == ["table_5_2_first_player.md"]
    (t / "yardstick.json").write_text("{}")
    assert outdir.found(t, outdir.YARDSTICK) == ["yardstick.json"]


def test_claim_refuses_and_overwrite_deletes_only_what_the_kind_owns(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "metrics.jsonl").write_text('{"step": 1}\n')
    checkpoint.save(out / "last", {"a": np.zeros(3)}, {})
    (out / "notes.txt").write_text("mine")
    (out / "seed_0").mkdir()
    (out / "seed_0" / "metrics.jsonl").write_text('{"step": 1}\n')
    with pytest.raises(outdir.OutputError, match=r"already holds a run \(metrics.jsonl, last/, seed_0/\): pass "
                                                 r"--resume to continue it, --overwrite to replace it"):
        outdir.claim(out, outdir.RUN)
    assert outdir.claim(out, outdir.RUN, resume=True) == out
    assert outdir.found(out, outdir.RUN) == ["metrics.jsonl", "last/", "seed_0/"]
    with pytest.raises(outdir.OutputError, match="give one of them"):
        outdir.claim(out, outdir.RUN, resume=True, overwrite=True)
    outdir.claim(out, outdir.RUN, overwrite=True)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    t = tmp_path / "t"
    t.mkdir()
    (t / "report.md").write_text("x")
    with pytest.raises(outdir.OutputError, match=r"holds a tournament \(report.md\): pass --overwrite to replace it"):
        outdir.claim(t, outdir.TOURNAMENT)


def test_config_differences_name_the_flags_that_must_match():
    saved = {"total_updates": 20, "learning_rate": 3e-4, "eval_opponents": ["2steplA"], "progress": True, "old": 1}
    now = {"total_updates": 40, "learning_rate": 1e-3, "eval_opponents": ("2steplA",), "progress": False, "new": 2}
    assert outdir.config_differences(saved, now, {"total_updates", "progress"}) == ["--learning-rate"]
    with pytest.raises(outdir.OutputError, match=r"other settings \(--learning-rate 0.0003\)"):
        outdir.check_resume_config(saved, now, {"total_updates", "progress"}, "runs/x")
    outdir.check_resume_config(None, now, (), "runs/x")  # a run saved before settings were recorded


# --- every entry point ----------------------------------------------------------------------------


def test_a_trainer_refuses_an_out_that_holds_a_run_and_overwrite_replaces_it(ppo_run, tmp_path):
    out = _copy(ppo_run, tmp_path)
    before = _snapshot(out)
    line = _one_error_line(run_script("ppo.py", "--out", out, "--total-updates", "20", *PPO))
    assert "already holds a run (metrics.jsonl, last/, best/, portable/, summary.json)" in line and "--overwrite" in line
    assert _snapshot(out) == before
    (out / "notes.txt").write_text("mine")
    proc = run_script("ppo.py", "--out", out, "--total-updates", "20", "--overwrite", *PPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (out / "notes.txt").read_text() == "mine"
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [json.loads(x)["step"] for x in (ppo_run / "metrics.jsonl").read_text().splitlines()]


def test_resume_refuses_other_settings_and_may_train_longer(ppo_run, tmp_path):
    out = _copy(ppo_run, tmp_path)
    before = _snapshot(out)
    line = _one_error_line(run_script("ppo.py", "--out", out, "--resume", "--total-updates", "40",
                                      "--learning-rate", "1e-3", "--clip", "0.3", *PPO))
    assert "other settings (--clip 0.2, --learning-rate " in line, line
    assert _snapshot(out) == before
    proc = run_script("ppo.py", "--out", out, "--resume", "--total-updates", "40", *PPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    steps = [json.loads(x)["step"] for x in (out / "metrics.jsonl").read_text().splitlines()]
    first = [json.loads(x)["step"] for x in (ppo_run / "metrics.jsonl").read_text().splitlines()]
    assert first[-1] < steps[-1] <= 40 and len(steps) > len(first)  # trained longer, within the new budget


@pytest.mark.parametrize("script,kind,marker,args", [
    ("tournament.py", "tournament", "report.md", ("--agents", "random", "1steplA", "--no-timing", "--no-progress")),
    ("yardstick.py", "yardstick grading", "yardstick.json", ("--agents", "random")),
    ("supervised.py", "run", "summary.json", ("--epochs", "1", "--no-progress")),
])
def test_every_script_refuses_an_out_that_holds_its_results(tmp_path, script, kind, marker, args):
    out = tmp_path / "out"
    out.mkdir()
    (out / marker).write_text("{}")
    line = _one_error_line(run_script(script, "--out", out, *args))
    assert f"already holds a {kind} ({marker})" in line and "--overwrite" in line, line
    assert sorted(p.name for p in out.iterdir()) == [marker] and (out / marker).read_text() == "{}"


def test_make_dataset_refuses_an_existing_dataset_and_overwrite_replaces_it(tmp_path):
    path = tmp_path / "d.npz"
    path.write_bytes(b"an older dataset")
    line = _one_error_line(run_script("make_dataset.py", "--out", path, "--num-pairs", "64", "--batch", "16",
                                      "--no-progress"))
    assert "already holds a dataset (d.npz)" in line and "--resume" in line, line
    assert path.read_bytes() == b"an older dataset"
    proc = run_script("make_dataset.py", "--out", path, "--num-pairs", "64", "--batch", "16", "--no-progress",
                      "--overwrite")
    assert proc.returncode == 0, proc.stderr[-3000:]
    from c4jax.learning.dataset import Dataset
    assert len(Dataset.load_npz(path)) == 64


# --- faults ---------------------------------------------------------------------------------------


def test_a_read_only_out_is_refused_before_anything_runs(ppo_run, tmp_path):
    out = _copy(ppo_run, tmp_path)
    before = _snapshot(out)
    with _read_only(out):
        line = _one_error_line(run_script("ppo.py", "--out", out, "--resume", "--total-updates", "40", *PPO))
        assert line.startswith(f"error: cannot write to --out {str(out)!r}:"), line
        t = _one_error_line(run_script("tournament.py", "--out", out / "t", "--agents", "random", "1steplA",
                                       "--no-timing", "--no-progress"))
        assert t.startswith(f"error: cannot create --out {str(out / 't')!r}:"), t
    assert _snapshot(out) == before


def test_a_disk_that_fills_during_a_checkpoint_ends_in_one_line_and_keeps_the_checkpoint(ppo_run, tmp_path):
    """RLIMIT_FSIZE makes every write past 64 KiB fail with EFBIG (Python ignores SIGXFSZ), as a full
    disk fails a write with ENOSPC: the metrics rows fit, the checkpoint's arrays do not."""
    out = _copy(ppo_run, tmp_path)
    kept = {k: v for k, v in _snapshot(out).items() if k.startswith(("last/", "best/"))}
    rows = (out / "metrics.jsonl").read_text()
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, hard))
    try:
        proc = run_script("ppo.py", "--out", out, "--resume", "--total-updates", "40", *PPO)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    line = _one_error_line(proc)
    assert "File too large" in line and "the checkpoint that was there is kept" in line, line
    assert {k: v for k, v in _snapshot(out).items() if k.startswith(("last/", "best/"))} == kept
    assert (out / "metrics.jsonl").read_text().startswith(rows)
    assert not list(out.glob("*/state-*.orbax-checkpoint-tmp"))
    proc = run_script("ppo.py", "--out", out, "--resume", "--total-updates", "40", *PPO)  # the room is back
    assert proc.returncode == 0, proc.stderr[-3000:]


def _foreign_checkpoint(directory: Path, *, width: int = 128, game: str = "connect_four") -> None:
    params = cnet.init_params(jax.random.key(0), width=width, heads="one")
    meta = {"name": "x", "algorithm": "supervised", "game": game, "network": {"width": width, "heads": "one"},
            "agent": {"output": "policy", "default_mode": "det", "symmetric": False}}
    checkpoint.save(directory, {"params": params}, meta)


def test_a_checkpoint_of_another_game_or_network_is_refused_in_one_line(ppo_run, tmp_path):
    other_game, narrow = tmp_path / "checkers", tmp_path / "narrow"
    _foreign_checkpoint(other_game, game="checkers")
    _foreign_checkpoint(narrow, width=32)
    with pytest.raises(checkpoint.CheckpointError, match="the CNET does not read checkers"):
        agents.load(str(other_game))
    out = tmp_path / "new"
    line = _one_error_line(run_script("ppo.py", "--out", out, "--init-from", other_game, *PPO))
    assert "is of the game 'checkers'" in line
    line = _one_error_line(run_script("ppo.py", "--out", out, "--init-from", narrow, *PPO))
    assert "has width 32, this run uses 128" in line
    assert not (out / "metrics.jsonl").exists()
    # a run's own last/ of another network shape, or of another game
    run = _copy(ppo_run, tmp_path)
    before = _snapshot(run)
    line = _one_error_line(run_script("ppo.py", "--out", run, "--resume", "--total-updates", "40", "--width", "64", *PPO))
    assert "other settings (--width 128)" in line, line
    assert _snapshot(run) == before
    meta_path = run / "last" / checkpoint.METADATA_FILE
    meta_path.write_text(json.dumps({**json.loads(meta_path.read_text()), "game": "checkers"}))
    (run / "last" / checkpoint.PREVIOUS_FILE).unlink(missing_ok=True)
    before = _snapshot(run)
    line = _one_error_line(run_script("ppo.py", "--out", run, "--resume", "--total-updates", "40", *PPO))
    assert "is of the game 'checkers'" in line, line
    assert _snapshot(run) == before


class _Killed(Exception):
    pass


def test_supervised_resume_refuses_other_settings_and_may_train_longer(tmp_path, monkeypatch):
    from c4jax.learning import supervised as sv

    out = tmp_path / "sup"
    args = ("--dataset", tmp_path / "ds.npz", "--num-pairs", "400", "--chunk-steps", "10", "--no-eval-matches",
            "--no-progress")
    save = sv.save_progress

    def save_then_die(directory, state, best_params, progress):  # a kill right after the first epoch's save
        save(directory, state, best_params, progress)
        raise _Killed

    monkeypatch.setattr(sv, "save_progress", save_then_die)
    with pytest.raises(_Killed):
        run_script("supervised.py", "--out", out, "--epochs", "2", *args)
    monkeypatch.undo()
    before = _snapshot(out)
    line = _one_error_line(run_script("supervised.py", "--out", out, "--epochs", "2", "--resume", "--batch-size", "32",
                                      *args))
    assert "other settings (--batch-size 64)" in line, line
    assert _snapshot(out) == before
    proc = run_script("supervised.py", "--out", out, "--epochs", "3", "--resume", *args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [json.loads(x)["epoch"] for x in (out / "metrics.jsonl").read_text().splitlines()] == [1, 2, 3]
