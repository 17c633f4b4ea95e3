"""Dueling DQN self-play training (design.md §7).

    python experiments/dueling_dqn.py --help

The code is ``TRAINERS["dueling_dqn"]`` of :mod:`c4jax.cli.training` (docs/guide/train.md says what a run
writes), so that the installed package has it too: ``c4jax train dueling_dqn`` runs the same, with the same flags.
"""

from c4jax.cli import training
from c4jax.io import compile_cache

if __name__ == "__main__":
    compile_cache.configure_script()
    training.cli("dueling_dqn")
