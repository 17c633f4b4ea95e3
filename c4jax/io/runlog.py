"""Host-side run logging shared by every experiment: metrics JSONL/CSV and PNG curves.

One row per logged step: ``{"step": int, "<namespace>/<name>": float, ...}``. Whole files are
written atomically (:mod:`c4jax.io.atomic`); appended rows are flushed one by one, and a torn last
line (a kill during an append) is skipped when the log is read.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shlex
import sys
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from c4jax.io import atomic
from c4jax.io.track import Trackers

METRICS_JSONL = "metrics.jsonl"
METRICS_CSV = "metrics.csv"


def display_path(path: str | os.PathLike) -> str:
    """``path`` relative to the working directory when it lies below it, else as it is."""
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve())) if p.is_absolute() else str(p)
    except ValueError:
        return str(p)


def command_line(argv: Sequence[str] | None = None) -> str:
    """The command that runs this process (``python <script> <args>``, or ``<command> <args>`` for an
    installed one), absolute paths shown by :func:`display_path`."""
    argv = list(sys.argv if argv is None else argv)
    if argv and not argv[0].endswith(".py") and os.path.basename(argv[0]) not in ("", "-c", "-m"):
        return shlex.join([os.path.basename(argv[0])] + [display_path(a) if os.path.isabs(a) else a for a in argv[1:]])
    return shlex.join(["python"] + [display_path(a) if os.path.isabs(a) else a for a in argv])


def write_json(path: str | os.PathLike, obj) -> Path:
    """``obj`` as indented JSON in ``path``, atomically (summaries)."""
    return atomic.write_text_atomic(path, json.dumps(obj, indent=2) + "\n")


def _scalar(v):
    v = np.asarray(v)
    return v.item() if v.ndim == 0 else v.tolist()


class RunLog:
    """Appends metric rows to ``<out>/metrics.jsonl`` (flushed per row); ``resume`` keeps the rows up
    to ``after_step``. ``write=False`` keeps them in memory only. ``track``: :mod:`c4jax.io.track`
    backends that receive every row too (:meth:`close` closes them)."""

    def __init__(self, out_dir: str | os.PathLike, *, resume: bool = False, after_step: int | None = None,
                 write: bool = True, track: Sequence[str] = (), config: dict | None = None,
                 name: str | None = None, group: str | None = None):
        self.out_dir, self.write = Path(out_dir), write
        self.path = self.out_dir / METRICS_JSONL
        rows = read_metrics(self.path) if resume and self.path.exists() else []
        if after_step is not None:  # a resumed run drops rows logged after its checkpoint
            rows = [r for r in rows if r.get("step", 0) <= after_step]
        self.rows: list[dict] = rows
        if write:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            atomic.write_text_atomic(self.path, "".join(json.dumps(r) + "\n" for r in rows))
        self.trackers = None
        if write and track:
            self.trackers = Trackers(track, self.out_dir, config=config, rows=rows, resume=resume, name=name,
                                     group=group)

    def log(self, step: int, metrics: dict) -> dict:
        row = {"step": int(step), **{k: _scalar(v) for k, v in metrics.items()}}
        self.rows.append(row)
        if self.write:
            with open(self.path, "a") as f:
                f.write(json.dumps(row) + "\n")
        if self.trackers is not None:
            self.trackers.log(row["step"], row)
        return row

    def close(self) -> None:
        """Flush and close the tracking backends (the metrics file needs no closing)."""
        if self.trackers is not None:
            self.trackers.close()
            self.trackers = None

    def write_csv(self) -> Path:
        keys = sorted({k for r in self.rows for k in r} - {"step"})
        path = self.out_dir / METRICS_CSV
        text = io.StringIO(newline="")
        w = csv.writer(text)
        w.writerow(["step"] + keys)
        for r in self.rows:
            w.writerow([r["step"]] + [r.get(k, "") for k in keys])
        return atomic.write_text_atomic(path, text.getvalue())


def read_metrics(path: str | os.PathLike) -> list[dict]:
    """Rows of a metrics.jsonl (a truncated last line, from a killed run, is skipped)."""
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return rows


def smooth(values: Sequence[float], window: int) -> np.ndarray:
    """Trailing moving average (the first points average what exists so far)."""
    v = np.asarray(values, np.float64)
    if window <= 1 or len(v) == 0:
        return v
    c = np.cumsum(np.insert(v, 0, 0.0))
    idx = np.arange(1, len(v) + 1)
    lo = np.maximum(idx - window, 0)
    return (c[idx] - c[lo]) / (idx - lo)


FEW_POINTS = 20  # a series with fewer points is drawn with markers
BEST_STYLE = {"color": "tab:green", "linestyle": "--", "linewidth": 1.0}
REVERT_STYLE = {"color": "tab:red", "marker": "^", "markersize": 6, "linestyle": "none"}


def _finite(rows: list[dict], x: str, key: str) -> list[tuple[float, float]]:
    """The ``(x, value)`` points of ``key`` in ``rows`` with a finite value."""
    return [(r[x], r[key]) for r in rows
            if x in r and isinstance(r.get(key), (int, float)) and math.isfinite(r[key])]


def plot_panels(
    rows: list[dict],
    panels: Iterable[tuple[str, Sequence[str], str]],
    path: str | os.PathLike,
    *,
    x: str = "step",
    xlabel: str = "step",
    smooth_window: int = 1,
    suptitle: str | None = None,
    best: float | None = None,
    reverts: Sequence[float] = (),
) -> Path:
    """One PNG with a subplot per ``(title, metric keys, ylabel)``; missing, None and NaN values are
    skipped. With ``smooth_window > 1`` a series longer than the window is drawn as faint raw points
    under its trailing mean (``(mean of N)``). ``best``: a dashed vertical line at that x on every
    panel with points; ``reverts``: a marker on the x-axis at each. Written atomically; returns ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator, StrMethodFormatter

    panels = list(panels)
    reverts = [float(v) for v in reverts]
    cols = min(len(panels), 3)
    nrows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5 * cols, 3.6 * nrows), squeeze=False)
    for ax, (title, keys, ylabel) in zip(axes.flat, panels):
        xs_all: list[float] = []
        for key in keys:
            pts = _finite(rows, x, key)
            if not pts:
                continue
            xs, ys = zip(*pts)
            xs_all += xs
            few = {"marker": "o", "markersize": 4} if len(pts) < FEW_POINTS else {}
            if 1 < smooth_window < len(pts):
                raw = ax.plot(xs, ys, marker=".", markersize=3, linewidth=0.6, alpha=0.3)[0]
                ax.plot(xs, smooth(ys, smooth_window), color=raw.get_color(), label=f"{key} (mean of {smooth_window})")
            else:
                ax.plot(xs, ys, label=key, **few)
        if xs_all:
            if best is not None:
                ax.axvline(best, label=f"best ({best:,.0f})" if x == "step" else f"best ({best:g})", **BEST_STYLE)
                xs_all.append(best)
            if reverts:
                ax.plot(reverts, [0.0] * len(reverts), transform=ax.get_xaxis_transform(), clip_on=False,
                        label=f"revert ({len(reverts)})", **REVERT_STYLE)
                xs_all += reverts
            if min(xs_all) == max(xs_all):
                v = float(xs_all[0])
                ax.set_xlim(*((0.0, 2 * v) if v > 0 else (v - 1, v + 1)))
            ax.legend(fontsize=8)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        if x == "step":
            ax.xaxis.set_major_locator(MaxNLocator(nbins=6, integer=True))
            ax.xaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    if suptitle:
        fig.suptitle(suptitle)
    fig.tight_layout()
    path = Path(path)
    atomic.write_atomic(path, lambda f: fig.savefig(f, dpi=110, format=path.suffix.lstrip(".") or "png"))
    plt.close(fig)
    return path
