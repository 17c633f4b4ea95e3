"""The tournament's default field, read from the cards and the shipped checkpoints' metadata without
JAX or NumPy (``c4jax tournament``'s ``--agents`` default, shown by its ``--help``)."""

from __future__ import annotations

from c4jax import games
from c4jax.agents import shipped
from c4jax.io import metadata


def default_agents(game: str) -> tuple[str, ...]:
    """The field of ``game``'s tournament: its card's ``baselines``, then every agent shipped for it sorted
    by name (``:sto`` and ``:det`` for a policy network without search, else its default mode)."""
    out = [shipped.in_game(b, game) for b in games.card_of(game).baselines]
    for name, folder in sorted(shipped.folders(game).items(), key=lambda item: item[0].lower()):
        try:
            description = metadata.read_metadata(folder, game=None).get("agent", {})
        except metadata.CheckpointError:
            continue
        sampled = description.get("output", "policy") == "policy" and "search" not in description
        out += [f"{name}:sto", f"{name}:det"] if sampled else [name]
    return tuple(out)
