"""Dueling DQN self-play training (design.md §7; thesis defaults): Q = V + A - mean(A).

``c4jax train dueling_dqn ARGS`` and ``python experiments/dueling_dqn.py ARGS`` run this module
(the same flags and ``--help``).

    python experiments/dueling_dqn.py                 # thesis settings -> runs/dueling_dqn
    python experiments/dueling_dqn.py --game GAME    # -> runs/GAME/dueling_dqn

Same flags as ``c4jax train dqn`` (``--help``); only the defaults differ: the dueling head, and on
Connect Four the thesis text's preset (design.md §7a; docs/results/fidelity compares the two). On a
game with a residual tower the head is the tower's dueling head
(:class:`c4jax.nets.tower.Tower`), folded into the plain tower that the saved agent plays.
"""

from __future__ import annotations

from typing import Sequence

from c4jax import games
from c4jax.cli import training
from c4jax.cli.dqn import defaults as dqn_defaults
from c4jax.cli.dqn import main


def defaults(game: str, preset: str | None = None):
    """The Dueling DQN settings of ``game`` with ``preset`` (:func:`c4jax.cli.dqn.defaults`)."""
    return dqn_defaults(game, preset, dueling=True)


DEFAULT = defaults(games.DEFAULT)  # the default game's


def cli(argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Parse ``argv`` (default: this process' arguments) over the Dueling DQN defaults of its ``--game``
    and train; ``prog`` names the command in ``--help`` (``c4jax train dueling_dqn``; default: the script's
    file name)."""
    return training.command(defaults, main, argv, prog)
