"""PPO self-play training (design.md §7).

    python experiments/ppo.py --help

The code is :mod:`c4jax.cli.ppo` (its docstring says what the command does and writes), so that the
installed package has it too: ``c4jax train ppo`` runs the same, with the same flags.
"""

from c4jax.cli import ppo

if __name__ == "__main__":
    ppo.cli()
