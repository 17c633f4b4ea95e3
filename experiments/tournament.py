"""Round-robin tournament of the thesis (§5.1-5.2).

    python experiments/tournament.py --help

The code is :mod:`c4jax.cli.tournament` (its docstring says what the command does and writes), so that the
installed package has it too: ``c4jax tournament`` runs the same, with the same flags.
"""

from c4jax.cli import tournament

if __name__ == "__main__":
    tournament.cli()
