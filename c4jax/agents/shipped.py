"""The agents shipped with c4jax: their folder and their names, read without JAX or NumPy (so that a
command's defaults and checks can list them before anything heavy loads)."""

from __future__ import annotations

import importlib.resources
import os
from pathlib import Path

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


def names() -> list[str]:
    """The agents shipped for the default game: the folders of :func:`checkpoints_dir` with a
    ``metadata.json``, sorted."""
    root = checkpoints_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / METADATA_FILE).is_file())


def names_for(game: str) -> list[str]:
    """The agents shipped for another game in ``checkpoints/<game>/``, as ``<game>/<name>``, sorted."""
    root = checkpoints_dir() / game
    if not root.is_dir():
        return []
    return sorted(f"{game}/{p.name}" for p in root.iterdir() if (p / METADATA_FILE).is_file())
