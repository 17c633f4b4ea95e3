"""AlphaZero self-play training with mctx search (design.md §8).

``c4jax train alphazero ARGS`` and ``python experiments/alphazero.py ARGS`` run this module (the same flags
and ``--help``; docs/guide/train.md describes the runs). Besides the usual outputs it writes
``curves_wall.png`` (win rates against wall-clock minutes); ``--game`` takes that game's defaults
(:func:`defaults`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Sequence

from c4jax import games
from c4jax.cli import training
from c4jax.learning.settings import loop
from c4jax.learning.settings.alphazero import AlphaZeroConfig


@dataclass(frozen=True)
class Config:
    """AlphaZero self-play training."""

    run: loop.LoopConfig = field(default_factory=lambda: defaults(games.DEFAULT).run)
    az: AlphaZeroConfig = field(default_factory=lambda: defaults(games.DEFAULT).az)
    preset: Literal["default", "smoke"] = "default"
    """'default': the settings above (the game's); 'smoke': the smallest run, which checks the pipeline."""


def defaults(game: str, preset: str | None = None) -> Config:
    """The settings of ``game`` with ``preset``: :class:`~c4jax.learning.alphazero.AlphaZeroConfig`'s,
    fitted to the game's card (a residual tower where the CNET does not read it, random starts only where it
    has them, at most its number of actions considered), 60,000 updates from scratch; then the kit's flags,
    then the preset."""
    kit = games.card_of(game)
    fitted = AlphaZeroConfig()
    fitted = dataclasses.replace(
        fitted, max_considered=min(fitted.max_considered, kit.num_actions),
        random_start_frac=fitted.random_start_frac if kit.random_start else 0.0,
        **({} if kit.cnet else {"tower_blocks": 2, "tower_channels": 32}))
    run = loop.from_scratch(training.out_dir(game, "alphazero"), game, total_updates=60_000)
    cfg = training.from_kit(Config(run=run, az=fitted, preset="default"), game, "alphazero")
    return training.with_preset(cfg, preset)


def plot_wall_clock(run_dir: Path) -> Path:
    """``curves_wall.png``: every evaluation win rate against wall-clock minutes of the run."""
    from c4jax.io import runlog

    rows = runlog.read_metrics(run_dir / runlog.METRICS_JSONL)
    for r in rows:
        r["minutes"] = r.get("time/wall_s", 0.0) / 60
    keys = sorted({k for r in rows for k in r if k.startswith("eval/vs_") and not k.endswith("_length")})
    return runlog.plot_panels(rows, [("win rate (protocol, 100 games)", keys, "win rate")], run_dir / "curves_wall.png",
                              x="minutes", xlabel="wall-clock minutes", suptitle="alphazero: strength against time")


def main(cfg: Config) -> dict:
    from c4jax.learning import rundir
    from c4jax.learning.alphazero import AlphaZero

    def make():
        if cfg.az.ema_decay > 0 and cfg.run.revert_drop < 1:
            raise ValueError("--ema-decay needs the old-network rule off (--revert-drop 1): a revert would put "
                             "the averaged weights back into training")
        return AlphaZero(cfg.az, freeze_conv=cfg.run.freeze_conv, game=games.make(cfg.run.game))

    summary = training.train(make, cfg)
    k = cfg.run.vmap_seeds
    for d in [Path(cfg.run.out)] if k == 1 else [rundir.seed_dir(cfg.run.out, cfg.run.seed + i) for i in range(k)]:
        plot_wall_clock(d)
    return summary


def cli(argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Parse ``argv`` (default: this process' arguments) and train; ``prog``: the command in ``--help``."""
    return training.command(defaults, main, argv, prog)
