"""AlphaZero self-play training with mctx search (design.md §8).

    python experiments/alphazero.py --help

The code is ``TRAINERS["alphazero"]`` of :mod:`c4jax.cli.training` (docs/guide/train.md says what a run
writes), so that the installed package has it too: ``c4jax train alphazero`` runs the same, with the same flags.
"""

from c4jax.cli import training
from c4jax.io import compile_cache

if __name__ == "__main__":
    compile_cache.configure_script()
    training.cli("alphazero")
