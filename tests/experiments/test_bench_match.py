"""experiments/bench_match.py: flags are checked, and a match of two deterministic networks is timed in
both modes, which play the same games."""


import pytest

from scripts import load_experiment

bench_match = load_experiment("bench_match")


@pytest.mark.parametrize("argv", [["--repeats", "0"], ["ppo", "dqn"], ["checkers/ppo", "dqn"],
                                  ["checkers/nosuchagent", "checkers/random"]])
def test_bad_flags_exit_2(argv):
    with pytest.raises(SystemExit) as e:
        bench_match.main(argv)
    assert e.value.code == 2


@pytest.mark.slow  # two Checkers matches and their compiles; tests/agents/test_compact.py checks the same games in the suite
def test_a_match_of_deterministic_networks_in_both_modes(tmp_path, capsys):
    res = bench_match.main(["checkers/alphazero@0", "checkers/dqn", "--out", str(tmp_path / "b.md")])
    assert res["same_games"] and res["full_s"] > 0 and res["compact_s"] > 0
    assert res["ratio"] == pytest.approx(res["full_s"] / res["compact_s"])
    assert "ratio full / compact" in capsys.readouterr().out
    table = (tmp_path / "b.md").read_text()
    assert "| checkers/alphazero@policy:det | checkers/dqn:det |" in table and "| yes |" in table
