"""Play one game between two agents and show it.

    python experiments/watch.py --help

The code is :mod:`c4jax.cli.watch` (its docstring says what the command does and writes), so that the
installed package has it too: ``c4jax watch`` runs the same, with the same flags.
"""

from c4jax.cli import watch
from c4jax.io import compile_cache

if __name__ == "__main__":
    compile_cache.configure_script()
    watch.cli()
