"""Dueling DQN self-play training (design.md §7; thesis defaults): Q = V + A - mean(A).

``c4jax train dueling_dqn ARGS`` and ``python experiments/dueling_dqn.py ARGS`` run this module
(the same flags and ``--help``).

    python experiments/dueling_dqn.py                 # thesis settings -> runs/dueling_dqn

Same flags as ``c4jax train dqn`` (``--help``); only the defaults differ: the dueling head, and the
thesis text's preset (``--preset published`` measured no stronger for Dueling DQN,
docs/results/fidelity).
"""

from __future__ import annotations

import sys
from typing import Sequence

from c4jax.cli.dqn import Config, main
from c4jax.cli import selfplay_game
from c4jax.io import cliargs
from c4jax.learning import config, loop
from c4jax.learning.dqn import DQNConfig

OTHER_GAMES = "c4jax train dqn (Double DQN), ppo and alphazero"  # the trainers of games other than Connect Four
DEFAULT = Config(run=loop.LoopConfig(out="runs/dueling_dqn"), dqn=DQNConfig(dueling=True), preset="thesis")


def cli(argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Parse ``argv`` (default: this process' arguments) over :data:`DEFAULT` and train; ``prog`` names the
    command in ``--help`` (``c4jax train dueling_dqn``; default: the script's file name)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    selfplay_game.connect_four_only(argv, "dueling_dqn", OTHER_GAMES)
    with cliargs.one_line_errors(argv, prog):
        cfg = config.preset_cli(DEFAULT, argv, prog=prog)
    return loop.exit_on_error(main, cfg)
