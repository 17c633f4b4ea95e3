"""The training state every RL algorithm carries through its jitted chunks; an algorithm that needs more
(a target network, a replay buffer) subclasses it."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import optax
from flax import struct
from jax import Array


@struct.dataclass
class TrainState:
    params: Any  # the network's parameters
    opt_state: optax.OptState
    key: Array  # PRNG key of everything random that follows (self-play, sampling, minibatches)
    updates: Array  # int32[]: optimiser steps so far
    episodes: Array  # int32[]: self-play games so far

    @classmethod
    def create(cls, params, tx: optax.GradientTransformation, key: Array, **extra) -> "TrainState":
        """A fresh state: ``tx``'s initial optimiser state, zero counters, ``extra`` fields of a subclass."""
        return cls(params=params, opt_state=tx.init(params), key=key, updates=jnp.int32(0),
                   episodes=jnp.int32(0), **extra)


def is_key(x) -> bool:
    """Whether ``x`` is an array of typed PRNG keys."""
    return hasattr(x, "dtype") and jnp.issubdtype(x.dtype, jax.dtypes.prng_key)


def keys_to_data(tree):
    """``tree`` with every typed PRNG key array replaced by its ``uint32`` key data (to save it)."""
    return jax.tree.map(lambda x: jax.random.key_data(x) if is_key(x) else x, tree)


def data_to_keys(tree, like):
    """The inverse of :func:`keys_to_data`: keys where ``like`` (the same structure) holds keys."""
    return jax.tree.map(lambda x, t: jax.random.wrap_key_data(x) if is_key(t) else x, tree, like)


def where_seeds(mask, on_true, on_false):
    """Per seed: ``on_true`` where ``mask`` (bool[K], the leading seed axis), else ``on_false``."""
    def pick(t, f):
        m = jnp.asarray(mask).reshape((-1,) + (1,) * (t.ndim - 1))
        return jnp.where(m, t, f)
    return jax.tree.map(pick, on_true, on_false)
