"""32-square Checkers bitboards: one uint32 word per set of squares (design.md "Checkers").

Squares are numbered in the **canonical frame** of the player to move: square ``q`` (bit ``q``) is on row
``r = q // 4`` (row 0 on top, the mover's promotion row) and column ``c = 2 * (q % 4) + (1 if r is even
else 0)``. The other player's view maps ``q`` to ``31 - q`` (:func:`rotate`). Directions: 0 up-left, 1
up-right, 2 down-left, 3 down-right; a diagonal step is a shift by 4 or by 3 / 5 depending on the row's
parity (:func:`shift`). Elementwise on uint32 arrays of any batch shape."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import Array

NUM_SQUARES = 32
NUM_DIRECTIONS = 4
UP_LEFT, UP_RIGHT, DOWN_LEFT, DOWN_RIGHT = range(NUM_DIRECTIONS)
OPPOSITE = (DOWN_RIGHT, DOWN_LEFT, UP_RIGHT, UP_LEFT)  # the direction back

# Constant masks as NumPy uint32 scalars: importing this module starts no JAX backend.
_U = np.uint32
EVEN_ROWS = _U(0x0F0F0F0F)  # rows 0, 2, 4, 6
ODD_ROWS = _U(0xF0F0F0F0)  # rows 1, 3, 5, 7
EVEN_RIGHT = _U(0x08080808)  # last square of an even row (column 7)
ODD_LEFT = _U(0x10101010)  # first square of an odd row (column 0)
TOP_ROW = _U(0x0000000F)  # row 0: the mover's promotion row
ALL = _U(0xFFFFFFFF)


def row_col(q: int) -> tuple[int, int]:
    """(row, column) on the 8x8 board of canonical square ``q`` (row 0 on top)."""
    r = q // 4
    return r, 2 * (q % 4) + (1 if r % 2 == 0 else 0)


def square_at(r: int, c: int) -> int | None:
    """Canonical square at (row, column), or None for a light square or off the board."""
    if not (0 <= r < 8 and 0 <= c < 8) or (r + c) % 2 == 0:
        return None
    return 4 * r + c // 2


def shift(b: Array, d: int) -> Array:
    """Every piece of ``b`` moved one square in direction ``d`` (pieces that would leave the
    board disappear)."""
    if d == UP_LEFT:
        return ((b & EVEN_ROWS) >> 4) | ((b & (ODD_ROWS & ~ODD_LEFT)) >> 5)
    if d == UP_RIGHT:
        return ((b & (EVEN_ROWS & ~EVEN_RIGHT)) >> 3) | ((b & ODD_ROWS) >> 4)
    if d == DOWN_LEFT:
        return ((b & EVEN_ROWS) << 4) | ((b & (ODD_ROWS & ~ODD_LEFT)) << 3)
    if d == DOWN_RIGHT:
        return ((b & (EVEN_ROWS & ~EVEN_RIGHT)) << 5) | ((b & ODD_ROWS) << 4)
    raise ValueError(f"direction {d} is not one of 0..3")


def rotate(b: Array) -> Array:
    """The board turned by 180 degrees (square ``q`` -> ``31 - q``): reverse the 32 bits."""
    b = ((b >> 1) & _U(0x55555555)) | ((b & _U(0x55555555)) << 1)
    b = ((b >> 2) & _U(0x33333333)) | ((b & _U(0x33333333)) << 2)
    b = ((b >> 4) & _U(0x0F0F0F0F)) | ((b & _U(0x0F0F0F0F)) << 4)
    b = ((b >> 8) & _U(0x00FF00FF)) | ((b & _U(0x00FF00FF)) << 8)
    return (b >> 16) | (b << 16)


def count(b: Array) -> Array:
    """int32[...]: number of squares in the set."""
    return jnp.bitwise_count(b).astype(jnp.int32)


def moves(cur: Array, opp: Array, kings: Array, jumper: Array) -> Array:
    """uint32[..., 8]: the squares each move kind may start from (kinds 0-3: a step in direction 0-3,
    4-7: a jump). ``cur`` / ``opp``: the mover's / opponent's pieces, ``kings``: both's kings, ``jumper``:
    the piece that must continue a multi-jump (0: none). Men move up only; jumping is mandatory; during a
    multi-jump only the jumper's jumps are legal."""
    empty = ~(cur | opp)
    own_kings = cur & kings
    steps, jumps = [], []
    for d in range(NUM_DIRECTIONS):
        back = OPPOSITE[d]
        src = cur if d in (UP_LEFT, UP_RIGHT) else own_kings
        steps.append(src & shift(empty, back))
        jumps.append(src & shift(opp & shift(empty, back), back))
    any_jump = (jumps[0] | jumps[1] | jumps[2] | jumps[3]) != 0
    continuing = jumper != 0
    step_ok = jnp.where(any_jump | continuing, _U(0), ALL)
    jump_ok = jnp.where(continuing, jumper, ALL)
    return jnp.stack([s & step_ok for s in steps] + [j & jump_ok for j in jumps], axis=-1)


def jumps_from(piece: Array, is_king: Array, opp: Array, empty: Array) -> Array:
    """uint32[..., 4]: ``piece`` where it can jump in direction 0-3, else 0 (a man jumps up only)."""
    out = []
    for d in range(NUM_DIRECTIONS):
        can = (shift(shift(piece, d) & opp, d) & empty) != 0
        if d in (DOWN_LEFT, DOWN_RIGHT):
            can = can & is_king
        out.append(jnp.where(can, piece, _U(0)))
    return jnp.stack(out, axis=-1)


def _action_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per action ``8 * q + kind``: the bits of its start, end (0 off the board) and jumped
    square (0 for a step)."""
    start = np.zeros(256, np.uint32)
    end = np.zeros(256, np.uint32)
    over = np.zeros(256, np.uint32)
    deltas = {UP_LEFT: (-1, -1), UP_RIGHT: (-1, 1), DOWN_LEFT: (1, -1), DOWN_RIGHT: (1, 1)}
    for q in range(NUM_SQUARES):
        r, c = row_col(q)
        for kind in range(8):
            a = 8 * q + kind
            dr, dc = deltas[kind % 4]
            start[a] = 1 << q
            hops = 2 if kind >= 4 else 1
            to = square_at(r + hops * dr, c + hops * dc)
            end[a] = 0 if to is None else 1 << to
            if hops == 2 and to is not None:
                over[a] = 1 << square_at(r + dr, c + dc)
    return start, end, over


ACTION_START, ACTION_END, ACTION_OVER = _action_tables()
