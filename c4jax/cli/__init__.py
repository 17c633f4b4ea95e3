"""The command-line programs: the ``c4jax`` command (:mod:`c4jax.cli.main`) and one module per
subcommand, which the ``experiments/`` scripts of the same names run too; the RL trainers share one
(``c4jax train ppo`` runs :func:`c4jax.cli.training.cli` with ``"ppo"``). Every module has ``cli(argv=None,
prog=None)`` (the trainers' ``cli(name, argv=None, prog=None)``): it parses ``argv`` (default: the process'
arguments) and runs; ``prog`` is the command named in ``--help`` (default: the script's name).
"""
