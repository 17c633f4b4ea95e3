"""A training run's files: per seed (``--out``, or ``<out>/seed_<s>/``) ``metrics.jsonl``/``.csv``, ``best/``,
``curves.png`` and ``summary.json``; of a K-seed run also ``<out>/summary.json``, ``seeds.md`` and ``curves.png``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from c4jax.io import atomic, checkpoint, runlog
from c4jax.io.tables import Table
from c4jax.learning import hostrun, selection

BEST = "best"


def seed_dir(out: str | Path, seed: int) -> Path:
    """The run directory of ``seed`` inside a ``--vmap-seeds`` run directory."""
    return Path(out) / f"seed_{seed}"


def seed_dirs(out: str | Path, seeds: Sequence[int]) -> list[Path]:
    """The run directory of each of ``seeds``: ``out`` itself for one seed, else :func:`seed_dir`'s."""
    return [Path(out)] if len(seeds) == 1 else [seed_dir(out, s) for s in seeds]


class SeedRun:
    """One seed's run directory (metrics log, ``best/``) and its loop counters ``loop`` (saved in ``last/``)."""

    def __init__(self, out: Path, seed: int, meta: dict, counters: dict, resume: bool, after_step: int | None,
                 write: bool = True, trackers: tuple[str, ...] = (), group: str | None = None,
                 *, rule: selection.Rule, select_by: str, reference: str | None = None):
        self.out, self.seed, self.meta, self.loop, self.write = out, seed, meta, counters, write
        self.rule, self.select_by, self.reference = rule, select_by, reference
        self.log = runlog.RunLog(out, resume=resume, after_step=after_step, write=write, track=trackers,
                                 config=meta.get("config"), name=out.resolve().name, group=group)

    def record(self, updates: int, row: dict, params, wall_s: float, cpu_s: float | None = None) -> str:
        """Apply the old-network rule to this evaluation, save ``best/`` on a new best score, log ``row`` (which
        gains ``eval/best_vs_*``, ``eval/reverted``, ``time/wall_s``, ``time/cpu_s``) and return the decision."""
        outcome = selection.select(self.loop, row[selection.score_metric(self.select_by)], updates, self.rule)
        self.loop.update(outcome.counters)  # in place: the loop saves this dict in last/
        if outcome.new_best and self.write:
            checkpoint.save(self.out / BEST, {"params": params}, {**self.meta, "metrics": {**row, "updates": updates}})
        row.update({f"eval/best_vs_{self.select_by}": self.loop["best_win_rate"],
                    "eval/reverted": float(outcome.decision == selection.REVERT), "time/wall_s": wall_s}
                   | ({} if cpu_s is None else {"time/cpu_s": cpu_s}))
        self.log.log(updates, row)
        self.loop["wall_s"] = wall_s
        return outcome.decision

    def last_row(self) -> dict:
        """The latest logged row without its ``step`` (a row is logged first)."""
        return {k: v for k, v in self.log.rows[-1].items() if k != "step"}

    def finish(self, algo_name: str, extra_panels: Callable[[], list] | None) -> dict:
        """Close the log, write ``metrics.csv``, ``curves.png`` and ``summary.json``; returns the summary ({} on
        a process that does not write)."""
        loop, best = self.loop, self.out / BEST
        if not self.write:
            return hostrun.finish(self.log, lambda rows: None, {})

        def draw(rows: list[dict]) -> None:
            write_curves(rows, self.out / "curves.png", f"{algo_name} (seed {self.seed})",
                         loop["best_updates"] if loop.get("evals") else None, extra_panels() if extra_panels else (),
                         self.reference)

        summary = {
            "algorithm": algo_name,
            "seed": self.seed,
            f"best_vs_{self.select_by}": loop["best_win_rate"],
            "best_updates": loop["best_updates"],
            "reverts": loop["reverts"],
            "evaluations": loop["evals"],
            "wall_s": round(loop["wall_s"], 1),
            "final": self.log.rows[-1] if self.log.rows else {},
            "best": checkpoint.read_metadata(best, game=None)["metrics"] if best.exists() else {},
        }
        return hostrun.finish(self.log, draw, summary)


def curve_panels(rows: list[dict], extra: Sequence[tuple] = (), reference: str | None = None
                 ) -> list[tuple[str, list[str], str]]:
    """The ``(title, metrics, ylabel)`` panels of a seed's ``curves.png``; the win rates against ``reference``,
    Random and the old network come first."""
    keys = {k for r in rows for k in r}
    fixed = ([f"eval/vs_{reference}"] if reference else []) + ["eval/vs_random", "eval/vs_old"]
    panels = [
        ("training loss", ["train/loss"], "loss"),
        ("win rate (protocol, 100 games)",
         fixed + sorted(k for k in keys if k.startswith("eval/vs_") and not k.endswith("_length") and k not in fixed),
         "win rate"),
        ("game length", ["eval/vs_old_length", "selfplay/length"], "moves"),
    ] + list(extra)
    if "yardstick/keep" in keys:
        panels.append(("perfect-play yardstick (non-trivial positions)",
                       ["yardstick/keep", "yardstick/exact", "yardstick/keep_opening", "yardstick/keep_middle",
                        "yardstick/keep_end"], "share of moves"))
    return panels


def write_curves(rows: list[dict], path: Path, title: str, best_updates: int | None,
                 extra: Sequence[tuple] = (), reference: str | None = None) -> Path:
    """Draw a seed's ``curves.png`` of its metric ``rows`` against updates, marking ``best_updates`` and reverts
    (``reference``: as :func:`curve_panels`)."""
    return runlog.plot_panels(rows, curve_panels(rows, extra, reference), path, xlabel="updates", smooth_window=5,
                              suptitle=title, best=best_updates,
                              reverts=[r["step"] for r in rows if r.get("eval/reverted")])


def write_wall_curves(run_dir: Path, title: str) -> Path:
    """Draw ``curves_wall.png`` in ``run_dir``: every evaluation win rate of its metrics against wall-clock minutes."""
    rows = [{**r, "minutes": r.get("time/wall_s", 0.0) / 60} for r in runlog.read_metrics(run_dir / runlog.METRICS_JSONL)]
    keys = sorted({k for r in rows for k in r if k.startswith("eval/vs_") and not k.endswith("_length")})
    return runlog.plot_panels(rows, [("win rate (protocol, 100 games)", keys, "win rate")], run_dir / "curves_wall.png",
                              x="minutes", xlabel="wall-clock minutes", suptitle=title)


# --- a K-seed run ---------------------------------------------------------------------------


def _spread(values: list[float]) -> dict:
    v = np.asarray(values, np.float64)
    return {"mean": float(v.mean()), "std": float(v.std(ddof=1)) if len(v) > 1 else 0.0,
            "min": float(v.min()), "max": float(v.max()), "values": [float(x) for x in v]}


def summarize_seeds(name: str, out: Path, seeds: list[int], runs: list[SeedRun], per_seed: list[dict], wall_s: float,
                    select_by: str, reference: str) -> dict:
    """Write and return ``<out>/summary.json`` (also ``seeds.md``, ``curves.png``) of a K-seed run."""
    final = [s["final"].get(f"eval/vs_{reference}", float("nan")) for s in per_seed]
    best = [s[f"best_vs_{select_by}"] for s in per_seed]
    summary = {
        "algorithm": name,
        "seeds": seeds,
        f"final_vs_{reference}": _spread(final),
        f"best_vs_{select_by}": _spread(best),
        "final_vs_random": _spread([s["final"].get("eval/vs_random", float("nan")) for s in per_seed]),
        "reverts": [s["reverts"] for s in per_seed],
        "evaluations": per_seed[0]["evaluations"],
        "wall_s": round(wall_s, 1),
        "runs": [str(r.out) for r in runs],
        "command": runlog.command_line(),
    }
    runlog.write_json(out / "summary.json", summary)
    _write_seed_table(out, summary, per_seed, select_by, reference)
    ref = f"eval/vs_{reference}"
    merged = [{"step": row["step"], f"seed {r.seed}": row[ref]} for r in runs for row in r.log.rows if ref in row]
    runlog.plot_panels(merged, [(f"win rate vs {reference} (protocol, 100 games)", [f"seed {s}" for s in seeds],
                                 "win rate")], out / "curves.png", xlabel="updates", smooth_window=5,
                       suptitle=f"{name}: {len(seeds)} seeds")
    fin = summary[f"final_vs_{reference}"]
    print(f"{name}, {len(seeds)} seeds {seeds}: final win rate vs {reference} {fin['mean']:.3f} "
          f"± {fin['std']:.3f}, best vs {select_by} {summary[f'best_vs_{select_by}']['mean']:.3f} "
          f"± {summary[f'best_vs_{select_by}']['std']:.3f}; {wall_s:.0f}s. Runs: {out}/seed_*")
    return summary


def _write_seed_table(out: Path, summary: dict, per_seed: list[dict], select_by: str, reference: str) -> None:
    nan, best = float("nan"), f"best_vs_{select_by}"
    rows = [(s["seed"], s["final"].get(f"eval/vs_{reference}", nan), s[best], s["best_updates"],
             s["final"].get("eval/vs_random", nan), s["reverts"]) for s in per_seed]
    fin, bst = summary[f"final_vs_{reference}"], summary[best]
    rows.append(("mean ± sd", f"{fin['mean']:.3f} ± {fin['std']:.3f}", f"{bst['mean']:.3f} ± {bst['std']:.3f}", None,
                 summary["final_vs_random"]["mean"], None))
    table = Table(name="seeds", title="", rows=tuple(rows),
                  header=("seed", f"final vs {reference}", f"best vs {select_by}",
                          "at update", "final vs Random", "reverts"),
                  formats=("", ".3f", ".3f", ",", ".3f", ""))
    lines = [f"# {summary['algorithm']}: {len(per_seed)} seeds trained in one vmapped program", "",
             f"Command: `{summary['command']}`", "", table.to_markdown(title=False),
             f"Wall time {summary['wall_s'] / 60:.1f} min for all seeds together."]
    atomic.write_text_atomic(out / "seeds.md", "\n".join(lines) + "\n")
