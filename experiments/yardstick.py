"""Grade agents against perfect play on the yardstick's non-trivial positions.

    python experiments/yardstick.py --help

The code is :mod:`c4jax.cli.yardstick` (its docstring says what the command does and writes), so that the
installed package has it too: ``c4jax yardstick`` runs the same, with the same flags.
"""

from c4jax.io import compile_cache, host_devices

if __name__ == "__main__":
    host_devices.use_every_core()  # before JAX starts: one CPU device per core
    compile_cache.configure_script()
    from c4jax.cli import yardstick

    yardstick.cli()
