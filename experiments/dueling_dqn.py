"""Dueling DQN self-play training (design.md §7).

    python experiments/dueling_dqn.py --help

The code is :mod:`c4jax.cli.dueling_dqn` (its docstring says what the command does and writes), so that the
installed package has it too: ``c4jax train dueling_dqn`` runs the same, with the same flags.
"""

from c4jax.cli import dueling_dqn
from c4jax.io import compile_cache

if __name__ == "__main__":
    compile_cache.configure_script()
    dueling_dqn.cli()
