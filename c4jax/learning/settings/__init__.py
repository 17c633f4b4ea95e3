"""The trainers' settings: the frozen config dataclasses that the commands parse (tyro) and check,
one module per trainer (``ppo``, ``reinforce``, ``dqn``, ``alphazero``, ``supervised``), the on-policy trainers' shared
fields (``onpolicy``), the training opponent (``opponent``) and the host loop's (``loop``).

These modules import neither JAX nor the networks, so that a command reads, checks and refuses its
command line before anything heavy loads; the trainers' modules re-export their config (``from
c4jax.learning.ppo import PPOConfig``; ``from c4jax.cli.supervised import Config``).
"""
