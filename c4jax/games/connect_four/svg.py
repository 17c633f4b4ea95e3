"""Pictures of Connect Four positions (:mod:`c4jax.games.drawing`), in the play UI's fixed colours:
first player red, second yellow, column numbers 0-6 on top, a dot on the last move, rings on a four."""

from __future__ import annotations

import jax
import numpy as np

from c4jax.games import drawing
from c4jax.games.connect_four import env
from c4jax.games.connect_four.board import first_player_board, four_cells

CELL = 60  # pixels per cell
MARGIN = 10
TOP = 28  # room for the column numbers
WIDTH = env.COLS * CELL + 2 * MARGIN
BOARD_BOTTOM = TOP + env.ROWS * CELL
HEIGHT = BOARD_BOTTOM + 56  # the status line and a caption
PLATE, HOLE = "#2457c5", drawing.BACKGROUND
COLOURS = ("#e0312f", "#f5c518")  # the first player's stones, the second player's
RIMS = ("#a8201e", "#b8920c")
COLOUR_NAMES = ("red", "yellow")


def _centre(row: int, col: int) -> tuple[float, float]:
    return MARGIN + col * CELL + CELL / 2, TOP + row * CELL + CELL / 2


def scene(state: env.EnvState, last_move: int | None = None, caption: str | None = None) -> drawing.Scene:
    """The shapes of one state: board, stones, ``last_move`` (a column) marked, any four ringed, the
    status and ``caption``."""
    state = jax.device_get(state)
    board = first_player_board(np.asarray(env.observe(state)))
    if last_move is not None and not (isinstance(last_move, (int, np.integer)) and 0 <= last_move < env.COLS):
        raise ValueError(f"last_move must be a column 0..{env.COLS - 1}, got {last_move!r}")
    shapes: list = [drawing.Text(_centre(0, c)[0], TOP - 9, str(c), size=15, cls="column-number")
                    for c in range(env.COLS)]
    shapes.append(drawing.Rect(MARGIN, TOP, env.COLS * CELL, env.ROWS * CELL, PLATE, cls="plate"))
    for r in range(env.ROWS):
        for c in range(env.COLS):
            x, y = _centre(r, c)
            v = int(board[r, c])
            where = (("row", str(r)), ("col", str(c)))
            if v == 0:
                shapes.append(drawing.Circle(x, y, CELL * 0.4, HOLE, cls="hole", data=where))
            else:
                player = 0 if v == 1 else 1
                shapes.append(drawing.Circle(x, y, CELL * 0.4, COLOURS[player], stroke=RIMS[player], stroke_width=2,
                                             cls=f"stone {env.STONES[player].lower()}", data=where))
    if last_move is not None:
        filled = np.flatnonzero(board[:, last_move])
        if filled.size:
            x, y = _centre(int(filled[0]), int(last_move))
            shapes.append(drawing.Circle(x, y, 7, "#ffffff", cls="last-move"))
    for r, c in four_cells(board):
        x, y = _centre(r, c)
        shapes.append(drawing.Circle(x, y, CELL * 0.3, "none", stroke="#ffffff", stroke_width=4, cls="four"))
    status = env.status_text(state, names=COLOUR_NAMES)
    shapes.append(drawing.Text(WIDTH / 2, BOARD_BOTTOM + 24, status, size=17, bold=True, cls="status"))
    if caption:
        shapes.append(drawing.Text(WIDTH / 2, BOARD_BOTTOM + 46, caption, size=14, cls="caption"))
    return drawing.Scene(WIDTH, HEIGHT, tuple(shapes), title=f"Connect Four: {status}",
                         data=(("game", "connect_four"), ("status", status)))


def render_svg(state: env.EnvState, last_move: int | None = None, caption: str | None = None) -> str:
    """One (unbatched) state as a standalone SVG document (:func:`scene`)."""
    return drawing.to_svg(scene(state, last_move, caption))
