"""A plain-Python alpha-beta minimax written from seed 002's pseudocode and its ``evaluate_window``,
the reference that tests/games/connect_four/test_minimax.py checks :mod:`c4jax.games.connect_four.minimax` against.

It shares no code with the package: a board is a list of 42 ints (row-major, row 0 on top, ``1`` =
the root player, ``-1`` = the opponent, ``0`` = empty), windows are read cell by cell, and the search
is the textbook recursion with alpha-beta cut-offs. The rules it follows are the ones the package's
docstring states: the seed's window scores from the root player's side at the leaves, a four at ply
``p`` worth ``+-(WIN - p)``, a full board 0, children in column order 0..6 and the root's move the
first column of the best value (a strictly greater value replaces the best).
"""

from __future__ import annotations

import math

ROWS, COLS = 6, 7
WIN = 1_000_000
ROOT, OPPONENT, EMPTY = 1, -1, 0


def _windows() -> list[tuple[int, int, int, int]]:
    out = []
    for r in range(ROWS):
        for c in range(COLS):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (-1, 1)):  # horizontal, vertical, both diagonals
                cells = [(r + k * dr, c + k * dc) for k in range(4)]
                if all(0 <= rr < ROWS and 0 <= cc < COLS for rr, cc in cells):
                    out.append(tuple(rr * COLS + cc for rr, cc in cells))
    return out


WINDOWS = _windows()
assert len(WINDOWS) == 69


def evaluate_window(window: list[int], piece: int) -> int:
    """The seed's ``evaluate_window`` (its ``opp_piece`` is the other side's piece)."""
    score = 0
    opp_piece = -piece
    if window.count(piece) == 4:
        score += 100
    elif window.count(piece) == 3 and window.count(EMPTY) == 1:
        score += 5
    elif window.count(piece) == 2 and window.count(EMPTY) == 2:
        score += 2
    if window.count(opp_piece) == 3 and window.count(EMPTY) == 1:
        score -= 4
    return score


# evaluate_window(window, ROOT) of every content of a window, looked up by the window's 4 cells (speed only)
_SCORE = {(a, b, c, d): evaluate_window([a, b, c, d], ROOT)
          for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1) for d in (-1, 0, 1)}
# the windows through each cell (the only ones a move there can complete)
_THROUGH = [[w for w in WINDOWS if i in w] for i in range(ROWS * COLS)]


def score_position(board: list[int], piece: int = ROOT) -> int:
    """The seed's score of ``board`` for ``piece``: evaluate_window summed over all 69 windows."""
    if piece != ROOT:
        return sum(evaluate_window([board[i] for i in w], piece) for w in WINDOWS)
    return sum(_SCORE[board[a], board[b], board[c], board[d]] for a, b, c, d in WINDOWS)


def winning_move(board: list[int], piece: int, cell: int | None = None) -> bool:
    """Whether ``piece`` has four in a row (through ``cell`` only, when given)."""
    return any(all(board[i] == piece for i in w) for w in (WINDOWS if cell is None else _THROUGH[cell]))


def valid_locations(board: list[int]) -> list[int]:
    return [c for c in range(COLS) if board[c] == EMPTY]  # the top cell of the column is free


def drop_cell(board: list[int], col: int) -> int:
    """The cell a stone dropped in ``col`` lands on (the lowest empty one)."""
    for r in range(ROWS - 1, -1, -1):
        if board[r * COLS + col] == EMPTY:
            return r * COLS + col
    raise ValueError(f"column {col} is full")


def drop(board: list[int], col: int, piece: int) -> list[int]:
    child = list(board)
    child[drop_cell(board, col)] = piece
    return child


def minimax(board: list[int], depth: int, alpha: float, beta: float, maximizing: bool,
            ply: int = 0, last: int | None = None) -> tuple[int | None, int]:
    """``(column, value)``: the pseudocode's minimax with alpha-beta cut-offs (the root player
    maximises); ``column`` is None at a leaf. ``last``: the cell of the move that made ``board``
    (None: check every window for a four)."""
    if winning_move(board, ROOT, last):
        return None, WIN - ply
    if winning_move(board, OPPONENT, last):
        return None, -(WIN - ply)
    moves = valid_locations(board)
    if not moves:
        return None, 0
    if depth == 0:
        return None, score_position(board, ROOT)
    best_col, value = None, -math.inf if maximizing else math.inf
    for col in moves:
        cell = drop_cell(board, col)
        child = list(board)
        child[cell] = ROOT if maximizing else OPPONENT
        _, new = minimax(child, depth - 1, alpha, beta, not maximizing, ply + 1, cell)
        if (new > value) if maximizing else (new < value):
            best_col, value = col, new
        if maximizing:
            alpha = max(alpha, value)
        else:
            beta = min(beta, value)
        if alpha >= beta:
            break
    return best_col, value


def best_move(board: list[int], depth: int) -> tuple[int, int]:
    """``(column, value)`` of the root player (``1``) at ``depth`` plies."""
    return minimax(board, depth, -math.inf, math.inf, True)


def column_values(board: list[int], depth: int) -> list[int | None]:
    """The exact value of each column (None for a full one): every child searched with a full window."""
    out = []
    for col in range(COLS):
        if col not in valid_locations(board):
            out.append(None)
            continue
        cell = drop_cell(board, col)
        child = list(board)
        child[cell] = ROOT
        out.append(minimax(child, depth - 1, -math.inf, math.inf, False, 1, cell)[1])
    return out
