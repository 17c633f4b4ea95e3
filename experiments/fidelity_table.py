"""The table of the published-preset runs and their one-switch ablation (design.md §7a).

    python experiments/fidelity_table.py runs/fidelity --save-to docs/results/fidelity --out docs/results/fidelity/ablation.md
    python experiments/fidelity_table.py docs/results/fidelity --out docs/results/fidelity/ablation.md  # from the kept files

Reads ``RUNS/<algo>/`` (``--preset published``, from experiments/published_preset_runs.sh) and
``RUNS/<algo>-no_<switch>/`` (the preset with one switch turned back, from
experiments/published_ablation.sh): each directory's ``summary.json`` (the seeds' best and final
win rates against 1StepLA during training) and ``rematch/summary.csv`` (each seed's best agent
re-played against 1StepLA and 2StepLA), plus ``rematch_det/summary.csv`` where there is one (the
same re-matches played greedily: ``summarize.py --rematch-mode det``, for the policy-gradient
trainers). Writes one Markdown table per trainer, mean ± sd over the seeds, and the change of each
variant's mean against the full preset's.

``--save-to DIR`` keeps the few small files the table is made from (``summary.json``, ``seeds.md``,
``rematch.csv``, ``rematch_det.csv``) in ``DIR/<run>/``, the layout of docs/results/fidelity, which
this script reads as well: the table can be remade from them without the run directories.
"""

from __future__ import annotations

import csv
import json
import shutil
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

import tyro

ALGOS = ("dqn", "dueling_dqn", "ppo", "reinforce")


@dataclass(frozen=True)
class Args:
    runs: tyro.conf.Positional[Path]
    """Directory holding <algo>/ and <algo>-no_<switch>/ run directories."""
    out: Path | None = None
    """Markdown file to write (printed when not given)."""
    save_to: Path | None = None
    """Also copy each finished run's summary files to SAVE_TO/<run>/ (summary.json, seeds.md, rematch.csv,
    rematch_det.csv), from which the table can be remade."""


def _spread(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def _rematch_csv(run: Path, name: str) -> Path | None:
    """``run``'s re-match table ``name`` ('rematch' or 'rematch_det'): NAME/summary.csv in a run
    directory, NAME.csv in the kept layout; None when there is none."""
    for path in (run / name / "summary.csv", run / f"{name}.csv"):
        if path.is_file():
            return path
    return None


def _variant(run: Path) -> dict | None:
    """Per-seed figures of one finished 4-seed run directory, or None when it is not finished."""
    summary_path, rematch_path = run / "summary.json", _rematch_csv(run, "rematch")
    if not (summary_path.is_file() and rematch_path is not None):
        return None
    summary = json.loads(summary_path.read_text())
    rows = _rows(rematch_path)
    det_path = _rematch_csv(run, "rematch_det")
    det = _rows(det_path) if det_path is not None else None
    return {
        "seeds": len(summary["seeds"]),
        "best": summary["best_vs_1steplA"]["values"],
        "final": summary["final_vs_1steplA"]["values"],
        "re1": [float(r["rematch/1steplA"]) for r in rows],
        "re2": [float(r["rematch/2steplA"]) for r in rows],
        "det1": det and [float(r["rematch/1steplA"]) for r in det],
        "det2": det and [float(r["rematch/2steplA"]) for r in det],
    }


def _rows(path: Path) -> list[dict]:
    with path.open() as f:
        return list(csv.DictReader(f))


def _cell(values: list[float] | None, ref: list[float] | None) -> str:
    if values is None:
        return "–"
    mean, sd = _spread(values)
    text = f"{mean:.3f} ± {sd:.3f}"
    if ref is not None:
        text += f" ({mean - _spread(ref)[0]:+.3f})"
    return text


def table(runs: Path) -> str:
    lines = []
    for algo in ALGOS:
        preset = _variant(runs / algo)
        variants = sorted(p for p in runs.glob(f"{algo}-no_*") if _variant(p) is not None)
        if preset is None and not variants:
            continue
        rows = ([("`--preset published`", preset)] if preset else []) + [
            (f"… with `{p.name.split('-no_', 1)[1]}` turned back", _variant(p)) for p in variants]
        keys = ["best", "final", "re1", "re2"]
        header = "| run | seeds | best vs 1StepLA in training | final | best re-matched vs 1StepLA | vs 2StepLA |"
        if any(v["det1"] for _, v in rows):
            keys += ["det1", "det2"]
            header += " greedy re-match vs 1StepLA | greedy vs 2StepLA |"
        lines += [f"## {algo}", "", header, "| --- |" + " ---: |" * (len(keys) + 1)]
        for label, v in rows:
            ref = preset if (preset is not None and v is not preset) else None
            cells = [_cell(v[k], ref[k] if ref else None) for k in keys]
            lines.append(f"| {label} | {v['seeds']} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def save(runs: Path, to: Path) -> list[Path]:
    """Copy the summary files of every finished run in ``runs`` to ``to/<run>/``; the runs copied."""
    copied = []
    for run in sorted(p for p in runs.iterdir() if p.is_dir() and _variant(p) is not None):
        if run.name.split("-no_", 1)[0] not in ALGOS:
            continue
        dest = to / run.name
        if dest.resolve() == run.resolve():
            continue
        dest.mkdir(parents=True, exist_ok=True)
        for name in ("summary.json", "seeds.md"):
            if (run / name).is_file():
                shutil.copyfile(run / name, dest / name)
        for name in ("rematch", "rematch_det"):
            src = _rematch_csv(run, name)
            if src is not None:
                shutil.copyfile(src, dest / f"{name}.csv")
        copied.append(run)
    return copied


def main(args: Args) -> str:
    if not args.runs.is_dir():
        raise SystemExit(f"error: {str(args.runs)!r} is not a directory")
    if args.save_to is not None:
        saved = save(args.runs, args.save_to)
        print(f"kept the summaries of {len(saved)} runs in {args.save_to}", file=sys.stderr)
    text = ("Mean ± sd over the seeds; in brackets the change of the mean against the full preset.\n\n"
            + table(args.runs))
    if args.out is None:
        print(text)
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        print(f"wrote {args.out}", file=sys.stderr)
    return text


if __name__ == "__main__":
    main(tyro.cli(Args))
