"""PPO self-play training (design.md §7).

    python experiments/ppo.py --help

The code is :mod:`c4jax.cli.ppo` (its docstring says what the command does and writes), so that the
installed package has it too: ``c4jax train ppo`` runs the same, with the same flags.
"""

from c4jax.cli import ppo
from c4jax.io import compile_cache

if __name__ == "__main__":
    compile_cache.configure_script()
    ppo.cli()
