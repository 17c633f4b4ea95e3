"""Every CPU core as a JAX device (``XLA_FLAGS=--xla_force_host_platform_device_count=N``), for the
programs whose independent games then run on N cores together (design.md §9, "Every core").

The flag is read when JAX starts its CPU backend, so :func:`use_every_core` must run before ``jax``
is imported; this module imports no JAX. It affects only the CPU backend.
"""

from __future__ import annotations

import os
import sys
from typing import MutableMapping

FLAG = "--xla_force_host_platform_device_count"


def cores() -> int:
    """The CPU cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def use_every_core(environ: MutableMapping[str, str] | None = None) -> int:
    """Add :data:`FLAG` ``= cores()`` to ``XLA_FLAGS`` in ``environ`` (default: this process'), unless it
    names a count already or ``jax`` is imported. Returns the count set, or 0."""
    env = os.environ if environ is None else environ
    flags = env.get("XLA_FLAGS", "")
    if FLAG in flags or (environ is None and "jax" in sys.modules):
        return 0
    n = cores()
    env["XLA_FLAGS"] = f"{flags} {FLAG}={n}".strip()
    return n
