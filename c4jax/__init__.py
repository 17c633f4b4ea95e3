"""c4jax: a JAX-native Connect Four reinforcement-learning lab."""

__version__ = "0.1.0"
