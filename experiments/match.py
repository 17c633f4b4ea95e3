"""Play protocol matches between two agents and print A's win rate per match key and their mean.

    python experiments/match.py --help

The code is :mod:`c4jax.cli.match` (its docstring says what the command does and writes), so that the
installed package has it too: ``c4jax match`` runs the same, with the same flags.
"""

from c4jax.cli import match
from c4jax.io import compile_cache

if __name__ == "__main__":
    compile_cache.configure_script()
    match.cli()
