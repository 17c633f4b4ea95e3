"""Options of the one training loop that every trainer shares: extra evaluation opponents, the
perfect-play yardstick at every evaluation, and what chooses best/ (--select-by)."""

import json

import pytest

from c4jax.io import checkpoint
from c4jax.learning import loop
from c4jax.learning.config import validate
from scripts import run_script

# two evaluations, after 40 and 80 updates (4 per self-play game)
DQN = ("--total-updates", "80", "--buffer-size", "2000", "--learning-starts", "200", "--updates-per-episode", "4",
       "--eval-every", "40", "--no-progress")


def test_eval_yardstick_and_select_by_an_extra_opponent(tmp_path):
    out = tmp_path / "run"
    proc = run_script("dqn.py", "--out", out, *DQN, "--eval-yardstick", "--eval-opponents", "2steplA",
                      "--select-by", "2steplA")
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    for row in rows:
        assert 0.0 <= row["yardstick/keep"] <= 1.0 and row["yardstick/exact"] <= row["yardstick/keep"]
        assert row["yardstick/n"] == row["yardstick/n_opening"] + row["yardstick/n_middle"] + row["yardstick/n_end"]
        assert 0.0 <= row["eval/vs_2steplA"] <= 1.0
    # best/ is the evaluation with the best win rate against 2StepLA, not 1StepLA
    best = max(rows, key=lambda r: r["eval/vs_2steplA"])
    saved = checkpoint.read_metadata(out / "best")["metrics"]
    assert saved["eval/vs_2steplA"] == best["eval/vs_2steplA"] and rows[-1]["eval/best_vs_2steplA"] == best["eval/vs_2steplA"]
    assert json.loads((out / "summary.json").read_text())["best_vs_2steplA"] == best["eval/vs_2steplA"]


@pytest.mark.parametrize("flags, message", [
    ({"select_by": "yardstick"}, "--eval-yardstick"),
    ({"select_by": "2steplA"}, "--select-by"),
])
def test_bad_selection_flags(flags, message):
    with pytest.raises(ValueError, match=message):
        validate(loop.LoopConfig(**{"game": "connect_four", **flags}))


def test_an_unknown_evaluation_opponent_is_refused_when_the_run_starts():
    with pytest.raises(loop.ConfigError, match="--eval-opponents '9steplA': unknown agent"):
        loop.load_opponents(loop.LoopConfig(game="connect_four", eval_opponents=("9steplA",)))
