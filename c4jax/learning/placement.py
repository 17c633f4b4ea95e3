"""Where a training run's arrays live: one device (:data:`ONE_DEVICE`), or a mesh of several (``--devices N``).

:func:`plan` splits K = ``--vmap-seeds`` stacked seeds over N devices (``--shard``): ``seeds`` gives
each device K / N whole seeds (every leaf ``P('seeds')``; the default when N divides K); ``batch``
replicates the parameters, optimiser state and keys and splits every batch (the ``batch_fields`` of
the algorithm are ``P(None, 'batch')``; its ``batch_sizes`` must be multiples of N), XLA averaging
the gradients over the devices.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from c4jax.io import devices
from c4jax.learning.algorithm import Algorithm
from c4jax.learning.settings.loop import SHARD_MODES as SHARD_MODES


@dataclass(frozen=True)
class Placement:
    """A run's devices: ``mesh`` is ``None`` on one device."""

    mesh: Mesh | None = None

    @property
    def n(self) -> int:
        return 1 if self.mesh is None else self.mesh.size

    @property
    def mode(self) -> str:
        """``"one"``, ``"batch"`` or ``"seeds"``."""
        return "one" if self.mesh is None else ("seeds" if self.mesh.axis_names == (devices.SEEDS,) else "batch")

    def context(self):
        """``jax.set_mesh(mesh)`` (programs traced inside see the mesh), or nothing on one device."""
        return contextlib.nullcontext() if self.mesh is None else jax.set_mesh(self.mesh)

    def state_shardings(self, state: Any, batch_fields: tuple[str, ...] = ()) -> Any:
        """A pytree like the seed-stacked ``state`` of each leaf's sharding; ``batch_fields``: dotted field
        names (``"buffer.items"``) whose leaves have a batch axis after the seed axis."""
        if self.mesh is None:
            raise ValueError("one device: nothing to shard")
        if self.mode == "seeds":
            return jax.tree.map(lambda _: NamedSharding(self.mesh, PartitionSpec(devices.SEEDS)), state)
        rep = devices.replicated(self.mesh)
        bat = devices.batch_sharding(self.mesh, axis=1)
        out = jax.tree.map(lambda _: rep, state)
        for path in batch_fields:
            out = _map_field(out, path.split("."), lambda sub: jax.tree.map(lambda _: bat, sub))
        return out

    def describe(self) -> str:
        if self.mesh is None:
            return "1 device"
        return f"{devices.describe(self.mesh.devices.flat)}, {self.mode} split"


ONE_DEVICE = Placement()


def _map_field(tree, path: list[str], fn):
    head, rest = path[0], path[1:]
    if not hasattr(tree, head):
        raise AttributeError(f"batch_fields: the state has no field {head!r}")
    sub = getattr(tree, head)
    return tree.replace(**{head: fn(sub) if not rest else _map_field(sub, rest, fn)})


def _fits(algo: Algorithm, n: int, k_seeds: int) -> bool:
    return k_seeds % n == 0 or all(size % n == 0 for size in algo.batch_sizes.values())


def plan(algo: Algorithm, n_devices: int = 0, k_seeds: int = 1, shard: str = "auto") -> Placement:
    """The placement of ``algo``'s K = ``k_seeds`` seeds on ``n_devices`` (0: all, or the most the batch sizes
    allow). ``DeviceError`` for too many devices, or a split N does not divide."""
    if shard not in SHARD_MODES:
        raise ValueError(f"--shard must be one of {SHARD_MODES}, got {shard!r}")
    n = len(devices.select(n_devices))
    if n_devices == 0 and shard == "auto" and jax.process_count() == 1:  # all devices: as many as the batches allow
        n = max(m for m in range(1, n + 1) if _fits(algo, m, k_seeds))
    if n == 1:
        return ONE_DEVICE
    if shard == "auto":
        shard = "seeds" if k_seeds % n == 0 else "batch"
    if shard == "seeds":
        if k_seeds % n:
            raise devices.DeviceError(f"--shard seeds: --vmap-seeds {k_seeds} is not a multiple of --devices {n}")
        return Placement(devices.make_mesh(n, devices.SEEDS))
    devices.check_divisible(dict(algo.batch_sizes), n)
    return Placement(devices.make_mesh(n, devices.BATCH))
