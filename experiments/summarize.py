"""Compare runs of a shell-loop sweep: one table of config differences and results, one overlay plot.

    for lr in 3e-5 1e-4 3e-4; do python experiments/ppo.py --learning-rate $lr --out runs/ppo_lr$lr; done
    python experiments/summarize.py runs/ppo_lr* --out runs/ppo_sweep
    python experiments/summarize.py runs/x4/seed_* --rematch 1steplA 2steplA --rematch-mode det
    python experiments/summarize.py runs/az_* --metric yardstick/keep --x minutes --until-minutes 30

Reads each run's config (``last/`` or ``best/`` metadata, or a supervised run's own
metadata) and ``metrics.jsonl``. Writes ``summary.csv`` and ``summary.md`` (one row per
run: the config keys whose values differ between the runs, then the best and final
metrics, sorted by ``--sort``) and ``curves.png`` (``--metric`` of every run against
its step or, with ``--x minutes``, its wall-clock time, smoothed). ``--until-minutes M`` keeps
only the evaluations of each run's first M minutes, so runs of different speed are compared at
equal wall-clock time. ``--rematch`` re-plays each run's best agent, as ``agents.load`` gives it
(symmetric averaging on), in one protocol match against each named agent and adds the win
rates as ``rematch/<opponent>`` columns: the "best" of training is the maximum of many noisy
matches, a re-match is an independent measure of the chosen weights.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import jax
import tyro

from c4jax import agents, evaluation
from c4jax.io import checkpoint, compile_cache, runlog

RESULT_KEYS = ("eval/vs_1steplA", "eval/vs_2steplA", "yardstick/keep", "eval/vs_random", "eval/vs_old_length",
               "test/accuracy", "val/accuracy", "train/loss")
WALL_KEY = "time/wall_s"
CPU_KEY = "time/cpu_s"
X_AXES = ("step", "minutes", "hours", "cpu_hours")
SECONDS = {"minutes": 60, "hours": 3600, "cpu_hours": 3600}


@dataclass(frozen=True)
class Args:
    runs: tyro.conf.Positional[tuple[str, ...]]
    """Run directories (as written by the experiment scripts)."""
    out: str = "runs/summary"
    """Where summary.csv, summary.md and curves.png go."""
    metric: str = "eval/vs_1steplA"
    """Metric overlaid in curves.png."""
    sort: str = "best/eval/vs_1steplA"
    """Column to sort by (descending); missing values last."""
    smooth: int = 5
    """Moving-average window of the curves."""
    x: str = "step"
    """x-axis of curves.png: 'step' (updates, epochs), 'minutes' or 'hours' (the run's wall-clock time; the
    CPU-hours of a run pinned to one core it had to itself), or 'cpu_hours' (the process' CPU time, ``time/cpu_s``,
    summed over the run's segments; rows without it are left out)."""
    until_minutes: float = 0.0
    """Only the metric rows of each run's first M minutes of wall-clock time (0: all rows)."""
    rematch: tuple[str, ...] = ()
    """Agents (``agents.load`` names) that each run's best agent plays one protocol match against."""
    rematch_mode: str = ""
    """Mode of the runs' agents in the re-matches: '' (each agent's default: DQN greedy, PPO/REINFORCE
    sampled), 'sto' or 'det'."""
    rematch_seed: int = 0
    """PRNG seed of the re-matches (sampled agents)."""


def _metadata(run: Path) -> dict:
    for d in (run / "last", run / "best", run):
        try:
            return checkpoint.read_metadata(d, game=None)
        except checkpoint.CheckpointError:
            continue
    raise checkpoint.CheckpointError(f"{str(run)!r} has no checkpoint metadata (not a c4jax run directory)")


def _flat(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _rematch(run: Path, opponents: dict, mode: str, seed: int) -> dict:
    agent = agents.load(f"{run}:{mode}" if mode else str(run))  # a run directory loads its best agent
    key = jax.random.key(seed)
    return {f"rematch/{name}": evaluation.win_rate(agent, opp, key) for name, opp in opponents.items()}


def summarize(args: Args) -> list[dict]:
    runs = [Path(r) for r in args.runs]
    if not runs:
        raise SystemExit("give at least one run directory")
    if args.rematch_mode not in ("", "sto", "det"):
        raise ValueError(f"--rematch-mode must be '', 'sto' or 'det', got {args.rematch_mode!r}")
    if args.x not in X_AXES:
        raise ValueError(f"--x must be one of {X_AXES}, got {args.x!r}")
    if not args.until_minutes >= 0:
        raise ValueError(f"--until-minutes must be >= 0, got {args.until_minutes}")
    opponents = {name: agents.load(name) for name in args.rematch}
    configs, rows, curves = {}, [], {}
    for run in runs:
        meta = _metadata(run)
        configs[run] = _flat(meta.get("config", {}))
        metrics = runlog.read_metrics(run / runlog.METRICS_JSONL) if (run / runlog.METRICS_JSONL).is_file() else []
        if args.until_minutes:
            metrics = [m for m in metrics if m.get(WALL_KEY, float("inf")) <= 60 * args.until_minutes]
        curves[run] = metrics
        row = {"run": str(run), "algorithm": meta.get("algorithm", "")}
        for key in RESULT_KEYS:
            values = [m[key] for m in metrics if isinstance(m.get(key), (int, float))]
            if values:
                best = min(values) if key.endswith("loss") else max(values)
                row[f"best/{key}"], row[f"final/{key}"] = best, values[-1]
        row["steps"] = metrics[-1]["step"] if metrics else 0
        row["minutes"] = round(metrics[-1][WALL_KEY] / 60, 1) if metrics and WALL_KEY in metrics[-1] else None
        if opponents:
            row.update(_rematch(run, opponents, args.rematch_mode, args.rematch_seed))
        rows.append(row)
    keys = sorted({k for c in configs.values() for k in c})
    varying = [k for k in keys if len({json.dumps(c.get(k)) for c in configs.values()}) > 1 and k not in ("out", "progress", "resume")]
    for row, run in zip(rows, runs):
        row.update({f"config/{k}": configs[run].get(k) for k in varying})
    rows.sort(key=lambda r: (r.get(args.sort) is None, -(r.get(args.sort) or 0)))

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    columns = ["run", "algorithm", "steps", "minutes"] + [f"config/{k}" for k in varying] + sorted(
        {k for r in rows for k in r if k.startswith(("best/", "final/"))}) + [f"rematch/{n}" for n in opponents]
    with open(out / "summary.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(columns)
        for r in rows:
            w.writerow([r.get(c, "") for c in columns])
    fmt = lambda v: f"{v:.3f}" if isinstance(v, float) else ("–" if v is None or v == "" else str(v))  # noqa: E731
    md = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    md += ["| " + " | ".join(fmt(r.get(c, "")) for c in columns) + " |" for r in rows]
    (out / "summary.md").write_text("\n".join(md) + "\n")
    merged = []
    for run, metrics in curves.items():
        key = CPU_KEY if args.x == "cpu_hours" else WALL_KEY
        merged += [{"x": m["step"] if args.x == "step" else m[key] / SECONDS[args.x], str(run): m[args.metric]}
                   for m in metrics if args.metric in m and (args.x == "step" or key in m)]
    runlog.plot_panels(merged, [(args.metric, [str(r) for r in runs], args.metric)], out / "curves.png",
                       x="x", xlabel="step" if args.x == "step" else "CPU hours" if args.x == "cpu_hours" else f"wall-clock {args.x}",
                       smooth_window=args.smooth, suptitle=f"{len(runs)} runs")
    print((out / "summary.md").read_text())
    print(f"wrote summary.csv, summary.md, curves.png to {out}")
    return rows


if __name__ == "__main__":
    compile_cache.configure_script()
    try:
        summarize(tyro.cli(Args))
    except (ValueError, checkpoint.CheckpointError) as e:
        raise SystemExit(f"error: {e}") from None
