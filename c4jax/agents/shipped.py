"""The agents shipped with c4jax: their folder and their names, read without JAX or NumPy (so that a
command's defaults and checks can list them before anything heavy loads)."""

from __future__ import annotations

import importlib.resources
import os
from pathlib import Path

from c4jax.games import DEFAULT, subfolder
from c4jax.io.metadata import METADATA_FILE


def checkpoints_dir() -> Path:
    """Where shipped agents live: ``$C4JAX_CHECKPOINTS``, else the package data ``c4jax/checkpoints/``
    (``RuntimeError`` for a zipped install)."""
    if "C4JAX_CHECKPOINTS" in os.environ:
        return Path(os.environ["C4JAX_CHECKPOINTS"])
    shipped = importlib.resources.files("c4jax") / "checkpoints"
    if not isinstance(shipped, Path):  # a zipped install: Orbax reads directories of real files
        raise RuntimeError(f"the shipped checkpoints are not on a file system ({shipped!r}); install c4jax "
                           "unzipped or set C4JAX_CHECKPOINTS to a folder of checkpoints")
    return shipped


def names(game: str) -> list[str]:
    """The agents shipped for ``game`` by their ``agents.load`` names, sorted (:func:`folders`)."""
    return sorted(folders(game))


def folders(game: str) -> dict[str, Path]:
    """The agents shipped for ``game``: each one's ``agents.load`` name (:func:`in_game`) -> its folder, a
    folder of :func:`folder_of` ``game`` with a ``metadata.json``."""
    root = folder_of(game)
    if not root.is_dir():
        return {}
    return {in_game(p.name, game): p for p in root.iterdir() if (p / METADATA_FILE).is_file()}


def folder_of(game: str) -> Path:
    """Where ``game``'s agents are shipped: :func:`checkpoints_dir` for the default game, else its
    ``<game>/`` subfolder."""
    return checkpoints_dir() / subfolder(game)


def in_game(name: str, game: str) -> str:
    """``name`` on the default game or when it names its game already, else ``<game>/<name>``."""
    return name if game == DEFAULT or name.lower().startswith(f"{game}/") else f"{game}/{name}"
