"""Devices: a one-axis mesh that shards batches of games over several devices (:func:`make_mesh`,
:func:`shard_batch`, :func:`split_rows`), and multi-process start-up (:func:`initialize`,
:func:`to_host`). Placement is JAX's own (``NamedSharding``s, XLA's SPMD partitioning); every
function here is a no-op or a plain call on a single device.
"""

from __future__ import annotations

from typing import Any, Sequence

import jax
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec

BATCH = "batch"  # mesh axis that splits games, buffer rows and minibatches
SEEDS = "seeds"  # mesh axis that splits the vmapped seeds of --vmap-seeds


class DeviceError(ValueError):
    """A run cannot be placed on the devices asked for (too many, or batches they do not divide)."""


def initialize(coordinator_address: str, num_processes: int, process_id: int) -> None:
    """Join a multi-process run (``jax.distributed.initialize``, gloo on CPU) before any JAX computation;
    ``ValueError`` for bad ids or a missing address, ``RuntimeError`` when joining fails."""
    if num_processes < 1 or not 0 <= process_id < num_processes:
        raise ValueError(f"--process-id must be in 0..{num_processes - 1} (--num-processes {num_processes}), "
                         f"got {process_id}")
    if not coordinator_address:
        raise ValueError("--num-processes > 1 needs --coordinator-address HOST:PORT (process 0's host)")
    try:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")  # CPU collectives between processes
        jax.distributed.initialize(coordinator_address=coordinator_address, num_processes=num_processes,
                                   process_id=process_id)
    except RuntimeError as e:
        raise RuntimeError(f"could not join the {num_processes}-process run at {coordinator_address}: {e}") from e


def is_main_process() -> bool:
    """Process 0 of a multi-process run (the only one that writes files); always true otherwise."""
    return jax.process_index() == 0


def select(n: int = 0) -> list:
    """The first ``n`` devices of this run (``0``: all); :class:`DeviceError` when ``n`` is out of range."""
    available = jax.devices()
    if n < 0:
        raise DeviceError(f"--devices must be >= 0 (0 = all), got {n}")
    if n > len(available):
        raise DeviceError(f"--devices {n}: only {len(available)} {available[0].platform.upper()} device(s) available "
                         f"({', '.join(str(d) for d in available)})")
    return available[: n or len(available)]


def make_mesh(n: int = 0, axis: str = BATCH) -> Mesh:
    """A one-axis ``Auto`` mesh (named ``axis``) over the first ``n`` devices (0 = all)."""
    if axis not in (BATCH, SEEDS):
        raise ValueError(f"mesh axis must be {BATCH!r} or {SEEDS!r}, got {axis!r}")
    return Mesh(np.array(select(n)), (axis,), axis_types=(AxisType.Auto,))


def replicated(mesh: Mesh) -> NamedSharding:
    """Every device holds the whole array (parameters, optimiser state, counters, keys)."""
    return NamedSharding(mesh, PartitionSpec())


def batch_sharding(mesh: Mesh, axis: int = 0) -> NamedSharding:
    """Axis ``axis`` of an array split over the mesh's axis, the others whole."""
    return NamedSharding(mesh, PartitionSpec(*([None] * axis), mesh.axis_names[0]))


def batch_devices() -> int:
    """The size of the current mesh's :data:`BATCH` axis (1: none)."""
    mesh = jax.sharding.get_abstract_mesh()
    if mesh.empty or BATCH not in mesh.axis_names:
        return 1
    return int(dict(zip(mesh.axis_names, mesh.axis_sizes))[BATCH])


def shard_batch(tree: Any, axis: int = 0) -> Any:
    """``tree`` with axis ``axis`` of every array leaf split over the current mesh's :data:`BATCH`
    axis (in jitted code); a leaf whose axis the devices do not divide is left as it is. The
    values are the same; only the layout differs."""
    n = batch_devices()
    if n == 1:
        return tree
    spec = PartitionSpec(*([None] * axis), BATCH)

    def one(x):
        if not hasattr(x, "shape") or x.ndim <= axis or x.shape[axis] % n:
            return x
        return jax.lax.with_sharding_constraint(x, spec)

    return jax.tree.map(one, tree)


def split_rows(fn, shared: Any, rows: Any, fill: Any = None) -> Any:
    """``fn(shared, rows)`` with ``rows`` (leading axis R) split over the N devices of the current
    mesh's :data:`BATCH` axis: device ``d`` takes rows ``d, d + N, ...`` (padded with row 0, or
    ``fill``, whose outputs are dropped). ``fn`` must give each output row from its own input row
    alone; then the result is that of one call on all the rows."""
    n = batch_devices()
    if n == 1:
        return fn(shared, rows)
    size = jax.tree.leaves(rows)[0].shape[0]
    per = -(-size // n)
    extra = per * n - size
    if extra:
        fill = jax.tree.map(lambda x: x[:1], rows) if fill is None else fill
        rows = jax.tree.map(lambda x, f: jax.numpy.concatenate([x, jax.numpy.broadcast_to(f, (extra,) + x.shape[1:])]),
                            rows, fill)
    order = np.arange(per * n).reshape(per, n).T.reshape(-1)  # device d's rows d, d + n, ... side by side
    split = jax.shard_map(fn, in_specs=(PartitionSpec(), PartitionSpec(BATCH)), out_specs=PartitionSpec(BATCH),
                          check_vma=False)(shared, jax.tree.map(lambda x: x[order], rows))
    return jax.tree.map(lambda y: y[np.argsort(order)][:size], split)


def check_divisible(sizes: dict[str, int], n: int, what: str = "devices") -> None:
    """A :class:`DeviceError` naming every batch size (``{flag: value}``) that ``n`` does not divide."""
    bad = [f"{name} {size}" for name, size in sizes.items() if size % n]
    if bad:
        raise DeviceError(f"--devices {n}: the batch is split over {n} {what}, so each of these must be a "
                         f"multiple of {n}: {', '.join(bad)} (or choose another --devices)")


def put(tree: Any, shardings: Any) -> Any:
    """``jax.device_put(tree, shardings)``, also onto a mesh spanning other processes' devices."""
    if all(s.is_fully_addressable for s in jax.tree.leaves(shardings)):
        return jax.device_put(tree, shardings)
    return jax.tree.map(_put_global, tree, shardings)


def _put_global(x, sharding):
    if hasattr(x, "dtype") and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        return jax.random.wrap_key_data(_put_global(jax.random.key_data(x), sharding), impl=jax.random.key_impl(x))
    if getattr(x, "is_fully_addressable", True):  # this process' value (the same on every process)
        return jax.device_put(np.asarray(jax.device_get(x)), sharding)
    if x.sharding == sharding:  # already an array of the whole run, laid out as asked
        return x
    return jax.jit(lambda a: a, out_shardings=sharding)(x)  # device_put cannot move it: a program can


def to_host(tree: Any) -> Any:
    """``jax.device_get(tree)``, also for arrays spread over the devices of several processes
    (gathered on every process: a collective, so every process must call it)."""
    leaves = jax.tree.leaves(tree)
    if all(getattr(x, "is_fully_addressable", True) for x in leaves):
        return jax.device_get(tree)
    from jax.experimental import multihost_utils

    return jax.device_get(multihost_utils.process_allgather(tree, tiled=True))


def describe(devices: Sequence) -> str:
    """``"4 x cpu"`` and the like, for logs and tables."""
    kinds = sorted({getattr(d, "device_kind", d.platform) for d in devices})
    return f"{len(devices)} x {', '.join(kinds)}"
