"""Connect Four's dataset text format (the kit's ``text_format``): the reference thesis' pairs.

Per pair 42 characters ``0``/``1``/``2`` for the board, row 0 first, ``1`` = the player to move,
``2`` = the opponent, then the action digit; pairs separated by ``;``. The dataset itself
(generation, splits, ``.npz``) is :mod:`c4jax.learning.dataset`'s.

Boards everywhere are the public encoding of design.md §1: ``int8[6, 7]``, row 0 on top, ``1`` =
the player to move, ``-1`` = the opponent.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from c4jax.games.connect_four.board import COLS, ROWS
from c4jax.games.connect_four.game import GAME
from c4jax.io import atomic
from c4jax.learning.dataset import Dataset, existing_file, validate_rows, group_ids

CELLS = ROWS * COLS



def export_text(dataset: Dataset, path) -> Path:
    """Write the reference text format: per pair 42 chars ``0/1/2`` (row 0 first) + action, ``;``-separated.

    ``1`` = the player to move, ``2`` = the opponent. Groups are not stored (import rebuilds
    them from the boards). Parents are created; returns the path.
    """
    path = Path(path)
    n = len(dataset)
    chars = np.empty((n, CELLS + 2), np.uint8)
    flat = dataset.observations.reshape(n, CELLS)
    chars[:, :CELLS] = np.where(flat == -1, 2, flat).astype(np.uint8) + ord("0")
    chars[:, CELLS] = dataset.actions.astype(np.uint8) + ord("0")
    chars[:, CELLS + 1] = ord(";")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_atomic(path, lambda f: f.write(chars.tobytes()[:-1] if n else b""))
    return path


def import_text(path) -> Dataset:
    """Read the reference text format (see :func:`export_text`) and validate every pair.

    Whitespace around pairs and a trailing ``;`` are tolerated. Each board is grouped with
    its mirror (and with any duplicate of either) when present, else it has its own group;
    group ids follow the order of first appearance. ``ValueError`` naming the path and the
    pair index (from 0) on a wrong length, a bad character, a bad action or an invalid board.
    """
    path = existing_file(path, "dataset text file")
    pieces = [p.strip() for p in path.read_bytes().split(b";")]
    if pieces and not pieces[-1]:
        pieces.pop()  # a trailing ';' (or an empty file)
    n = len(pieces)
    if n == 0:
        return Dataset(np.zeros((0, ROWS, COLS), np.int8), np.zeros(0, np.int8), np.zeros(0, np.int32),
                       {"imported_from": str(path)}, GAME.id)
    lengths = np.fromiter(map(len, pieces), np.int64, count=n)
    bad = lengths != CELLS + 1
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{path}: pair {i} has {lengths[i]} characters, expected {CELLS + 1} "
                         f"(42 board cells + 1 action digit): {pieces[i][:60]!r}")
    chars = np.frombuffer(b"".join(pieces), np.uint8).reshape(n, CELLS + 1)
    cells = chars[:, :CELLS]
    bad_cell = (cells < ord("0")) | (cells > ord("2"))
    if bad_cell.any():
        i, j = np.unravel_index(int(np.argmax(bad_cell)), bad_cell.shape)
        raise ValueError(f"{path}: pair {i} has the bad character {chr(cells[i, j])!r} at board cell {j} "
                         f"(row {j // COLS}, column {j % COLS}); cells must be 0, 1 or 2")
    act = chars[:, CELLS]
    bad_act = (act < ord("0")) | (act > ord("0") + COLS - 1)
    if bad_act.any():
        i = int(np.argmax(bad_act))
        raise ValueError(f"{path}: pair {i} has the bad action {chr(act[i])!r}; actions are digits 0..6")
    digits = cells.astype(np.int8) - ord("0")
    boards = np.where(digits == 2, -1, digits).astype(np.int8).reshape(n, ROWS, COLS)
    actions = (act - ord("0")).astype(np.int8)
    validate_rows(GAME, boards, actions, None, lambda i: f"{path}: pair {i}")
    groups = group_ids(boards, GAME)
    return Dataset(boards, actions, groups, {"imported_from": str(path)}, GAME.id)
