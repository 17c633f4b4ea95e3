"""The public board (``int8[6, 7]``, row 0 on top, 1 = player to move): its lines, legal columns, mirror
image, and host-side validation (:func:`check_boards`, ``ValueError`` saying what is wrong)."""

from __future__ import annotations

import numpy as np
from jax import Array

ROWS, COLS = 6, 7


def _lines() -> np.ndarray:
    """int[69, 4]: flat indices (row-major, row 0 on top) of every four-cell line."""
    lines = []
    for r in range(ROWS):
        for c in range(COLS):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(r + k * dr, c + k * dc) for k in range(4)]
                if all(0 <= rr < ROWS and 0 <= cc < COLS for rr, cc in cells):
                    lines.append([rr * COLS + cc for rr, cc in cells])
    return np.array(lines)


LINES = _lines()  # the 69 four-cell lines
LINE_CELLS = [tuple(divmod(int(i), COLS) for i in line) for line in LINES]  # the same lines as (row, col) cells


def legal_mask(boards: Array) -> Array:
    """bool[B, 7]: columns whose top cell (row 0) is empty."""
    return boards[..., 0, :] == 0


def mirror_boards(boards: Array) -> Array:
    """Boards flipped left-right (column c <-> 6 - c)."""
    return boards[..., ::-1]


def first_player_board(board) -> np.ndarray:
    """int8[6, 7]: a public board in fixed colours, ``1`` the first player's stones and ``-1`` the
    second player's (the stone counts say who is to move: the first player when they are equal)."""
    arr = np.asarray(board, np.int8)
    first_to_move = (arr == 1).sum() == (arr == -1).sum()
    return arr if first_to_move else -arr


def four_cells(board) -> list[tuple[int, int]]:
    """The ``(row, col)`` cells of every four in a row on a public board, sorted."""
    flat = np.asarray(board).reshape(-1)
    cells = set()
    for line, line_cells in zip(LINES, LINE_CELLS):
        if flat[line[0]] != 0 and (flat[line] == flat[line[0]]).all():
            cells.update(line_cells)
    return sorted(cells)


def check_boards(boards, *, batched: bool, allow_finished: bool = True) -> np.ndarray:
    """``boards`` (``[6, 7]``, or ``[B, 6, 7]`` when ``batched``, integers in {-1, 0, 1}) validated,
    as ``np.int8``. ``ValueError`` naming the board index: wrong shape or dtype, values outside {-1, 0, 1},
    floating stones, stone counts no game reaches, a four for the player to move, or (unless
    ``allow_finished``) a finished game."""
    arr = np.asarray(boards)
    want = "[B, 6, 7]" if batched else "[6, 7]"
    ndim = 3 if batched else 2
    if arr.ndim != ndim or arr.shape[-2:] != (ROWS, COLS):
        raise ValueError(f"board{'s' if batched else ''} must have shape {want}, got {arr.shape}")
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"boards must hold integers (int8 preferred), got dtype {arr.dtype}")
    if not np.isin(arr, (-1, 0, 1)).all():
        bad = sorted(set(np.unique(arr).tolist()) - {-1, 0, 1})
        raise ValueError(f"board values must be -1, 0 or 1, found {bad[:5]}")
    arr = arr.astype(np.int8).reshape((-1, ROWS, COLS))
    filled = arr != 0
    # Gravity: a stone must rest on the bottom row or on another stone.
    floating = filled[:, :-1, :] & ~filled[:, 1:, :]
    for name, bad in (
        ("has a floating stone (an empty cell below a stone)", floating.any(axis=(1, 2))),
        (
            "has impossible stone counts: the player to move must have as many stones as "
            "the opponent, or one fewer",
            ~np.isin((arr == -1).sum(axis=(1, 2)) - (arr == 1).sum(axis=(1, 2)), (0, 1)),
        ),
    ):
        _raise_first(bad, name, batched)
    flat = arr.reshape(-1, ROWS * COLS)
    cur_four = (flat[:, LINES] == 1).all(axis=-1).any(axis=-1)
    opp_four = (flat[:, LINES] == -1).all(axis=-1).any(axis=-1)
    _raise_first(cur_four, "has four in a row for the player to move, which no game reaches "
                 "(the game ended on that player's own move)", batched)
    if not allow_finished:
        _raise_first(opp_four, "is a finished game (the opponent has four in a row)", batched)
        _raise_first(filled.all(axis=(1, 2)), "is a finished game (the board is full)", batched)
    return arr if batched else arr[0]


def _raise_first(bad: np.ndarray, what: str, batched: bool) -> None:
    if bad.any():
        i = int(np.argmax(bad))
        where = f"board {i}" if batched else "board"
        raise ValueError(f"{where} {what}")


def playable(boards) -> tuple[np.ndarray, np.ndarray]:
    """``(boards, finished)`` of concrete boards ``[B, 6, 7]``: validated (:func:`check_boards`), every
    finished game replaced by the empty board, and ``bool[B]``, which ones were finished."""
    arr = check_boards(boards, batched=True, allow_finished=True)
    flat = arr.reshape(-1, ROWS * COLS)
    finished = (flat[:, LINES] == -1).all(axis=-1).any(axis=-1) | (flat != 0).all(axis=-1)
    if finished.any():
        arr = np.where(finished[:, None, None], np.int8(0), arr)
    return arr, finished
