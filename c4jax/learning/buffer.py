"""A fixed-capacity ring replay buffer as a pure pytree: ``init``, ``add`` (masked batches), ``sample``.

Every function is jittable and returns a new buffer; items are pytrees of arrays with a leading axis.
Under a mesh with a batch axis the storage (``BATCH_FIELDS``) and sampled batches are split over devices.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import struct
from jax import Array

from c4jax.io.devices import shard_batch


@struct.dataclass
class Buffer:
    items: Any  # pytree, every leaf [capacity, ...]
    size: Array  # int32[]: filled slots (<= capacity)
    ptr: Array  # int32[]: next slot to write


BATCH_FIELDS = ("items",)  # the fields of a Buffer whose leaves have a batch (capacity) axis


def init(example: Any, capacity: int) -> Buffer:
    """An empty buffer for items shaped like ``example`` (one item, no leading axis)."""
    items = jax.tree.map(lambda x: jnp.zeros((capacity,) + jnp.shape(x), jnp.asarray(x).dtype), example)
    return Buffer(items=items, size=jnp.int32(0), ptr=jnp.int32(0))


def capacity(buf: Buffer) -> int:
    return jax.tree.leaves(buf.items)[0].shape[0]


def add(buf: Buffer, batch: Any, valid: Array) -> Buffer:
    """Append the rows of ``batch`` (leaves [N, ...], N <= capacity) where ``valid`` (bool[N]), in order,
    overwriting the oldest once full."""
    cap = capacity(buf)
    valid = valid.astype(jnp.bool_)
    offset = jnp.cumsum(valid) - 1  # rank of each valid row
    pos = jnp.where(valid, (buf.ptr + offset) % cap, cap)  # invalid rows -> out of range, dropped
    items = shard_batch(jax.tree.map(lambda store, new: store.at[pos].set(new, mode="drop"), buf.items, batch))
    n = valid.sum(dtype=jnp.int32)
    return Buffer(items=items, size=jnp.minimum(buf.size + n, cap), ptr=(buf.ptr + n) % cap)


def sample(buf: Buffer, key: Array, batch_size: int) -> Any:
    """``batch_size`` items drawn uniformly (with replacement) from the filled slots."""
    idx = jax.random.randint(key, (batch_size,), 0, jnp.maximum(buf.size, 1))
    return shard_batch(jax.tree.map(lambda x: x[idx], buf.items))
