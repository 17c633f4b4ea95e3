"""Merging the repeated positions of a batch of self-play rows into one row each (as AlphaZero.jl).

Shapes stay fixed (jittable): rows are sorted by a 64-bit hash of their observation and runs of equal
hashes summed with ``segment_sum``; two distinct observations collide with probability about 2^-64.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
from jax import Array

# One seed per 32-bit hash word: it draws that word's random odd weight for each observation cell
# and is the word's final multiplier.
_SEEDS = (0x9E3779B1, 0x85EBCA77)


def observation_hashes(boards: Array) -> tuple[Array, Array]:
    """Two uint32[N] hashes of ``boards[N, ...]`` (integer, bool, or float by bit pattern)."""
    flat = boards.reshape(boards.shape[0], -1)
    if jnp.issubdtype(flat.dtype, jnp.floating):
        flat = jax.lax.bitcast_convert_type(flat.astype(jnp.float32), jnp.uint32)
    cells = flat.astype(jnp.uint32)
    n = cells.shape[1]

    def one(seed: int) -> Array:
        weights = jax.random.bits(jax.random.key(seed), (n,), jnp.uint32) | jnp.uint32(1)
        h = jnp.sum((cells + jnp.uint32(1)) * weights, axis=1, dtype=jnp.uint32)
        h = h ^ (h >> 16)
        return h * jnp.uint32(seed) ^ (h >> 13)

    return one(_SEEDS[0]), one(_SEEDS[1])


def merge_repeats(rows, valid: Array):
    """``(rows, valid)`` in hash order with each repeated ``board`` among the valid rows kept once (other copies
    invalid). ``rows``: a dataclass of [N, ...] arrays; the kept row holds each other field's mean over the
    copies (a vector field: over the copies where it is not all zero)."""
    n = valid.shape[0]
    h1, h2 = observation_hashes(rows.board)
    # invalid rows last, then by hash; equal observations become adjacent
    order = jnp.lexsort((h2, h1, ~valid))
    rows = jax.tree.map(lambda x: x[order], rows)
    valid, h1, h2 = valid[order], h1[order], h2[order]
    same_as_previous = jnp.concatenate([jnp.zeros(1, bool), (h1[1:] == h1[:-1]) & (h2[1:] == h2[:-1])])
    first = ~same_as_previous | ~valid  # an invalid row stays a run of its own
    segment = jnp.cumsum(first) - 1

    def mean(x: Array) -> Array:
        counts = valid if x.ndim == 1 else valid & (jnp.abs(x).reshape(n, -1).sum(axis=1) > 0)
        w = counts.astype(jnp.float32)
        total = jax.ops.segment_sum(x * w.reshape((n,) + (1,) * (x.ndim - 1)), segment, num_segments=n)
        count = jax.ops.segment_sum(w, segment, num_segments=n)
        return (total / jnp.maximum(count, 1.0).reshape((n,) + (1,) * (x.ndim - 1)))[segment].astype(x.dtype)

    merged = dataclasses.replace(rows, **{f.name: mean(getattr(rows, f.name)) for f in dataclasses.fields(rows)
                                          if f.name != "board"})
    return merged, valid & first
