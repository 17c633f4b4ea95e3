"""The old-network rule and best/'s choice as a pure function (c4jax.learning.selection), on
hand-made sequences of evaluation scores."""

from __future__ import annotations

import pytest

from c4jax.learning import selection
from c4jax.learning.selection import BEST, KEEP, REVERT, Rule


def _play(scores, rule=Rule(), counters=None):
    """The decisions, best/ rewrites and final counters of evaluations with ``scores`` at updates
    100, 200, ..."""
    c = selection.new_counters() if counters is None else counters
    decisions, new_bests = [], []
    for i, score in enumerate(scores):
        before = dict(c)
        out = selection.select(c, score, 100 * (i + 1), rule)
        assert c == before  # pure: the counters handed in are left alone
        decisions.append(out.decision)
        new_bests.append(out.new_best)
        c = out.counters
    return decisions, new_bests, c


def test_best_keep_and_revert_with_the_thesis_rule():
    decisions, new_bests, c = _play([0.30, 0.35, 0.33, 0.26, 0.22, 0.40])
    # 0.26 is 0.09 below the best 0.35 (more than 0.08): revert; 0.22 likewise
    assert decisions == [BEST, BEST, KEEP, REVERT, REVERT, BEST]
    assert new_bests == [True, True, False, False, False, True]
    assert c == {"evals": 6, "best_win_rate": 0.40, "best_updates": 600, "reverts": 2, "wall_s": 0.0,
                 "old_best": 0.40}


def test_a_drop_of_exactly_revert_drop_reverts_only_with_revert_at_equal():
    scores = [0.5, 0.25]  # exactly revert_drop = 0.25 below (binary fractions: no rounding)
    assert _play(scores, Rule(revert_drop=0.25))[0] == [BEST, KEEP]
    assert _play(scores, Rule(revert_drop=0.25, revert_at_equal=True))[0] == [BEST, REVERT]
    assert _play([0.5, 0.375], Rule(revert_drop=0.25, revert_at_equal=True))[0] == [BEST, KEEP]


def test_old_best_start_delays_the_first_best_but_not_best_dir():
    decisions, new_bests, c = _play([0.45, 0.42, 0.55], Rule(old_best_start=0.5))
    assert decisions == [KEEP, KEEP, BEST]
    assert new_bests == [True, False, True]  # best/ still keeps the best evaluation so far
    assert c["best_win_rate"] == 0.55 and c["best_updates"] == 300 and c["old_best"] == 0.55
    # the published code's rule: best starts at 0.5 and a drop to <= best - 0.08 reverts
    published = Rule(old_best_start=0.5, revert_at_equal=True)
    assert _play([0.45, 0.42, 0.6, 0.52, 0.55, 0.61], published)[0] == [KEEP, REVERT, BEST, REVERT, KEEP, BEST]
    assert _play([0.45, 0.42, 0.6, 0.52, 0.55, 0.61])[0] == [BEST, KEEP, BEST, KEEP, KEEP, BEST]


def test_the_rules_best_is_added_after_the_saved_keys():
    out = selection.select(selection.new_counters(), 0.45, 100, Rule(old_best_start=0.5))
    assert list(out.counters) == ["evals", "best_win_rate", "best_updates", "reverts", "wall_s", "old_best"]
    assert out.counters["old_best"] == 0.5 and out.decision == KEEP


def test_counters_saved_before_the_rule_had_its_own_best_use_best_dirs():
    saved = {"evals": 3, "best_win_rate": 0.6, "best_updates": 300, "reverts": 0, "wall_s": 12.0}
    decisions, _, c = _play([0.55, 0.5, 0.7], Rule(old_best_start=0.9), counters=saved)
    assert decisions == [KEEP, REVERT, BEST]  # old_best_start only counts before the first evaluation
    assert c["evals"] == 6 and c["reverts"] == 1 and c["wall_s"] == 12.0


@pytest.mark.parametrize("select_by, metric", [("1steplA", "eval/vs_1steplA"), ("mcts200", "eval/vs_mcts200"),
                                               ("random", "eval/vs_random"), ("yardstick", "yardstick/keep")])
def test_score_metric(select_by, metric):
    assert selection.score_metric(select_by) == metric
