"""Where a board's cells are, as plain data: the geometry a game's view may give :class:`~c4jax.games.viewbase.GridView`
for a board that is not a grid of squares (hexagons, points joined by lines), which the play page, ``watch``'s
pictures and the text diagram then draw. No geometry means a grid of squares."""

from __future__ import annotations

import math
from dataclasses import dataclass

SHAPES = ("square", "hex", "circle")
Cell = tuple[int, int]  # (row, col) of the game's [H, W] observation grid
Point = tuple[float, float]


@dataclass(frozen=True)
class Geometry:
    """A board in *board units* (one cell is one unit across), inside ``[0, width] x [0, height]``, ``y`` down.

    ``cells``: per cell ``(row, col)`` of the observation grid, the centre ``(x, y)`` of the cell drawn there
    (a grid cell not listed is no cell of the board: it is not drawn and its action is never legal);
    ``shape``: every cell's outline: ``"square"`` (side 1), ``"hex"`` (pointy-top, 1 across its flat sides) or
    ``"circle"`` (diameter 0.8, for points joined by links); ``links``: pairs of cells joined by a line between
    their centres (a graph board's adjacency); ``sides``: ``(player, (x0, y0), (x1, y1))``, a stretch of the
    border that belongs to ``player`` (0 or 1), drawn in that player's colour (e.g. Hex's sides to connect).
    ``ValueError`` for an unknown shape, a link to a cell that is not on the board or a side of no player."""

    cells: dict[Cell, Point]
    width: float
    height: float
    shape: str = "square"
    links: tuple[tuple[Cell, Cell], ...] = ()
    sides: tuple[tuple[int, Point, Point], ...] = ()

    def __post_init__(self):
        if self.shape not in SHAPES:
            raise ValueError(f"cell shape {self.shape!r} is none of {', '.join(SHAPES)}")
        for a, b in self.links:
            if a not in self.cells or b not in self.cells:
                raise ValueError(f"link {a}-{b} joins a cell that is not on the board")
        for side in self.sides:
            if side[0] not in (0, 1):
                raise ValueError(f"side {side} belongs to player {side[0]}, not 0 or 1")

    def outline(self, cell: Cell, unit: float = 1.0) -> tuple[Point, ...]:
        """The corners of a ``"hex"`` or ``"square"`` cell's outline, scaled by ``unit``."""
        x, y = self.cells[cell]
        if self.shape == "hex":
            r = 1 / math.sqrt(3)
            corners = [(math.cos(math.radians(a)) * r, math.sin(math.radians(a)) * r) for a in range(-90, 270, 60)]
        else:
            corners = [(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)]
        return tuple(((x + dx) * unit, (y + dy) * unit) for dx, dy in corners)

    def json(self) -> dict:
        """The page's form (``PAGE["geometry"]``): ``width``, ``height``, ``shape``, ``cells`` (each
        ``{"cell": [row, col], "x", "y"}``), ``links`` (``[[row, col], [row, col]]``) and ``sides`` (each
        ``{"player", "from": [x, y], "to": [x, y]}``), numbers rounded to 4 decimals."""
        n = lambda v: round(float(v), 4)  # noqa: E731
        return {"width": n(self.width), "height": n(self.height), "shape": self.shape,
                "cells": [{"cell": list(c), "x": n(x), "y": n(y)} for c, (x, y) in self.cells.items()],
                "links": [[list(a), list(b)] for a, b in self.links],
                "sides": [{"player": p, "from": [n(a[0]), n(a[1])], "to": [n(b[0]), n(b[1])]} for p, a, b in self.sides]}


def hexes(rows: int, cols: int, sides: bool = True) -> Geometry:
    """A Hex board: ``rows`` x ``cols`` hexagons in a rhombus, each row half a cell right of the one above; cell
    ``(r, c)`` touches ``(r, c±1)``, ``(r±1, c)``, ``(r-1, c+1)`` and ``(r+1, c-1)`` (its ``links``). With
    ``sides``, player 0 owns the top and bottom sides and player 1 the left and right ones."""
    margin, r, dy = 0.25, 1 / math.sqrt(3), math.sqrt(3) / 2
    cells = {(i, j): (margin + 0.5 + j + i / 2, margin + r + i * dy) for i in range(rows) for j in range(cols)}
    steps = ((0, 1), (1, 0), (1, -1))
    links = tuple(((i, j), (i + a, j + b)) for (i, j) in cells for a, b in steps if (i + a, j + b) in cells)
    width, height = 2 * margin + cols + (rows - 1) / 2, 2 * margin + 2 * r + (rows - 1) * dy
    x, y = lambda c: cells[c][0], lambda c: cells[c][1]  # noqa: E731
    first, last = (0, 0), (rows - 1, cols - 1)
    top_right, bottom_left = (0, cols - 1), (rows - 1, 0)
    edges = ((0, (x(first) - 0.5, margin / 2), (x(top_right) + 0.5, margin / 2)),
             (0, (x(bottom_left) - 0.5, height - margin / 2), (x(last) + 0.5, height - margin / 2)),
             (1, (x(first) - 0.5 - margin / 2, y(first)), (x(bottom_left) - 0.5 - margin / 2, y(bottom_left))),
             (1, (x(top_right) + 0.5 + margin / 2, y(top_right)), (x(last) + 0.5 + margin / 2, y(last))))
    return Geometry(cells, width, height, "hex", links, edges if sides else ())
