"""The end-to-end pipeline on the quick preset: every stage runs and the report is written."""

import json
import pytest

from scripts import run_script


@pytest.mark.slow
def test_reproduce_quick_preset_end_to_end(tmp_path):
    out = tmp_path / "rep"
    proc = run_script("reproduce.py", "--preset", "quick", "--out", out, "--no-progress")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    report = (out / "report.md").read_text()
    for section in ("## Stages", "## Supervised stage", "## RL: best win rate vs 1StepLA",
                    "## Ranking by mean win rate", "Table 5.1", "Table 5.2", "Table 5.4", "Ratings"):
        assert section in report, section
    stages = json.loads((out / "stages.json").read_text())
    assert [s["stage"] for s in stages] == ["supervised", "dqn", "dueling_dqn", "reinforce", "ppo", "tournament",
                                                   "yardstick"]
    assert all(s["returncode"] == 0 for s in stages)
    for algo in ("dqn", "dueling_dqn", "reinforce", "ppo"):
        assert (out / algo / "best" / "metadata.json").is_file(), algo
        assert f"| {algo} | " in report
    assert (out / "tournament" / "heatmap.png").is_file()
    # the ranking carries each agent's optimal-move rate from the yardstick stage
    graded = json.loads((out / "yardstick" / "yardstick.json").read_text())["agents"]
    keep = {a["agent"]: a["metrics"]["yardstick/keep"] for a in graded}
    assert "optimal moves (keep)" in report and "| 1steplA:det | " in report
    row = next(line for line in report.splitlines() if line.startswith("| 1steplA:det | "))
    assert f"| {keep['1steplA:det']:.3f} |" in row
