"""Pictures of Checkers positions (:mod:`c4jax.games.drawing`): :func:`notation.render`'s diagram with
each dark square's PDN number, kings crowned and the last move's squares framed."""

from __future__ import annotations

import re

import jax

from c4jax.games import drawing
from c4jax.games.checkers import env, notation

SQUARE = 50  # pixels per square
MARGIN = 10
WIDTH = 8 * SQUARE + 2 * MARGIN
BOARD_BOTTOM = MARGIN + 8 * SQUARE
HEIGHT = BOARD_BOTTOM + 56  # the status line and a caption
LIGHT, DARK, MARKED = "#efdfc0", "#8f6a44", "#f0c419"
PIECE = {"black": ("#262626", "#000000", "#5c5c5c"), "white": ("#f7f3e8", "#7d7363", "#c9bfa8")}  # fill, edge, rim
CROWN = "#e0b33a"
# A crown around the centre of a piece, in units of the piece's radius.
_CROWN = ((-0.55, 0.25), (-0.55, -0.3), (-0.27, -0.05), (0.0, -0.42), (0.27, -0.05), (0.55, -0.3), (0.55, 0.25))


def move_squares(move: str) -> list[int]:
    """The PDN squares a move's name passes through: ``"11-15"`` -> [11, 15], ``"15x22x29"`` ->
    [15, 22, 29]; a ``ValueError`` for anything else."""
    if not isinstance(move, str) or not re.fullmatch(r"\s*\d{1,2}(\s*[-x]\s*\d{1,2})+\s*", move):
        raise ValueError(f"{move!r} is not a move in PDN ('11-15', '15x22', '15x22x29')")
    squares = [int(n) for n in re.findall(r"\d+", move)]
    for n in squares:
        if not 1 <= n <= 32:
            raise ValueError(f"{move!r}: square {n} is not in 1..32")
    return squares


def _corner(number: int) -> tuple[float, float]:
    row, col = notation.diagram_cell(number)
    return MARGIN + col * SQUARE, MARGIN + row * SQUARE


def scene(state: env.State, last_move: str | None = None, caption: str | None = None) -> drawing.Scene:
    """The shapes of one (unbatched) state: board, square numbers, pieces, the squares of the last
    move ``last_move`` (its PDN name, ``"11-15"`` or ``"15x22x29"``) framed, the status (who is
    to move, or the result) and ``caption`` under it."""
    state = jax.device_get(state)
    pieces = notation.absolute_board(state)
    marked = set(move_squares(last_move)) if last_move is not None else set()
    shapes: list = [drawing.Rect(MARGIN, MARGIN, 8 * SQUARE, 8 * SQUARE, LIGHT, cls="board")]
    for number in range(1, 33):
        x, y = _corner(number)
        shapes.append(drawing.Rect(x, y, SQUARE, SQUARE, DARK, cls="square", data=(("square", str(number)),)))
        shapes.append(drawing.Text(x + 4, y + 12, str(number), size=10, fill="#e9dcc3", anchor="start",
                                   cls="square-number"))
    for number in sorted(marked):  # framed, over the board (which stays the same in every picture)
        x, y = _corner(number)
        shapes.append(drawing.Rect(x + 2, y + 2, SQUARE - 4, SQUARE - 4, "none", stroke=MARKED, stroke_width=4,
                                   cls="last-move", data=(("square", str(number)),)))
    radius = SQUARE * 0.38
    for colour in notation.PLAYER_NAMES:
        kings = set(pieces[colour + "_kings"])
        fill, edge, rim = PIECE[colour]
        for number in pieces[colour]:
            x, y = _corner(number)
            cx, cy = x + SQUARE / 2, y + SQUARE / 2
            kind = "king" if number in kings else "man"
            shapes.append(drawing.Circle(cx, cy, radius, fill, stroke=edge, stroke_width=2,
                                         cls=f"piece {colour} {kind}", data=(("square", str(number)),)))
            shapes.append(drawing.Circle(cx, cy, radius * 0.7, "none", stroke=rim, stroke_width=1.5, cls="rim"))
            if kind == "king":
                shapes.append(drawing.Polygon(tuple((cx + radius * px, cy + radius * py) for px, py in _CROWN),
                                              CROWN, cls="crown"))
    status = notation.status_text(state)
    shapes.append(drawing.Text(WIDTH / 2, BOARD_BOTTOM + 24, status, size=17, bold=True, cls="status"))
    if caption:
        shapes.append(drawing.Text(WIDTH / 2, BOARD_BOTTOM + 46, caption, size=14, cls="caption"))
    return drawing.Scene(WIDTH, HEIGHT, tuple(shapes), title=f"Checkers: {status}",
                         data=(("game", "checkers"), ("status", status), ("fen", notation.to_fen(state))))


def render_svg(state: env.State, last_move: str | None = None, caption: str | None = None) -> str:
    """One (unbatched) state as a standalone SVG document (:func:`scene`)."""
    return drawing.to_svg(scene(state, last_move, caption))
