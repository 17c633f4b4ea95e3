"""experiments/summarize.py on two synthetic runs of a sweep."""

import json
from pathlib import Path

import numpy as np
import pytest

from c4jax.io import checkpoint

from scripts import ROOT, load_experiment

summarize = load_experiment("summarize")


def _fake_run(path: Path, lr: float, curve: list[float], seconds_per_eval: float = 60.0, game: str = "connect_four"):
    checkpoint.save(path / "last", {"w": np.zeros(2, np.float32)},
                    {"algorithm": "ppo", "game": game, "config": {"learning_rate": lr, "seed": 0, "out": str(path)}})
    with open(path / "metrics.jsonl", "w") as f:
        for i, v in enumerate(curve):
            f.write(json.dumps({"step": (i + 1) * 100, "eval/vs_1steplA": v, "train/loss": 1.0 / (i + 1),
                                "time/wall_s": (i + 1) * seconds_per_eval}) + "\n")


def test_summarize_lists_config_differences_and_sorts_by_best(tmp_path):
    _fake_run(tmp_path / "a", 1e-4, [0.5, 0.6, 0.55])
    _fake_run(tmp_path / "b", 3e-4, [0.5, 0.7, 0.65])
    rows = summarize.summarize(summarize.Args(runs=(str(tmp_path / "a"), str(tmp_path / "b")),
                                              out=str(tmp_path / "sum")))
    assert [Path(r["run"]).name for r in rows] == ["b", "a"]
    assert rows[0]["best/eval/vs_1steplA"] == 0.7 and rows[0]["final/eval/vs_1steplA"] == 0.65
    assert rows[0]["config/learning_rate"] == 3e-4
    assert "config/seed" not in rows[0] and "config/out" not in rows[0]  # equal / irrelevant keys
    md = (tmp_path / "sum" / "summary.md").read_text()
    assert "config/learning_rate" in md and md.count("\n") == 4
    assert (tmp_path / "sum" / "summary.csv").is_file() and (tmp_path / "sum" / "curves.png").is_file()


def test_summarize_reads_runs_of_another_game(tmp_path):
    _fake_run(tmp_path / "checkers", 1e-4, [0.2, 0.4], game="checkers")
    rows = summarize.summarize(summarize.Args(runs=(str(tmp_path / "checkers"),), out=str(tmp_path / "sum"),
                                              metric="eval/vs_1steplA"))
    assert len(rows) == 1 and rows[0]["best/eval/vs_1steplA"] == 0.4


def test_until_minutes_compares_runs_at_equal_wall_clock_time(tmp_path):
    """A slow run (3 min an evaluation) that is best at its third evaluation loses to a fast run
    (1 min an evaluation) when both are cut at 5 minutes."""
    _fake_run(tmp_path / "fast", 1e-4, [0.5, 0.6, 0.62, 0.64, 0.66, 0.68], seconds_per_eval=60)
    _fake_run(tmp_path / "slow", 3e-4, [0.55, 0.6, 0.9], seconds_per_eval=180)
    runs = (str(tmp_path / "fast"), str(tmp_path / "slow"))
    everything = summarize.summarize(summarize.Args(runs=runs, out=str(tmp_path / "all")))
    assert Path(everything[0]["run"]).name == "slow" and everything[0]["minutes"] == 9.0
    cut = summarize.summarize(summarize.Args(runs=runs, out=str(tmp_path / "cut"), x="minutes", until_minutes=5))
    by_name = {Path(r["run"]).name: r for r in cut}
    assert [Path(r["run"]).name for r in cut] == ["fast", "slow"]
    assert by_name["fast"]["best/eval/vs_1steplA"] == 0.66 and by_name["fast"]["steps"] == 500
    assert by_name["slow"]["best/eval/vs_1steplA"] == 0.55 and by_name["slow"]["minutes"] == 3.0
    assert (tmp_path / "cut" / "curves.png").is_file() and "| minutes |" in (tmp_path / "cut" / "summary.md").read_text()
    summarize.summarize(summarize.Args(runs=runs, out=str(tmp_path / "hours"), x="hours"))
    assert (tmp_path / "hours" / "curves.png").is_file()
    for bad in (dict(x="days"), dict(until_minutes=-1.0)):
        with pytest.raises(ValueError, match="--x|--until-minutes"):
            summarize.summarize(summarize.Args(runs=runs, out=str(tmp_path / "bad"), **bad))


def test_summarize_rejects_a_directory_that_is_not_a_run(tmp_path):
    (tmp_path / "junk").mkdir()
    with pytest.raises(checkpoint.CheckpointError, match="junk"):
        summarize.summarize(summarize.Args(runs=(str(tmp_path / "junk"),), out=str(tmp_path / "s")))


def test_rematch_replays_each_runs_agent_against_the_named_opponents(tmp_path):
    root = ROOT / "checkpoints"
    rows = summarize.summarize(summarize.Args(runs=(str(root / "dqn"), str(root / "ppo")), out=str(tmp_path / "s"),
                                              rematch=("random", "1steplA"), rematch_mode="det"))
    by_algo = {r["algorithm"]: r for r in rows}
    assert set(by_algo) == {"dqn", "ppo"}
    for r in rows:
        assert r["rematch/random"] >= 0.9 and 0.0 <= r["rematch/1steplA"] <= 1.0
    md = (tmp_path / "s" / "summary.md").read_text()
    assert "rematch/random" in md and "rematch/1steplA" in md
    # greedy agents against deterministic opponents: the re-match repeats exactly
    again = summarize.summarize(summarize.Args(runs=(str(root / "dqn"),), out=str(tmp_path / "t"),
                                               rematch=("1steplA",), rematch_mode="det", rematch_seed=7))
    assert again[0]["rematch/1steplA"] == by_algo["dqn"]["rematch/1steplA"]
    with pytest.raises(ValueError, match="rematch-mode"):
        summarize.summarize(summarize.Args(runs=(str(root / "dqn"),), out=str(tmp_path / "u"), rematch_mode="x"))


def test_cpu_hours_puts_each_evaluation_at_the_process_cpu_time(tmp_path, monkeypatch):
    """``--x cpu_hours`` reads ``time/cpu_s`` (a run paused or sharing its core has wall time to spare);
    rows logged without it are left out."""
    run = tmp_path / "run"
    _fake_run(run, 1e-4, [0.2, 0.3, 0.4], seconds_per_eval=3600)
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    rows[1]["time/cpu_s"], rows[2]["time/cpu_s"] = 1800.0, 2700.0  # the first row predates the field
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    drawn = {}
    monkeypatch.setattr(summarize.runlog, "plot_panels", lambda merged, *a, **k: drawn.update(merged=merged, **k))
    summarize.summarize(summarize.Args(runs=(str(run),), out=str(tmp_path / "sum"), x="cpu_hours"))
    assert [m["x"] for m in drawn["merged"]] == [0.5, 0.75] and drawn["xlabel"] == "CPU hours"
