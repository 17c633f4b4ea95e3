"""A plain-Python N-step lookahead, one board at a time, as the thesis' baseline was written: it
plays the moves of ``agents.load("<n>steplA")`` and is timed in Table 5.1."""

from __future__ import annotations

import numpy as np

from c4jax.games.connect_four.board import COLS, LINE_CELLS, ROWS

TIE_ORDER = (3, 2, 4, 1, 5, 0, 6)  # deterministic tie-break: closest to the centre, left first
OWN = {2: 10**2, 3: 10**4, 4: 10**10}
OPP = {2: -1, 3: -(10**6), 4: -(10**8)}


WINDOWS = LINE_CELLS  # the 69 lines, (row, col) cells


def heuristic(b: list[list[int]]) -> int:
    """The window score of ``b`` for the ``1`` stones (windows with one colour and empties only)."""
    score = 0
    for w in WINDOWS:
        vals = [b[r][c] for r, c in w]
        own, opp = vals.count(1), vals.count(-1)
        if opp == 0 and own >= 2:
            score += OWN[own]
        elif own == 0 and opp >= 2:
            score += OPP[opp]
    return score


def _terminal(b: list[list[int]]) -> bool:
    for w in WINDOWS:
        first = b[w[0][0]][w[0][1]]
        if first != 0 and all(b[r][c] == first for r, c in w[1:]):
            return True
    return all(b[0][c] != 0 for c in range(COLS))


def play(b: list[list[int]], col: int, piece: int) -> list[list[int]] | None:
    """``b`` with ``piece`` dropped into column ``col`` (a new board), or ``None`` if it is full."""
    for r in range(ROWS - 1, -1, -1):
        if b[r][col] == 0:
            nb = [row[:] for row in b]
            nb[r][col] = piece
            return nb
    return None


def _minimax(b: list[list[int]], depth: int, maximizing: bool) -> int:
    if depth == 0 or _terminal(b):
        return heuristic(b)
    piece = 1 if maximizing else -1
    values = [_minimax(nb, depth - 1, not maximizing)
              for nb in (play(b, c, piece) for c in range(COLS)) if nb is not None]
    return max(values) if maximizing else min(values)


def root_values(board, n: int) -> list[int | None]:
    """Each column's depth-``n`` minimax value for the player to move (``None``: full column)."""
    b = [[int(x) for x in row] for row in np.asarray(board).reshape(ROWS, COLS)]
    out = []
    for c in range(COLS):
        nb = play(b, c, 1)
        out.append(None if nb is None else _minimax(nb, n - 1, False))
    return out


def act(board, n: int = 1) -> int:
    """The column the deterministic ``n``-step lookahead plays on ``board`` (int8[6, 7], player
    to move = 1, row 0 on top, not finished)."""
    values = root_values(board, n)
    legal = [v for v in values if v is not None]
    if not legal:
        raise ValueError("the board has no legal move")
    best = max(legal)
    return next(c for c in TIE_ORDER if values[c] == best)
