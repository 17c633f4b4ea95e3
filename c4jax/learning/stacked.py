"""K training runs in one program (``--vmap-seeds``): pytrees stacked on a leading seed axis and the jitted
chunk that advances all of them, on one device or a mesh (:mod:`c4jax.learning.placement`)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Hashable

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


def make_chunk(algo: Algorithm, k_seeds: int, placement: Placement, state, units: int | None = None,
               budget: int | None = None) -> tuple[Callable, Any]:
    """``(chunk, state)``: the function advancing ``k_seeds`` stacked seeds to the next evaluation (``units``:
    ``algo.chunk_of(units)``), none of them past ``budget`` updates when ``k_seeds`` > 1 (``algo.capped``), and
    ``state`` placed on ``placement``'s devices (call ``chunk`` inside ``placement.context()``)."""
    capped = algo.capped(budget, units) if k_seeds > 1 and budget is not None else None
    fn = capped if capped is not None else algo.chunk if units is None else algo.chunk_of(units)
    units = units if capped is None else (units, budget)  # the compiled chunk's key
    if placement.mesh is None:
        return _seed_chunk(algo, k_seeds, fn, units), state
    shardings = placement.state_shardings(state, algo.batch_fields)
    return _seed_chunk(algo, k_seeds, fn, units, placement, shardings), devices.put(state, shardings)


_CHUNKS: OrderedDict = OrderedDict()  # (compile_key, K, units) -> the jitted chunk of one device, the latest few
_CHUNKS_KEPT = 4


def _seed_chunk(algo: Algorithm, k_seeds: int, fn: Callable, units: Hashable = None,
                placement: Placement = ONE_DEVICE, shardings=None) -> Callable:
    """``jit(vmap(fn))`` over K stacked seeds; one seed runs unbatched (a size-1 vmap may change the last bits).
    On one device an algorithm with a ``compile_key`` reuses an equal algorithm's compiled chunk of equal
    ``units`` (what besides the ``compile_key`` makes ``fn``)."""
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


def _one_seed(fn: Callable) -> Callable:
    """``fn`` on a state stacked over one seed, unbatched."""
    def chunk(state):
        new, metrics = fn(seed_slice(state, 0))
        return stack_seeds([new]), stack_seeds([metrics])
    return chunk


def _one_device_chunk(fn: Callable, k_seeds: int) -> Callable:
    return jax.jit(jax.vmap(fn)) if k_seeds > 1 else _one_seed(jax.jit(fn))


def _mesh_chunk(chunk: Callable, k_seeds: int, placement: Placement, shardings) -> Callable:
    """The chunk on a mesh: the state in and out with ``shardings``, the metrics replicated."""
    if k_seeds > 1:
        fn = jax.vmap(chunk, spmd_axis_name=devices.SEEDS if placement.mode == "seeds" else None)
    else:
        fn = _one_seed(chunk)
    jitted = jax.jit(fn, in_shardings=(shardings,), out_shardings=(shardings, devices.replicated(placement.mesh)))
    return lambda state: jitted(devices.put(state, shardings))
