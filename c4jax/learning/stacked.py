"""K training runs in one program: pytrees stacked on a leading seed axis, and the jitted chunk
that advances all of them at once (``--vmap-seeds``), on one device or a mesh of several
(:mod:`c4jax.learning.placement`)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable

import jax
import jax.numpy as jnp

from c4jax.io import devices
from c4jax.learning.algorithm import Algorithm
from c4jax.learning.placement import ONE_DEVICE, Placement


def stack_seeds(trees: list):
    """One pytree with a leading seed axis from K pytrees of the same structure."""
    return jax.tree.map(lambda *xs: jnp.stack(xs), *trees)


def seed_slice(tree, k: int):
    """Seed ``k``'s slice of a pytree stacked on a leading seed axis."""
    return jax.tree.map(lambda x: x[k], tree)


def make_chunk(algo: Algorithm, k_seeds: int, placement: Placement, state, units: int | None = None
               ) -> tuple[Callable, Any]:
    """``(chunk, state)``: the function that advances a state stacked over ``k_seeds`` seeds to
    the next evaluation (``units``: by the shorter chunk ``algo.chunk_of(units)``), and ``state``
    placed on ``placement``'s devices (host or single-device arrays: a fresh state or a restored
    one, saved on any number of devices). Under several devices, call ``chunk`` inside
    ``placement.context()``."""
    fn = algo.chunk if units is None else algo.chunk_of(units)
    if placement.mesh is None:
        return _seed_chunk(algo, k_seeds, fn, units), state
    shardings = placement.state_shardings(state, algo.batch_fields)
    return _seed_chunk(algo, k_seeds, fn, units, placement, shardings), devices.put(state, shardings)


_CHUNKS: OrderedDict = OrderedDict()  # (compile_key, K, units) -> the jitted chunk of one device, the latest few
_CHUNKS_KEPT = 4


def _seed_chunk(algo: Algorithm, k_seeds: int, fn: Callable, units: int | None = None,
                placement: Placement = ONE_DEVICE, shardings=None) -> Callable:
    """``fn`` (``algo.chunk``, or the shorter ``algo.chunk_of(units)``) over K stacked seeds:
    ``jit(vmap(fn))``. One seed runs unbatched: a size-1 vmap lets XLA pick other kernels, whose
    last-bit differences would make a single run differ from the same run made unbatched. On
    several devices: :func:`_mesh_chunk`. On one device an algorithm with a ``compile_key`` gets the
    compiled chunk of the last equal algorithm of this process, if any."""
    if placement.mesh is not None:
        return _mesh_chunk(fn, k_seeds, placement, shardings)
    key = None if algo.compile_key is None else (algo.compile_key, k_seeds, units)
    if key is not None and key in _CHUNKS:
        _CHUNKS.move_to_end(key)
        return _CHUNKS[key]
    chunk = _one_device_chunk(fn, k_seeds)
    if key is not None:
        _CHUNKS[key] = chunk
        while len(_CHUNKS) > _CHUNKS_KEPT:
            _CHUNKS.popitem(last=False)
    return chunk


def _one_device_chunk(fn: Callable, k_seeds: int) -> Callable:
    if k_seeds > 1:
        return jax.jit(jax.vmap(fn))
    one = jax.jit(fn)

    def chunk(state):
        new, metrics = one(seed_slice(state, 0))
        return stack_seeds([new]), stack_seeds([metrics])

    return chunk


def _mesh_chunk(chunk: Callable, k_seeds: int, placement: Placement, shardings) -> Callable:
    """The chunk on a mesh: one program whose stacked state goes in and comes out with
    ``shardings`` (``Placement.state_shardings``) and whose metrics come out replicated; XLA
    partitions everything in between. A ``seeds`` split vmaps with ``spmd_axis_name``."""
    if k_seeds > 1:
        fn = jax.vmap(chunk, spmd_axis_name=devices.SEEDS if placement.mode == "seeds" else None)
    else:
        def fn(state):
            new, metrics = chunk(seed_slice(state, 0))
            return stack_seeds([new]), stack_seeds([metrics])
    jitted = jax.jit(fn, in_shardings=(shardings,), out_shardings=(shardings, devices.replicated(placement.mesh)))
    return lambda state: jitted(devices.put(state, shardings))
