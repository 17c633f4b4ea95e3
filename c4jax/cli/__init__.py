"""The command-line programs: the ``c4jax`` command (:mod:`c4jax.cli.main`) and one module per
subcommand (``c4jax train ppo`` runs :mod:`c4jax.cli.ppo`), which the ``experiments/`` scripts of the
same names run too. Every module has ``cli(argv=None, prog=None)``: it parses ``argv`` (default: the
process' arguments) and runs; ``prog`` is the command named in ``--help`` (default: the script's name).
"""
