"""Connect Four's dataset text format (the kit's ``text_format``), the reference thesis' pairs: per pair 42
characters ``0``/``1``/``2`` for the board, row 0 first (``1`` = the player to move, ``2`` = the opponent),
then the action digit; pairs separated by ``;``. Boards are ``int8[6, 7]``, ``-1`` = the opponent."""

from __future__ import annotations

import numpy as np

from c4jax.games.connect_four.board import COLS, ROWS

CELLS = ROWS * COLS


def format_pairs(observations: np.ndarray, actions: np.ndarray) -> bytes:
    """The text of boards ``[N, 6, 7]`` and their actions ``[N]``."""
    n = len(actions)
    chars = np.empty((n, CELLS + 2), np.uint8)
    flat = np.asarray(observations).reshape(n, CELLS)
    chars[:, :CELLS] = np.where(flat == -1, 2, flat).astype(np.uint8) + ord("0")
    chars[:, CELLS] = np.asarray(actions).astype(np.uint8) + ord("0")
    chars[:, CELLS + 1] = ord(";")
    return chars.tobytes()[:-1] if n else b""


def parse_pairs(data: bytes, where: str) -> tuple[np.ndarray, np.ndarray]:
    """``(boards int8[N, 6, 7], actions int8[N])`` of the text; whitespace around pairs and a trailing
    ``;`` are tolerated. ``ValueError`` starting with ``where`` and naming the pair on a wrong length, a bad
    character or a bad action (the boards are not checked)."""
    pieces = [p.strip() for p in data.split(b";")]
    if pieces and not pieces[-1]:
        pieces.pop()  # a trailing ';' (or an empty file)
    n = len(pieces)
    if n == 0:
        return np.zeros((0, ROWS, COLS), np.int8), np.zeros(0, np.int8)
    lengths = np.fromiter(map(len, pieces), np.int64, count=n)
    bad = lengths != CELLS + 1
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{where}: pair {i} has {lengths[i]} characters, expected {CELLS + 1} "
                         f"(42 board cells + 1 action digit): {pieces[i][:60]!r}")
    chars = np.frombuffer(b"".join(pieces), np.uint8).reshape(n, CELLS + 1)
    cells = chars[:, :CELLS]
    bad_cell = (cells < ord("0")) | (cells > ord("2"))
    if bad_cell.any():
        i, j = np.unravel_index(int(np.argmax(bad_cell)), bad_cell.shape)
        raise ValueError(f"{where}: pair {i} has the bad character {chr(cells[i, j])!r} at board cell {j} "
                         f"(row {j // COLS}, column {j % COLS}); cells must be 0, 1 or 2")
    act = chars[:, CELLS]
    bad_act = (act < ord("0")) | (act > ord("0") + COLS - 1)
    if bad_act.any():
        i = int(np.argmax(bad_act))
        raise ValueError(f"{where}: pair {i} has the bad action {chr(act[i])!r}; actions are digits 0..6")
    digits = cells.astype(np.int8) - ord("0")
    boards = np.where(digits == 2, -1, digits).astype(np.int8).reshape(n, ROWS, COLS)
    return boards, (act - ord("0")).astype(np.int8)
