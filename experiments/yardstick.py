"""Grade agents against perfect play on the yardstick's non-trivial positions.

    python experiments/yardstick.py --help

The code is :mod:`c4jax.cli.yardstick` (its docstring says what the command does and writes), so that the
installed package has it too: ``c4jax yardstick`` runs the same, with the same flags.
"""

from c4jax.cli import yardstick
from c4jax.io import compile_cache

if __name__ == "__main__":
    compile_cache.configure_script()
    yardstick.cli()
