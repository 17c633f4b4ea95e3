"""The training opponent's settings, re-exported from :mod:`c4jax.learning.settings.opponent`."""

from c4jax.learning.settings.opponent import SELF, OpponentConfig, training_opponent

__all__ = ["SELF", "OpponentConfig", "training_opponent"]
