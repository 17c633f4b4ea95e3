"""The command-line programs: the ``c4jax`` command (:mod:`c4jax.cli.main`) and the code behind each of
its subcommands, one module each (``c4jax train ppo`` runs :mod:`c4jax.cli.ppo`). The scripts in the
repository's ``experiments/`` folder of the same names run the same modules.

Every module has ``cli(argv=None, prog=None)``: it parses ``argv`` (default: the process' arguments)
and runs; ``prog`` is the command named in ``--help`` (default: the script's file name).
"""
