"""Copy a training run's best agent into checkpoints/NAME so that ``agents.load(NAME)`` finds it.

    python experiments/ship_checkpoint.py runs/dqn dqn
    python experiments/ship_checkpoint.py runs/alphazero alphazero --simulations 256 --solve True
    python experiments/ship_checkpoint.py runs/checkers/ppo checkers/ppo   # -> checkpoints/checkers/ppo

Copies ``RUN/best`` (the Orbax checkpoint and its metadata.json) plus the run's
metrics.jsonl, metrics.csv, curves.png and summary.json, and records the run
directory in the metadata. The resumable ``last/`` state (replay buffer,
optimiser) is not shipped. An agent of another game than Connect Four is shipped as
``<game>/<name>`` (``checkpoints/<game>/<name>``), the name ``agents.load`` gives it.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import tyro

from c4jax import agents, games
from c4jax.io import checkpoint, runlog


@dataclass(frozen=True)
class Args:
    run: tyro.conf.Positional[str]
    """Training run directory (with best/ inside)."""
    name: tyro.conf.Positional[str]
    """Agent name: the directory under checkpoints/ (e.g. dqn, dueling_dqn, ppo, reinforce; checkers/ppo for a
    Checkers run)."""
    simulations: int = 0
    """For an agent that plays with search (AlphaZero): the simulations per move the shipped agent plays
    with by default (0 = keep the run's)."""
    solve: bool | None = None
    """For an agent that plays with search (AlphaZero): whether the shipped agent searches with proven
    values by default (``agent.search.solve`` of its metadata; None = keep the run's)."""


def main(args: Args) -> Path:
    run = Path(args.run)
    best = run / "best"
    meta = checkpoint.read_metadata(best, game=None)  # a clear error if the run has no best agent
    game = meta["game"]
    prefix, _, rest = args.name.partition("/")
    if game != games.DEFAULT and (prefix != game or not rest or "/" in rest):
        raise SystemExit(f"error: {args.run!r} holds a {game} agent: ship it as {game}/<name>, e.g. {game}/{prefix}")
    if game == games.DEFAULT and "/" in args.name:
        raise SystemExit(f"error: {args.run!r} holds a Connect Four agent: its name has no '/', got {args.name!r}")
    if args.simulations:
        if "search" not in meta.get("agent", {}):
            raise SystemExit(f"error: {args.run!r} holds an agent that does not search: --simulations does not apply")
        if args.simulations < 0:
            raise SystemExit("error: --simulations must be >= 0")
        meta["agent"]["search"]["simulations"] = args.simulations
    if args.solve is not None:
        if "search" not in meta.get("agent", {}):
            raise SystemExit(f"error: {args.run!r} holds an agent that does not search: --solve does not apply")
        meta["agent"]["search"]["solve"] = args.solve
    dest = agents.checkpoints_dir() / args.name
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.shipping")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(best, tmp)
    for f in ("metrics.jsonl", "metrics.csv", "curves.png", "curves_wall.png", "summary.json"):
        if (run / f).is_file():
            shutil.copy2(run / f, tmp / f)
    meta["name"] = args.name
    meta["shipped_from"] = runlog.display_path(run)
    (tmp / checkpoint.METADATA_FILE).write_text(json.dumps(meta, indent=2) + "\n")
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    agent = agents.load(args.name)
    print(f"shipped {best} as {dest} ({agent.name})")
    return dest


if __name__ == "__main__":
    main(tyro.cli(Args))
