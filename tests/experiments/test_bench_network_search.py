"""experiments/bench_network_search.py: flags are checked, and a tiny run times both searches of a
Checkers network and writes its table."""


import pytest

from scripts import load_experiment

bench_network_search = load_experiment("bench_network_search")


@pytest.mark.parametrize("argv", [["--batch", "0"], ["--repeats", "0"], ["--simulations", "0"], ["--mcts-simulations", "0"],
                                  ["--agent", "checkers/alphazero@5"], ["--agent", "checkers/nosuchagent"],
                                  ["--agent", "checkers/mcts50"]])
def test_bad_flags_exit_2(argv):
    with pytest.raises(SystemExit) as e:
        bench_network_search.main(argv)
    assert e.value.code == 2


def test_positions_are_the_openings_cycled():
    from c4jax import agents
    game = agents.load("checkers/random").game
    states = bench_network_search.positions(game, 52)
    assert states.legal_action_mask.shape == (52, game.num_actions)
    assert (states.cur[50:] == states.cur[:2]).all() and (states.cur[1] != states.cur[0])


@pytest.mark.slow
def test_a_tiny_run_times_both_searches(tmp_path, capsys):
    from c4jax import agents
    rows = bench_network_search.main(["--simulations", "2", "--mcts-simulations", "3", "--batch", "2",
                                      "--repeats", "1", "--out", str(tmp_path / "b.md")])
    (row,) = rows["network"]
    (mcts,) = rows["mcts"]
    assert mcts["simulations"] == 3 and mcts["mcts"] > 0
    assert row["simulations"] == 2 and row["gumbel"] > 0 and row["solve"] > 0
    assert row["ratio"] == pytest.approx(row["gumbel"] / row["solve"])
    out = capsys.readouterr().out
    for flag in ("nosolve", "solve"):  # each search's agent, named as it loads
        assert f"{agents.load('checkers/alphazero@2' + flag).name}: " in out
    assert f"{agents.load('checkers/mcts3').name}: " in out
    table = (tmp_path / "b.md").read_text()
    assert "Made by `python experiments/bench_network_search.py --simulations 2" in table
    assert "| 2 |" in table and "| 3 |" in table and "`checkers/mcts<N>`" in table and str(tmp_path) not in table


def test_no_mcts_simulations_leaves_out_the_pure_mcts_table(tmp_path):
    rows = bench_network_search.main(["--simulations", "2", "--mcts-simulations", "--batch", "2",
                                      "--repeats", "1", "--out", str(tmp_path / "b.md")])
    assert rows["mcts"] == [] and "Pure MCTS" not in (tmp_path / "b.md").read_text()
