"""The whole thesis pipeline end to end, and one Markdown report beside the thesis' numbers.

    python experiments/reproduce.py --eval-only          # tournament of the shipped agents (time: docs/results/README.md#runtimes)
    python experiments/reproduce.py --preset quick       # every stage on small budgets (minutes)
    python experiments/reproduce.py --preset thesis      # every stage with the thesis' settings
    python experiments/reproduce.py --training-preset published  # RL stages as the published code trains

Stages (each is the experiment script of the same name, run as a subprocess whose
command line is written into the report, so any stage can be re-run alone):
dataset + supervised -> dqn, dueling_dqn, reinforce, ppo (all from the new supervised
weights) -> tournament of everything against 1StepLA and 2StepLA -> the perfect-play
yardstick of the same agents -> ``report.md`` in ``--out``. ``--eval-only`` skips
training and plays the tournament between the agents shipped in ``checkpoints/``.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import jax
import tyro

from c4jax import agents, games
from c4jax.evaluation.tournament import default_agents
from c4jax.io import checkpoint, compile_cache, outdir, runlog

HERE = Path(__file__).resolve().parent
RL = ("dqn", "dueling_dqn", "reinforce", "ppo")
POLICY = ("reinforce", "ppo")  # play as :sto and :det

# design.md §6, §7, §9: the thesis' figures.
THESIS_SUPERVISED = {"train/accuracy": 0.87, "test/accuracy": 0.85, "eval/vs_random": 0.95, "eval/vs_1steplA": 0.50}
THESIS_BEST_VS_1STEPLA = {"dqn": 0.87, "dueling_dqn": 0.94, "reinforce": 0.59, "ppo": 0.84}
THESIS_RANKING = {"dueling_dqn": 0.731, "2stepla": 0.717, "dqn": 0.595, "ppo:sto": 0.586, "ppo:det": 0.561,
                  "reinforce:det": 0.293, "reinforce:sto": 0.266, "1stepla": 0.251}


def thesis_rank(name: str) -> float | None:
    """The thesis' Table 5.3 mean win rate of an agent named like ours (paths, :det of det-only agents)."""
    key = name.rstrip("/").split("/")[-1].lower()
    base = key.split(":")[0]
    return THESIS_RANKING.get(key, THESIS_RANKING.get(base) if base in ("dqn", "dueling_dqn", "1stepla", "2stepla") else None)

# The stages' run budgets of each --preset (the training presets of --training-preset, switch bundles
# of the RL stages, are c4jax.learning.config.PRESETS).
BUDGETS = {
    "thesis": {"supervised": [], "dqn": [], "dueling_dqn": [], "reinforce": [], "ppo": [], "tournament": []},
    "quick": {
        "supervised": ["--num-pairs", "20000", "--epochs", "3"],
        "dqn": ["--total-updates", "2000", "--buffer-size", "6000", "--learning-starts", "2000"],
        "dueling_dqn": ["--total-updates", "2000", "--buffer-size", "6000", "--learning-starts", "2000"],
        "reinforce": ["--total-updates", "200"],
        "ppo": ["--total-updates", "640"],
        "tournament": ["--timing-batch", "256", "--timing-repeats", "11", "--timing-batched-repeats", "3"],
    },
}


@dataclass(frozen=True)
class Args:
    """Reproduce the thesis pipeline (or, with --eval-only, the tournament of the shipped agents)."""

    preset: Literal["quick", "thesis"] = "thesis"
    """Budgets: 'thesis' = the thesis' settings (docs/design.md §6-§7); 'quick' = small budgets for a first look / smoke test."""
    training_preset: Literal["thesis", "published"] = "thesis"
    """Training behaviour of the RL stages, passed to each as --preset: 'thesis' (the thesis text, design.md §7)
    or 'published' (the published training code, design.md §7a). Independent of --preset, which sets budgets."""
    eval_only: bool = False
    """Skip training: play the tournament between the agents shipped in checkpoints/."""
    out: str = "runs/reproduce"
    """Directory of every stage's run and of report.md."""
    seed: int = 0
    """Seed passed to every stage."""
    progress: bool = True
    """Show the stages' progress bars."""
    overwrite: bool = False
    """Replace the reproduction that --out holds, and each stage's output (every stage gets --overwrite); without
    it, a reproduction refuses an --out that holds one."""


def _run(stage: str, argv: list[str], log: list[dict]) -> None:
    cmd = [sys.executable, str(HERE / f"{stage}.py"), *argv]
    shown = "python " + " ".join(shlex.quote(a) for a in [f"experiments/{stage}.py", *argv])
    print(f"\n== {stage}: {shown}", flush=True)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd)
    seconds = time.perf_counter() - t0
    log.append({"stage": stage, "command": shown, "seconds": round(seconds, 1), "returncode": proc.returncode})
    if proc.returncode != 0:
        raise SystemExit(f"stage {stage} failed (exit {proc.returncode}): {shown}")


def _metrics(path: Path) -> dict:
    try:
        return checkpoint.read_metadata(path).get("metrics", {})
    except checkpoint.CheckpointError:
        return {}


def _yardstick(path: Path) -> dict[str, dict]:
    """The yardstick stage's metrics by agent name (lower case), or {} when it did not run."""
    if not path.is_file():
        return {}
    return {a["agent"].lower(): a["metrics"] for a in json.loads(path.read_text())["agents"]}


def _fmt(x) -> str:
    return "–" if x is None else (f"{x:.3f}" if isinstance(x, float) else str(x))


def _report(args: Args, out: Path, stages: list[dict], sources: dict[str, Path], wall: float) -> Path:
    lines = [
        "# c4jax reproduction report", "",
        f"Command: `python experiments/reproduce.py {' '.join(shlex.quote(a) for a in sys.argv[1:])}`  ",
        f"Date: {datetime.datetime.now().isoformat(timespec='seconds')}; machine: {platform.machine()}, "
        f"{len(jax.devices())} {jax.default_backend()} device(s), jax {jax.__version__}; total {wall / 60:.1f} min.", "",
    ]
    if stages:
        lines += ["## Stages", "", "| stage | wall time | command |", "| --- | ---: | --- |"]
        lines += [f"| {s['stage']} | {s['seconds'] / 60:.1f} min | `{s['command']}` |" for s in stages]
        lines.append("")
    sup = _metrics(sources["supervised"])
    if sup:
        lines += ["## Supervised stage (CNET128 imitating 1StepLA)", "", "| | c4jax | thesis |", "| --- | ---: | ---: |"]
        lines += [f"| {k} | {_fmt(sup.get(k))} | {v:.2f} |" for k, v in THESIS_SUPERVISED.items()]
        lines.append("")
    lines += ["## RL: best win rate vs 1StepLA during training", "",
              "| algorithm | c4jax | at update | thesis | source |", "| --- | ---: | ---: | ---: | --- |"]
    for algo in RL:
        m = _metrics(sources[algo])
        lines.append(f"| {algo} | {_fmt(m.get('eval/vs_1steplA'))} | {_fmt(m.get('updates'))} | "
                     f"{THESIS_BEST_VS_1STEPLA[algo]:.2f} | `{runlog.display_path(sources[algo])}` |")
    lines.append("")
    ranking = out / "tournament" / "table_5_3_ranking.csv"
    graded = _yardstick(out / "yardstick" / "yardstick.json")
    if ranking.is_file():
        rows = [r.split(",") for r in ranking.read_text().splitlines()]
        head = rows[0]
        name_i = next(i for i, h in enumerate(head) if "agent" in h.lower())
        rate_i = next(i for i, h in enumerate(head) if "mean" in h.lower())
        lines += ["## Ranking by mean win rate (Table 5.3) beside the thesis, and the optimal-move rate", "",
                  "| agent | c4jax | thesis | optimal moves (keep) | optimal moves (exact) |",
                  "| --- | ---: | ---: | ---: | ---: |"]
        for r in rows[1:]:
            g = graded.get(r[name_i].lower(), {})
            lines.append(f"| {r[name_i]} | {float(r[rate_i]):.3f} | {_fmt(thesis_rank(r[name_i]))} | "
                         f"{_fmt(g.get('yardstick/keep'))} | {_fmt(g.get('yardstick/exact'))} |")
        lines += ["", "Optimal moves: the share of the perfect-play yardstick's non-trivial positions where the "
                  "agent's move keeps the game-theoretic outcome (keep) or has the best exact score (exact); "
                  "[yardstick/](yardstick/yardstick.md).", ""]
    tour = out / "tournament" / "report.md"
    if tour.is_file():
        body = re.sub(r"\]\((?![a-z][a-z0-9+.-]*:)", "](tournament/", tour.read_text())  # relative links only
        body = "\n".join("#" + line if line.startswith("#") else line for line in body.splitlines())
        lines += [body, ""]
    for name, src in sources.items():
        curves = src.parent / "curves.png" if src.name == "best" else src / "curves.png"
        if curves.is_file():
            rel = os.path.relpath(curves.resolve(), out.resolve())
            lines += [f"### {name} training curves", "", f"![{name}]({rel})", ""]
    path = out / "report.md"
    path.write_text("\n".join(lines) + "\n")
    (out / "stages.json").write_text(json.dumps(stages, indent=2) + "\n")
    return path


def main(args: Args) -> Path:
    try:
        out = outdir.claim(args.out, outdir.REPRODUCTION, overwrite=args.overwrite)
    except outdir.OutputError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    t0 = time.perf_counter()
    stages: list[dict] = []
    overwrite = ["--overwrite"] if args.overwrite else []
    progress = ([] if args.progress else ["--no-progress"]) + overwrite
    budgets = BUDGETS[args.preset]
    if args.eval_only:
        shipped = agents.checkpoints_dir()
        sources = {"supervised": shipped / "supervised", **{a: shipped / a for a in RL}}
        names = list(default_agents(games.DEFAULT))
        _run("tournament", ["--out", str(out / "tournament"), "--seed", str(args.seed), "--agents", *names,
                            *progress, *budgets["tournament"]], stages)
    else:
        sources = {"supervised": out / "supervised", **{a: out / a / "best" for a in RL}}
        _run("supervised", ["--out", str(out / "supervised"), "--dataset", str(out / "data" / "1steplA.npz"),
                            "--seed", str(args.seed), *progress, *budgets["supervised"]], stages)
        for algo in RL:
            _run(algo, ["--out", str(out / algo), "--init-from", str(out / "supervised"), "--seed", str(args.seed),
                        "--preset", args.training_preset, *progress, *budgets[algo]], stages)
        names = ["1steplA", "2steplA", str(out / "supervised")]
        for algo in RL:
            names += [f"{out / algo}:sto", f"{out / algo}:det"] if algo in POLICY else [str(out / algo)]
        _run("tournament", ["--out", str(out / "tournament"), "--seed", str(args.seed), "--agents", *names,
                            *progress, *budgets["tournament"]], stages)
    _run("yardstick", ["--out", str(out / "yardstick"), "--seed", str(args.seed), "--agents", *names, *overwrite],
         stages)
    path = _report(args, out, stages, sources, time.perf_counter() - t0)
    print(f"\nreport: {path}")
    return path


if __name__ == "__main__":
    compile_cache.configure_script()  # --no-compile-cache: off in every stage too
    main(tyro.cli(Args))
