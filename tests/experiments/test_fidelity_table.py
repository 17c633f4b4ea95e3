"""experiments/fidelity_table.py on synthetic preset and ablation runs."""

import json
from pathlib import Path

from scripts import load_experiment

fidelity_table = load_experiment("fidelity_table")


def _fake(run: Path, best, final, re1, re2, det=None):
    (run / "rematch").mkdir(parents=True)
    spread = lambda v: {"mean": sum(v) / len(v), "values": v}  # noqa: E731
    run.joinpath("summary.json").write_text(json.dumps(
        {"seeds": list(range(len(best))), "best_vs_1steplA": spread(best), "final_vs_1steplA": spread(final)}))
    lines = ["run,rematch/1steplA,rematch/2steplA"] + [f"s{i},{a},{b}" for i, (a, b) in enumerate(zip(re1, re2))]
    run.joinpath("rematch", "summary.csv").write_text("\n".join(lines) + "\n")
    if det is not None:
        (run / "rematch_det").mkdir()
        lines = ["run,rematch/1steplA,rematch/2steplA"] + [f"s{i},{a},{b}" for i, (a, b) in enumerate(zip(*det))]
        run.joinpath("rematch_det", "summary.csv").write_text("\n".join(lines) + "\n")


def test_table_has_the_preset_and_each_variant_with_its_change(tmp_path):
    _fake(tmp_path / "dqn", [0.8, 0.9], [0.7, 0.8], [0.8, 0.9], [0.3, 0.4])
    _fake(tmp_path / "dqn-no_target_online", [0.9, 0.9], [0.8, 0.8], [0.9, 0.9], [0.5, 0.5])
    (tmp_path / "dqn-no_explore" / "seed_0").mkdir(parents=True)  # unfinished: left out
    out = tmp_path / "table.md"
    fidelity_table.main(fidelity_table.Args(runs=tmp_path, out=out))
    text = out.read_text()
    assert "## dqn" in text and "## ppo" not in text
    preset = next(l for l in text.splitlines() if l.startswith("| `--preset published`"))
    assert "| 2 | 0.850 ± 0.071 | 0.750 ± 0.071 | 0.850 ± 0.071 | 0.350 ± 0.071 |" in preset
    variant = next(l for l in text.splitlines() if "target_online" in l)
    assert "0.900 ± 0.000 (+0.050)" in variant and "0.500 ± 0.000 (+0.150)" in variant
    assert "explore" not in text


def test_greedy_rematch_columns_appear_when_a_run_has_them(tmp_path):
    _fake(tmp_path / "reinforce", [0.6, 0.6], [0.5, 0.5], [0.4, 0.4], [0.1, 0.1], det=([0.5, 0.5], [0.15, 0.15]))
    _fake(tmp_path / "reinforce-no_old_rule", [0.6, 0.6], [0.5, 0.5], [0.4, 0.4], [0.1, 0.1], det=([0.6, 0.6], [0.2, 0.2]))
    _fake(tmp_path / "reinforce-no_replace_draws", [0.6, 0.6], [0.5, 0.5], [0.4, 0.4], [0.1, 0.1])
    _fake(tmp_path / "dqn", [0.8, 0.9], [0.7, 0.8], [0.8, 0.9], [0.3, 0.4])
    text = fidelity_table.table(tmp_path)
    dqn, reinforce = text.split("## reinforce")
    assert "greedy" not in dqn and "greedy re-match vs 1StepLA" in reinforce
    assert "| 0.600 ± 0.000 (+0.100) | 0.200 ± 0.000 (+0.050) |" in reinforce
    no_draws = next(l for l in reinforce.splitlines() if "replace_draws" in l)
    assert no_draws.endswith("| – | – |")
    assert all(l.count("|") == 9 for l in reinforce.splitlines() if l.startswith("|"))


def test_the_kept_summaries_remake_the_same_table(tmp_path):
    runs, kept = tmp_path / "runs", tmp_path / "kept"
    _fake(runs / "ppo", [0.8, 0.9], [0.7, 0.8], [0.7, 0.8], [0.3, 0.4], det=([0.75, 0.8], [0.3, 0.35]))
    _fake(runs / "ppo-no_explore", [0.7, 0.9], [0.6, 0.8], [0.6, 0.8], [0.2, 0.4], det=([0.7, 0.7], [0.2, 0.3]))
    runs.joinpath("ppo-no_explore", "seeds.md").write_text("# seeds\n")
    (runs / "ppo-no_td_advantage" / "seed_0").mkdir(parents=True)  # unfinished: not kept
    (runs / "notes").mkdir()  # not a run: not kept
    made = fidelity_table.main(fidelity_table.Args(runs=runs, out=tmp_path / "a.md", save_to=kept))
    assert sorted(p.name for p in kept.iterdir()) == ["ppo", "ppo-no_explore"]
    assert sorted(p.name for p in (kept / "ppo-no_explore").iterdir()) == [
        "rematch.csv", "rematch_det.csv", "seeds.md", "summary.json"]
    assert fidelity_table.main(fidelity_table.Args(runs=kept, out=tmp_path / "b.md")) == made
    assert "explore` turned back | 2 | 0.800 ± 0.141 (-0.050)" in made
