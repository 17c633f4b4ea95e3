"""Dueling DQN self-play training (design.md §7; thesis defaults): Q = V + A - mean(A).

``c4jax train dueling_dqn ARGS`` and ``python experiments/dueling_dqn.py ARGS`` run this module (the same
flags and ``--help``; docs/guide/train.md describes the runs). The flags are ``c4jax train dqn``'s; only the
defaults differ (the dueling head; on Connect Four the thesis text's preset)."""

from __future__ import annotations

from typing import Sequence

from c4jax.cli import training
from c4jax.cli.dqn import defaults as dqn_defaults
from c4jax.cli.dqn import main


def defaults(game: str, preset: str | None = None):
    """The Dueling DQN settings of ``game`` with ``preset`` (:func:`c4jax.cli.dqn.defaults`)."""
    return dqn_defaults(game, preset, dueling=True)


def cli(argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Parse ``argv`` (default: this process' arguments) and train; ``prog``: the command in ``--help``."""
    return training.command(defaults, main, argv, prog)
