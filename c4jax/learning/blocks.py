"""A chunk of whole blocks (iterations, buffers) and one shortened block: how a trainer makes a number of
updates that is not a multiple of its block (a ``--total-updates`` or ``--eval-every`` that ends inside
one)."""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp


def run(state, whole: int, block: Callable, last: Callable | None = None):
    """``(state, metrics)``: ``whole`` blocks ``block(state, None) -> (state, metrics)`` in one ``lax.scan``,
    then, where given, the shortened block ``last(state, None)`` of the same metrics. The metrics are stacked on
    a leading axis of ``whole`` (+ 1 with ``last``) entries; without ``last`` this is exactly the scan."""
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
