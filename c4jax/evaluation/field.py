"""The tournament's default field, read from the shipped checkpoints' metadata without JAX or NumPy
(``c4jax tournament``'s ``--agents`` default, shown by its ``--help``)."""

from __future__ import annotations

from c4jax.agents import shipped
from c4jax.io import metadata

REFERENCE_AGENTS = ("1steplA", "2steplA")


def default_agents() -> tuple[str, ...]:
    """The thesis' tournament field: 1StepLA, 2StepLA and every shipped agent sorted by name (``:sto``
    and ``:det`` for a policy network without search, else its default mode)."""
    out = list(REFERENCE_AGENTS)
    root = shipped.checkpoints_dir()
    for name in sorted(shipped.names(), key=str.lower):
        try:
            description = metadata.read_metadata(root / name, game=None).get("agent", {})
        except metadata.CheckpointError:
            continue
        sampled = description.get("output", "policy") == "policy" and "search" not in description
        out += [f"{name}:sto", f"{name}:det"] if sampled else [name]
    return tuple(out)
