"""REINFORCE-with-baseline self-play training (design.md §7; thesis defaults).

``c4jax train reinforce ARGS`` and ``python experiments/reinforce.py ARGS`` run this module
(the same flags and ``--help``).

    python experiments/reinforce.py                    # thesis settings -> runs/reinforce
    python experiments/reinforce.py --out runs/reinforce --resume
    python experiments/reinforce.py --preset published # the published code's training (design.md §7a)

One update per episode (+ mirror), evaluation every 100 episodes (Random, old network,
1StepLA; 100 games each). Every hyperparameter is a flag (``--help``). Writes
metrics.jsonl/csv, curves.png, summary.json, best/ (``agents.load("runs/reinforce")``:
sampled play, ``:det`` greedy) and last/ (the resumable training state) to --out.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from typing import Literal, Sequence

from c4jax.cli import selfplay_game
from c4jax.io import cliargs
from c4jax.learning import config, loop
from c4jax.learning.reinforce import Reinforce, ReinforceConfig

OTHER_GAMES = "c4jax train ppo, dqn and alphazero"  # the trainers of games other than Connect Four


@dataclass(frozen=True)
class Config:
    """REINFORCE-with-baseline self-play training."""

    run: loop.LoopConfig = field(default_factory=lambda: loop.LoopConfig(out="runs/reinforce"))
    reinforce: ReinforceConfig = field(default_factory=ReinforceConfig)
    """REINFORCE-with-baseline hyperparameters. Their defaults are those of --preset (above); explicit flags
    override them. With --opponent, only the learner's own moves carry a loss; the opponent's moves shape their
    returns."""
    preset: Literal["thesis", "published"] = "thesis"
    """Training preset: 'thesis' (the thesis text, design.md §7) or 'published' (every difference of the
    published training code turned on, design.md §7a). It sets the defaults; explicit flags override it."""


def main(cfg: Config) -> dict:
    algo = Reinforce(cfg.reinforce, freeze_conv=cfg.run.freeze_conv)
    return loop.run(algo, cfg.run, width=cfg.reinforce.width, algo_config=dataclasses.asdict(cfg.reinforce))


def cli(argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Parse ``argv`` (default: this process' arguments) and train; ``prog`` names the command in
    ``--help`` (``c4jax train reinforce``; default: the script's file name)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    selfplay_game.connect_four_only(argv, "reinforce", OTHER_GAMES)
    with cliargs.one_line_errors(argv, prog):
        cfg = config.preset_cli(Config(), argv, prog=prog)
    return loop.exit_on_error(main, cfg)
