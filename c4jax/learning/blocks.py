"""A chunk of whole blocks (iterations, buffers) and one shortened block, for an update count that is not a
multiple of the block."""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp


def run(state, whole: int, block: Callable, last: Callable | None = None):
    """``(state, metrics stacked [whole (+ 1)])``: ``whole`` blocks ``block(state, None)`` in one ``lax.scan``, then
    ``last(state, None)`` where given."""
    parts = []
    if whole:
        state, m = jax.lax.scan(block, state, None, length=whole)
        parts.append(m)
    if last is not None:
        state, m = last(state, None)
        parts.append(jax.tree.map(lambda x: jnp.asarray(x)[None], m))
    if len(parts) == 1:
        return state, parts[0]
    return state, jax.tree.map(lambda *xs: jnp.concatenate(xs), *parts)
