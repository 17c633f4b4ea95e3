"""Round-robin tournament of the thesis (§5.1-5.2).

    python experiments/tournament.py --help

The code is :mod:`c4jax.cli.tournament` (its docstring says what the command does and writes), so that the
installed package has it too: ``c4jax tournament`` runs the same, with the same flags.
"""

from c4jax.io import compile_cache, host_devices

if __name__ == "__main__":
    host_devices.use_every_core()  # before JAX starts: one CPU device per core
    compile_cache.configure_script()
    from c4jax.cli import tournament

    tournament.cli()
