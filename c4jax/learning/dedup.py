"""Merging the repeated positions of a batch of self-play rows into one row each.

Self-play games that start from the same position repeat their first plies: in one iteration of
AlphaZero on Connect Four, most games start from the empty board, and with the mirror images its
first positions are stored many times over. :func:`merge_repeats` keeps one row per distinct
observation, whose value target is the mean of the copies' and whose policy target is the mean of
the copies that have one (playout cap randomisation stores an all-zero policy for the others), as
AlphaZero.jl merges the samples of one position. The buffer then holds each position of an
iteration once, with a less noisy target, instead of many copies that outweigh the rest.

Shapes stay fixed (jittable): the rows are sorted by a 64-bit hash of their observation, the runs
of equal hashes are summed with ``segment_sum`` and every row but the first of a run is marked
invalid. Two distinct observations share both hash words with a probability of about 2^-64 per
pair (for the random cell weights).
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
    """Two uint32[N] hashes of the observations ``boards[N, ...]`` (any integer or bool dtype;
    float observations are hashed by their bit patterns)."""
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
    """``(rows, valid)`` with every observation that occurs more than once among the valid rows
    kept once; the other copies become invalid. ``rows`` is a dataclass of arrays with a leading
    axis N and a field ``board`` (the observation). The kept copy carries, for each other field,
    the mean of the copies': for a per-row scalar (a value target) over every copy, for a vector (a
    policy target) over the copies whose vector is not all zero (zero when none has one). The rows
    come back in hash order, so the buffer's order changes (its sampling is uniform)."""
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
