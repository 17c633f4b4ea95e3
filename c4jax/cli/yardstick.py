"""Grade agents against perfect play on the yardstick's non-trivial positions.

``c4jax yardstick ARGS`` and ``python experiments/yardstick.py ARGS`` run this module (the same flags and
``--help``): ``c4jax.evaluation.optimal_move_rate`` of each agent, written to ``--out`` as
``yardstick.md``, ``.csv``, ``.json`` and ``.png``. Needs no solver."""

from __future__ import annotations

import dataclasses
import datetime
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import c4jax
from c4jax import agents, games
from c4jax.io import cliargs, interrupt, outdir
from c4jax.io.cliargs import fail
from c4jax.io.progress import bar as progress_bar
from c4jax.io.runlog import command_line, display_path
from c4jax.io.tables import Table

if TYPE_CHECKING:
    from c4jax.evaluation import yardstick


@dataclasses.dataclass(frozen=True)
class Args:
    agents: tuple[str, ...] = ("random",) + games.card_of(games.DEFAULT).baselines
    """Agents to grade (names as in agents.load: random, 1steplA, minimax4, dqn, ...; or checkpoint directories)."""
    out: Path = Path("runs/yardstick")
    """Output directory (created)."""
    seed: int = 0
    """PRNG seed of the stochastic agents' sampling (agent i uses fold_in(key, i))."""
    positions: str = ""
    """A position set (.npz from experiments/make_yardstick.py); '' = the set shipped with c4jax."""
    batch_size: int = 512
    """Boards per agent call."""
    devices: int = 0
    """Split every agent call's boards over the first N devices (0 = all; the same figures on any number)."""
    progress: bool = True
    """A progress bar per agent (positions graded)."""
    overwrite: bool = False
    """Replace the grading that --out holds (without it, a grading refuses an --out that holds one)."""


def table(rows: list[dict], pos: yardstick.Positions) -> Table:
    from c4jax.evaluation import yardstick

    cols = [("keep", "keep"), ("exact", "exact")] + [
        (f"{w}_{p}", f"{w} {p}") for w in ("keep", "exact") for p in yardstick.PHASES]
    counts = ", ".join(f"{p} {int(rows[0]['metrics'][f'yardstick/n_{p}'])}" for p in yardstick.PHASES) if rows else ""
    return Table(
        name="yardstick",
        title="Perfect-play yardstick: fraction of non-trivial positions played right",
        header=("agent",) + tuple(h for _, h in cols) + ("seconds",),
        rows=tuple((r["agent"],) + tuple(r["metrics"][f"yardstick/{k}"] for k, _ in cols) + (r["seconds"],)
                   for r in rows),
        formats=("",) + (".3f",) * len(cols) + (".1f",),
        note=(f"{len(pos)} positions, {int(pos.nontrivial.sum())} non-trivial ({counts}). keep: the column keeps the "
              "game-theoretic outcome (win / draw / loss) of the position; exact: it has the best exact solver score "
              "(fastest win, slowest loss). seconds: wall time of the grading, compilation included."),
    )


def plot(rows: list[dict], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from c4jax.evaluation import yardstick

    names = [r["agent"] for r in rows]
    x = np.arange(len(names))
    fig, axes = plt.subplots(2, 1, figsize=(max(7.0, 0.75 * len(names) + 2), 8), squeeze=False)
    panels = [("overall", [("keep", "keep outcome"), ("exact", "exact best")]),
              ("outcome kept, per phase", [(f"keep_{p}", p) for p in yardstick.PHASES])]
    for ax, (title, series) in zip(axes[:, 0], panels):
        w = 0.8 / len(series)
        for i, (key, label) in enumerate(series):
            ax.bar(x + (i - (len(series) - 1) / 2) * w, [r["metrics"][f"yardstick/{key}"] for r in rows], w, label=label)
        ax.set_xticks(x, names, rotation=40, ha="right", fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("fraction of non-trivial positions")
        ax.set_title(title)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(args: Args, command: str | None = None) -> dict:
    command = command or command_line()
    if args.batch_size < 1:
        fail(f"--batch-size must be positive, got {args.batch_size}")
    if not args.agents:
        fail("--agents needs at least one agent")
    cliargs.starting(f"yardstick: {len(args.agents)} agent{'s' * (len(args.agents) != 1)} into {args.out} ...")
    from c4jax.io import devices

    try:
        devices.select(args.devices)
    except devices.DeviceError as e:
        fail(str(e))
    import jax

    from c4jax.evaluation import yardstick

    try:
        pos = yardstick.load_positions(args.positions or None)
    except (OSError, ValueError, KeyError) as e:
        fail(f"cannot read the positions {args.positions!r}: {e}")
    loaded = []
    for spec in args.agents:
        try:
            loaded.append(agents.load(spec))
        except (ValueError, OSError) as e:
            fail(f"cannot load agent {spec!r}: {str(e).split('; known agents')[0]}")
        game = agents.game_of(loaded[-1])
        if not games.kit_of(game).yardstick:
            graded = sorted(g for g in games.GAMES if games.kit_of(g).yardstick)
            fail(f"cannot grade {spec!r}: it plays {game}, which has no yardstick of solved positions "
                 f"(the yardstick grades {', '.join(graded)})")
    try:
        out = outdir.claim(args.out, outdir.YARDSTICK, overwrite=args.overwrite)
    except outdir.OutputError as e:
        fail(str(e))
    key = jax.random.key(args.seed)
    from c4jax.io import compile_cache

    rows = []
    for i, (spec, agent) in enumerate(zip(args.agents, loaded)):
        t0 = time.perf_counter()
        with compile_cache.announce(f"{agent.name}'s moves", say=lambda line: print(f"yardstick: {line}", flush=True)):
            with progress_bar(desc=agent.name, unit="position", disable=not args.progress) as bar:

                def advance(done: int, total: int) -> None:
                    bar.total = total
                    bar.update(done - bar.n)

                m = yardstick.optimal_move_rate(agent, jax.random.fold_in(key, i), positions=pos,
                                                batch_size=args.batch_size, devices=args.devices, progress=advance)
        rows.append({"spec": spec, "agent": agent.name, "metrics": m, "seconds": time.perf_counter() - t0})
        print(f"{agent.name:<20} keep {m['yardstick/keep']:.3f}  exact {m['yardstick/exact']:.3f}  "
              f"({rows[-1]['seconds']:.1f} s)")
    t = table(rows, pos)
    (out / "yardstick.md").write_text(f"```bash\n{command}\n```\n\n" + t.to_markdown())
    t.to_csv(out / "yardstick.csv")
    info = {
        "command": command,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "seed": args.seed,
        "positions": display_path(args.positions) if args.positions else "c4jax/evaluation/yardstick_positions.npz",
        "positions_meta": pos.meta,
        "c4jax_version": c4jax.__version__,
        "jax_version": jax.__version__,
        "agents": rows,
        "table": t.to_dict(),
    }
    (out / "yardstick.json").write_text(json.dumps(info, indent=2) + "\n")
    plot(rows, out / "yardstick.png")
    print(f"wrote yardstick.md, .csv, .json and .png to {display_path(out)}/")
    return info


def cli(argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Parse ``argv`` (default: this process' arguments) and run (:mod:`c4jax.cli`)."""
    args = cliargs.parse(Args, sys.argv[1:] if argv is None else argv, prog, description=__doc__.split("\n")[0])
    with interrupt.guard():
        return main(args)
