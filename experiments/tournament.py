"""Round-robin tournament of the thesis (§5.1-5.2).

    python experiments/tournament.py --help

The code is :mod:`c4jax.cli.tournament` (its docstring says what the command does and writes), so that the
installed package has it too: ``c4jax tournament`` runs the same, with the same flags.
"""

from c4jax.cli import tournament
from c4jax.io import compile_cache

if __name__ == "__main__":
    compile_cache.configure_script()
    tournament.cli()
