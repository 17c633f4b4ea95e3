"""REINFORCE-with-baseline self-play training (design.md §7).

    python experiments/reinforce.py --help

The code is :mod:`c4jax.cli.reinforce` (its docstring says what the command does and writes), so that the
installed package has it too: ``c4jax train reinforce`` runs the same, with the same flags.
"""

from c4jax.cli import reinforce
from c4jax.io import compile_cache

if __name__ == "__main__":
    compile_cache.configure_script()
    reinforce.cli()
