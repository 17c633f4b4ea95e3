"""What the programs print: a trainer's line per evaluation, the tournament's table as aligned text and a
match result's one-line repr."""

from __future__ import annotations

import dataclasses

import pytest

from c4jax.cli.tournament import aligned
from c4jax.evaluation.protocol import GameRecord, MatchResult, SeatRecord
from c4jax.io.tables import Table
from c4jax.learning.loop import evaluation_line

ROW = {"train/loss": 0.5, "eval/vs_random": 1.0, "eval/vs_random_length": 20.0, "eval/vs_old": 0.5,
       "eval/vs_old_length": 30.0, "eval/vs_1steplA": 0.625, "eval/vs_1steplA_length": 25.0,
       "eval/best_vs_1steplA": 0.625, "eval/reverted": 0.0, "time/wall_s": 12.34}


def test_one_seeds_evaluation_line():
    line = evaluation_line("ppo", 1000, [ROW], "1steplA", 12.34)
    assert line == "ppo  1,000 upd  vs_random 1.00  vs_old 0.50  vs_1steplA 0.62  best 0.62  12.3s"


def test_several_seeds_show_mean_and_spread_and_the_reverts():
    other = {**ROW, "eval/vs_1steplA": 0.375, "eval/best_vs_1steplA": 0.375, "eval/reverted": 1.0}
    line = evaluation_line("dqn", 200, [ROW, other], "1steplA", 3.0)
    assert line.startswith("dqn x2  200 upd  vs_random 1.00±0.00  vs_old 0.50±0.00  vs_1steplA 0.50±0.12  ")
    assert line.endswith("  best 0.50±0.12  reverted 1/2  3.0s")


def test_the_yardstick_and_the_other_opponents_are_on_the_line():
    row = {**ROW, "eval/vs_mcts200": 0.25, "eval/vs_mcts200_length": 30.0, "yardstick/keep": 0.8,
           "yardstick/exact": 0.5, "eval/best_vs_yardstick": 0.8, "eval/reverted": 1.0}
    del row["eval/best_vs_1steplA"]
    line = evaluation_line("reinforce", 5, [row], "yardstick", 1.0)
    assert "vs_mcts200 0.25  keep 0.80  best 0.80  reverted  1.0s" in line and "exact" not in line


def test_a_markdown_table_as_aligned_text():
    table = Table(name="t", title="T", header=("rank", "agent", "rating"),
                         rows=((1, "a|b", 1204.4), (10, "longer-name", 87.0)), formats=("", "", ".0f"))
    assert aligned(table.to_markdown(title=False)).splitlines() == [
        "rank  agent        rating",
        "----  -----------  ------",
        "   1  a|b            1204",
        "  10  longer-name      87",
    ]


def test_a_match_result_prints_on_one_short_line():
    games = tuple(GameRecord(opening=i % 50, a_first=i < 50, moves=tuple(range(7)) * 3, outcome_a=1 if i % 2 else -1,
                       length=21) for i in range(100))
    m = MatchResult("1steplA:det", "random", SeatRecord(30, 0, 20), SeatRecord(25, 1, 24), games=games)
    text = repr(m)
    assert text == "MatchResult('1steplA:det' vs 'random': win rate 0.555, W-D-L 55-1-44, 100 games)"
    assert len(text) < 200 and str(m) == text
    # the dataclass itself is as before: its fields, equality over all of them
    assert [f.name for f in dataclasses.fields(m)] == ["agent_a", "agent_b", "a_first", "b_first", "games"]
    assert m == dataclasses.replace(m) and m != dataclasses.replace(m, games=games[:99])
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.agent_a = "x"
