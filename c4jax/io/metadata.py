"""A checkpoint's files as plain data: the names in its directory, its format version, and reading
its ``metadata.json`` (:mod:`c4jax.io.checkpoint` writes and restores checkpoints). Importing this
module imports neither JAX nor NumPy, so that commands can list and check checkpoints before
anything heavy loads."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

FORMAT_VERSION = 1
METADATA_FILE = "metadata.json"
PREVIOUS_FILE = "previous.json"
STATE_PREFIX = "state-"


class CheckpointError(ValueError):
    """A checkpoint directory is missing, not a checkpoint, or unreadable."""


def read_metadata(directory: str | os.PathLike, name: str = METADATA_FILE, *, game: str | None = None) -> dict:
    """The metadata of a checkpoint (``name``: the file, ``previous.json`` for the one before);
    ``CheckpointError`` naming the path if it is not one, or if it does not name the game ``game``
    (a game id, :data:`c4jax.games.GAMES`; ``None``: any game or none, as the agent loaders read
    the game from the checkpoint)."""
    directory = Path(directory)
    if not directory.exists():
        raise CheckpointError(f"checkpoint {str(directory)!r} does not exist")
    if not directory.is_dir():
        raise CheckpointError(f"checkpoint {str(directory)!r} is not a directory")
    meta_path = directory / name
    if not meta_path.is_file():
        raise CheckpointError(
            f"{str(directory)!r} is not a c4jax checkpoint: it has no {name}"
        )
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"checkpoint {str(directory)!r}: unreadable {name}: {e}") from e
    if not isinstance(meta, dict) or not isinstance(meta.get("format_version"), int):
        raise CheckpointError(f"checkpoint {str(directory)!r}: {name} has no format_version")
    if game is not None and meta.get("game") != game:
        raise CheckpointError(f"checkpoint {str(directory)!r} is of the game {meta.get('game')!r}, not {game!r}")
    if meta["format_version"] > FORMAT_VERSION:
        raise CheckpointError(
            f"checkpoint {str(directory)!r} has format version {meta['format_version']}; this c4jax "
            f"reads up to {FORMAT_VERSION}: upgrade c4jax"
        )
    state_dir = meta.get("state_dir")
    if not isinstance(state_dir, str) or not state_dir.startswith(STATE_PREFIX) or "/" in state_dir \
            or not (directory / state_dir).is_dir():
        raise CheckpointError(f"checkpoint {str(directory)!r} is incomplete: no state directory {state_dir!r}")
    return meta


def remove(directory: str | os.PathLike) -> None:
    """Delete the checkpoint directory ``directory``, its metadata first."""
    directory = Path(directory)
    for name in (METADATA_FILE, PREVIOUS_FILE):
        (directory / name).unlink(missing_ok=True)
    shutil.rmtree(directory, ignore_errors=True)


def exists(directory: str | os.PathLike) -> bool:
    """Whether ``directory`` holds a committed checkpoint or a kept previous one (it may still be damaged)."""
    directory = Path(directory)
    return (directory / METADATA_FILE).is_file() or (directory / PREVIOUS_FILE).is_file()


