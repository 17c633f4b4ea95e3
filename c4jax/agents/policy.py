"""Action selection from network outputs: masking illegal actions, greedy, sampling, ε-greedy.

Before a softmax illegal actions are masked with ``jnp.finfo(dtype).min``, never ``-inf`` (which
makes a fully masked row NaN); their probability is then exactly 0. Every agent's ``scores`` show
illegal actions as ``ILLEGAL_SCORE`` (``-inf``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import Array

ILLEGAL_SCORE = -jnp.inf  # scores of full columns, for every agent


def masked_logits(logits: Array, legal: Array) -> Array:
    """Logits with illegal columns at the dtype's minimum (finite: softmax stays NaN-free)."""
    return jnp.where(legal, logits, jnp.finfo(logits.dtype).min)


def masked_softmax(logits: Array, legal: Array) -> Array:
    """float32[..., 7]: the policy over legal columns; illegal columns get exactly 0."""
    return jnp.where(legal, jax.nn.softmax(masked_logits(logits, legal), axis=-1), 0.0)


def masked_log_softmax(logits: Array, legal: Array) -> Array:
    """float32[..., A]: log-probabilities over the ``legal`` actions; illegal ones finite, near the minimum."""
    return jax.nn.log_softmax(masked_logits(logits, legal), axis=-1)


def all_columns(boards: Array) -> Array:
    """bool[..., 7]: every column of ``boards[..., 6, 7]``, full ones included (an unmasked legal mask)."""
    return jnp.ones(boards.shape[:-2] + boards.shape[-1:], bool)


def greedy(values: Array, legal: Array) -> Array:
    """int32[...]: the best legal column (lowest index on ties)."""
    return jnp.argmax(masked_logits(values, legal), axis=-1).astype(jnp.int32)


def sample(key: Array, logits: Array, legal: Array) -> Array:
    """int32[...]: a column sampled from the masked softmax of ``logits``."""
    return jax.random.categorical(key, masked_logits(logits, legal), axis=-1).astype(jnp.int32)


def epsilon_greedy(key: Array, values: Array, legal: Array, epsilon: Array) -> Array:
    """int32[...]: with probability ``epsilon`` a uniform legal column, else the greedy one."""
    explore_key, pick_key = jax.random.split(key)
    explore = jax.random.uniform(explore_key, values.shape[:-1]) < epsilon
    uniform = sample(pick_key, jnp.zeros_like(values), legal)
    return jnp.where(explore, uniform, greedy(values, legal))
