"""Supervised stage (design.md §6): CNET128 learns to imitate 1StepLA.

    python experiments/supervised.py --help

The code is :mod:`c4jax.cli.supervised` (its docstring says what the command does and writes), so that the
installed package has it too: ``c4jax train supervised`` runs the same, with the same flags.
"""

from c4jax.cli import supervised
from c4jax.io import compile_cache

if __name__ == "__main__":
    compile_cache.configure_script()
    supervised.cli()
