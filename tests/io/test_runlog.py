"""A run's curves (c4jax.io.runlog.plot_panels, as c4jax.learning.rundir.write_curves draws them) read
right for 1, 2 and 50 evaluations: markers for few points, integer update ticks, raw points where a
series is shorter than the smoothing window, and the best evaluation and the reverts marked on every
panel, with legend entries. Checked on the matplotlib objects, not on pixels."""

from __future__ import annotations

import math

import pytest

from c4jax.io import runlog
from c4jax.learning import rundir


def _rows(n: int) -> list[dict]:
    """``n`` evaluations 64 updates apart; every seventh reverted; the self-play length unmeasured
    (NaN) at the first."""
    return [{"step": 64 * (i + 1), "train/loss": 1.0 / (i + 1), "eval/vs_1steplA": 0.1 + 0.01 * i,
             "eval/vs_random": 0.9, "eval/vs_old": 0.5, "eval/vs_old_length": 20.0 + i,
             "selfplay/length": math.nan if i == 0 else 15.0, "eval/reverted": float(i % 7 == 6)}
            for i in range(n)]


@pytest.fixture
def figures(monkeypatch):
    """The figures plot_panels draws, kept open."""
    import matplotlib.pyplot as plt

    kept = []
    monkeypatch.setattr(plt, "close", lambda fig=None: kept.append(fig))
    return kept


def _curves(tmp_path, figures, n: int, best: int):
    rows = _rows(n)
    rundir.write_curves(rows, tmp_path / "curves.png", "test", best)
    assert (tmp_path / "curves.png").stat().st_size > 0
    (fig,) = figures
    return rows, [ax for ax in fig.axes if ax.get_title()]


def _series(ax) -> dict:
    """The data lines of a panel by label (the best line and the revert markers left out)."""
    return {ln.get_label(): ln for ln in ax.lines if ln.get_label().startswith(("eval/", "train/", "selfplay/"))}


def _integer_ticks(ax) -> bool:
    lo, hi = ax.get_xlim()
    ticks = [t for t in ax.get_xticks() if lo <= t <= hi]
    return len(ticks) >= 2 and all(float(t).is_integer() for t in ticks)


def _best_lines(ax, best: int) -> list:
    return [ln for ln in ax.lines if ln.get_label().startswith("best") and list(ln.get_xdata()) == [best, best]]


@pytest.mark.parametrize("n", [1, 2])
def test_few_evaluations_are_drawn_as_marked_points_on_an_integer_update_axis(tmp_path, figures, n):
    best = 64
    rows, panels = _curves(tmp_path, figures, n, best)
    assert [ax.get_title() for ax in panels][:3] == ["training loss", "win rate (protocol, 100 games)", "game length"]
    for ax in panels:
        series = _series(ax)
        assert series and all(ln.get_marker() == "o" for ln in series.values())
        assert not [label for label in series if "mean of" in label]  # raw points, not an average
        assert _integer_ticks(ax)
        lo, hi = ax.get_xlim()
        assert lo <= rows[0]["step"] and rows[-1]["step"] <= hi and hi - lo >= 64
        assert _best_lines(ax, best) and "best (64)" in [t.get_text() for t in ax.get_legend().get_texts()]
        assert not [ln for ln in ax.lines if ln.get_label().startswith("revert")]  # none reverted
    length = _series(panels[2])
    if n == 1:  # the only self-play length is NaN: left out, the match's length stays
        assert list(length) == ["eval/vs_old_length"]
    else:
        assert list(length["selfplay/length"].get_xdata()) == [128]


def test_a_long_run_is_smoothed_and_marks_its_best_evaluation_and_every_revert(tmp_path, figures):
    rows, panels = _curves(tmp_path, figures, 50, best=1600)
    reverted = [r["step"] for r in rows if r["eval/reverted"]]
    assert len(reverted) == 7
    for ax in panels:
        series = _series(ax)
        assert series and all("(mean of 5)" in label for label in series)
        assert all(ln.get_marker() in ("None", "none", None, "") for label, ln in series.items())
        assert _integer_ticks(ax)
        assert _best_lines(ax, 1600)
        (marks,) = [ln for ln in ax.lines if ln.get_label() == "revert (7)"]
        assert list(marks.get_xdata()) == reverted and marks.get_linestyle() == "None"
        assert {"best (1,600)", "revert (7)"} <= {t.get_text() for t in ax.get_legend().get_texts()}


def test_a_panel_without_points_has_no_marks_or_legend(tmp_path, figures):
    rows = [{"step": 8, "a": 1.0}]
    runlog.plot_panels(rows, [("a", ["a"], "a"), ("b", ["b"], "b")], tmp_path / "c.png", best=8, reverts=[8])
    with_points, empty = figures[0].axes[:2]
    assert with_points.get_legend() is not None and len(with_points.lines) == 3
    assert not empty.lines and empty.get_legend() is None
