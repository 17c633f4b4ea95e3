"""The old-network rule and the choice of ``best/`` (design.md §7, §7a), as a pure function.

After every evaluation one seed's score (``--select-by``) decides ``"best"`` (it beats the rule's
best, starting at ``old_best_start``: the weights become the old network), ``"revert"`` (it fell more
than ``revert_drop`` below it, or exactly that far with ``revert_at_equal``: the old weights come
back) or ``"keep"``. A score above every earlier one also makes the weights ``best/``.
"""

from __future__ import annotations

from dataclasses import dataclass

BEST, REVERT, KEEP = "best", "revert", "keep"


@dataclass(frozen=True)
class Rule:
    """The old-network rule's settings (``LoopConfig``'s flags of the same names)."""

    revert_drop: float = 0.08
    old_best_start: float = -1.0
    revert_at_equal: bool = False


@dataclass(frozen=True)
class Outcome:
    """What one evaluation decided."""

    decision: str
    """``"best"``, ``"revert"`` or ``"keep"``."""
    new_best: bool
    """The score beats every earlier one: the weights become ``best/``."""
    counters: dict
    """The counters after this evaluation."""


def new_counters() -> dict:
    """A fresh seed's counters (``old_best`` is added at the first evaluation)."""
    return {"evals": 0, "best_win_rate": -1.0, "best_updates": 0, "reverts": 0, "wall_s": 0.0}


def score_metric(select_by: str) -> str:
    """The metric of an evaluation row that ``--select-by`` names."""
    return "yardstick/keep" if select_by == "yardstick" else f"eval/vs_{select_by}"


def select(counters: dict, score: float, updates: int, rule: Rule = Rule()) -> Outcome:
    """The rule applied to ``score`` at ``updates``; ``counters`` is not changed (the outcome holds new ones)."""
    c = dict(counters)
    if "old_best" not in c:  # counters without the rule's own best (an older checkpoint): best/'s
        c["old_best"] = c["best_win_rate"] if c["evals"] else rule.old_best_start
    rule_best = c["old_best"]
    c["evals"] += 1
    new_best = score > c["best_win_rate"]
    if new_best:
        c["best_win_rate"], c["best_updates"] = score, updates
    decision = KEEP
    if score > rule_best:
        c["old_best"] = score
        decision = BEST
    elif score < rule_best - rule.revert_drop or (rule.revert_at_equal and score <= rule_best - rule.revert_drop):
        c["reverts"] += 1
        decision = REVERT
    return Outcome(decision=decision, new_best=new_best, counters=c)
