"""49-bit Connect Four bitboards held as pairs of uint32 words (JAX runs without x64).

Bit ``col * 7 + row_from_bottom`` for the 6 rows of each column, plus an always-empty sentinel bit on top
of every column, so that shifts by 1, 7, 6 and 8 never wrap between columns. Everything is elementwise on
arrays of any batch shape."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from flax import struct
from jax import Array

ROWS = 6
COLS = 7
_H1 = ROWS + 1  # bits per column, sentinel included

_U32 = jnp.uint32


@struct.dataclass
class Bits:
    """A 49-bit set of cells as two uint32 words (any batch shape, same for both)."""

    lo: Array  # uint32[...]: bits 0..31
    hi: Array  # uint32[...]: bits 32..48

    def __and__(self, o: "Bits") -> "Bits":
        return Bits(self.lo & o.lo, self.hi & o.hi)

    def __or__(self, o: "Bits") -> "Bits":
        return Bits(self.lo | o.lo, self.hi | o.hi)

    def __xor__(self, o: "Bits") -> "Bits":
        return Bits(self.lo ^ o.lo, self.hi ^ o.hi)

    def __invert__(self) -> "Bits":
        return Bits(~self.lo, ~self.hi)

    def __lshift__(self, s: int) -> "Bits":
        assert 0 < s < 32
        return Bits(self.lo << s, (self.hi << s) | (self.lo >> (32 - s)))

    def __rshift__(self, s: int) -> "Bits":
        assert 0 < s < 32
        return Bits((self.lo >> s) | (self.hi << (32 - s)), self.hi >> s)

    def any(self) -> Array:
        """bool[...]: the set is not empty."""
        return (self.lo | self.hi) != 0

    def count(self) -> Array:
        """int32[...]: number of cells in the set."""
        return (jnp.bitwise_count(self.lo) + jnp.bitwise_count(self.hi)).astype(jnp.int32)


def const(x: int) -> Bits:
    """A constant mask as NumPy uint32 scalars (so importing the package starts no JAX backend)."""
    return Bits(np.uint32(x & 0xFFFFFFFF), np.uint32(x >> 32))


def empty_like(shape=()) -> Bits:
    """The empty bitboard (both uint32 words 0) of ``shape``."""
    return Bits(jnp.zeros(shape, _U32), jnp.zeros(shape, _U32))


def cell_index(row: int, col: int) -> int:
    """Bit index of the public-board cell (row 0 = top)."""
    return col * _H1 + (ROWS - 1 - row)


# Python-int masks, built once at import.
_BOTTOM_INT = sum(1 << (c * _H1) for c in range(COLS))
_BOARD_INT = sum(((1 << ROWS) - 1) << (c * _H1) for c in range(COLS))
_TOP_INT = sum(1 << (c * _H1 + ROWS - 1) for c in range(COLS))
_COLUMN_INT = [((1 << ROWS) - 1) << (c * _H1) for c in range(COLS)]

BOTTOM = const(_BOTTOM_INT)
BOARD = const(_BOARD_INT)

# Column masks as gatherable tables: COLUMN_LO[c], COLUMN_HI[c].
COLUMN_LO = np.array([m & 0xFFFFFFFF for m in _COLUMN_INT], np.uint32)
COLUMN_HI = np.array([m >> 32 for m in _COLUMN_INT], np.uint32)

# For every public cell (row-major over the 6x7 board): which word holds it and at which shift.
_CELL_BITS = np.array([cell_index(r, c) for r in range(ROWS) for c in range(COLS)])
CELL_WORD = (_CELL_BITS >= 32).astype(np.int32)  # int32[42]
CELL_SHIFT = (_CELL_BITS % 32).astype(np.uint32)  # uint32[42]


def column(action: Array) -> Bits:
    """The 6 cells of column ``action`` (int32[...], must be in 0..6)."""
    return Bits(jnp.asarray(COLUMN_LO)[action], jnp.asarray(COLUMN_HI)[action])


def playable(mask: Bits) -> Bits:
    """The lowest empty cell of every non-full column (``mask`` = all stones)."""
    return ((mask << 1) | BOTTOM) & ~mask & BOARD


def full_columns(mask: Bits) -> Array:
    """bool[..., 7]: columns whose top cell is filled."""
    return ((column_words(mask) >> (ROWS - 1)) & 1).astype(jnp.bool_)


def winning_cells(p: Bits) -> Bits:
    """Cells (empty or not) that would complete a four for the stones ``p``: per direction, a cell
    wins when three of its neighbours along it are in ``p``; each term shifts ``p`` itself, so stray bits above
    48 never shift back down."""
    r = (p << 1) & (p << 2) & (p << 3)  # vertical: three stones directly below
    for d in (_H1, _H1 - 1, _H1 + 1):  # horizontal, diagonal /, diagonal \ (in bit space)
        q = (p << d) & (p << (2 * d))
        r = r | (q & (p << (3 * d))) | (q & (p >> d))
        q = (p >> d) & (p >> (2 * d))
        r = r | (q & (p << d)) | (q & (p >> (3 * d)))
    return r & BOARD


def has_four(p: Bits) -> Array:
    """bool[...]: ``p`` contains four in a row."""
    out = None
    for d in (1, _H1, _H1 - 1, _H1 + 1):
        m = p & (p >> d)
        f = (m & (m >> (2 * d))).any()
        out = f if out is None else out | f
    return out


def children(me: Bits, them: Bits, me_to_move: bool) -> tuple[Bits, Bits, Array, Array, Array]:
    """Every column's child of each node, on a new trailing [7] axis: ``(me, them, legal, won, full)``
    (``won``: the mover made a four; ``full``: the board is full)."""
    mask = me | them
    free = playable(mask)
    cells = Bits(free.lo[..., None] & COLUMN_LO, free.hi[..., None] & COLUMN_HI)
    widen = lambda b: Bits(b.lo[..., None], b.hi[..., None])  # noqa: E731
    mover = widen(me if me_to_move else them) | cells
    child_me, child_them = (mover, widen(them)) if me_to_move else (widen(me), mover)
    return child_me, child_them, cells.any(), has_four(mover), (widen(mask) | cells).count() == ROWS * COLS


def _window_starts(d: int) -> int:
    """Bits of the cells where a 4-cell window of direction ``d`` starts inside the board."""
    cells = [c * _H1 + r for c in range(COLS) for r in range(ROWS)]
    board = set(cells)
    return sum(1 << s for s in cells if all(s + k * d in board for k in range(4)))


DIRECTIONS = (1, _H1, _H1 - 1, _H1 + 1)  # vertical, horizontal, two diagonals
WINDOW_STARTS = tuple(const(_window_starts(d)) for d in DIRECTIONS)  # 21 + 24 + 12 + 12 = 69


def window_counts(me: Bits, them: Bits) -> dict[str, Array]:
    """int32[...] counts of 4-cell windows holding exactly k stones of one side and 4 - k empty
    cells, keys ``me2, me3, me4, them2, them3, them4``: per direction, half adders over the four aligned
    shifts give "exactly k of 4" per start cell, and a popcount over the valid starts sums them."""
    out = {f"{side}{k}": 0 for side in ("me", "them") for k in (2, 3, 4)}
    for d, starts in zip(DIRECTIONS, WINDOW_STARTS):
        exact, none = {}, {}
        for side, p in (("me", me), ("them", them)):
            a, b, c, e = p, p >> d, p >> (2 * d), p >> (3 * d)
            s1, c1, s2, c2 = a ^ b, a & b, c ^ e, c & e
            z1, z2 = ~(s1 | c1), ~(s2 | c2)
            exact[side] = {4: c1 & c2, 3: (c1 & s2) | (s1 & c2), 2: (c1 & z2) | (z1 & c2) | (s1 & s2)}
            none[side] = z1 & z2
        for side, other in (("me", "them"), ("them", "me")):
            for k in (2, 3, 4):
                out[f"{side}{k}"] = out[f"{side}{k}"] + (exact[side][k] & none[other] & starts).count()
    return out


def column_words(p: Bits) -> Array:
    """uint32[..., 7]: the 7-bit word of each column (bit r = row r from the bottom)."""
    lo, hi = p.lo, p.hi
    cols = [(lo >> (_H1 * c)) & 0x7F for c in range(4)]  # columns 0..3 sit in lo
    cols.append(((lo >> 28) | (hi << 4)) & 0x7F)  # column 4 straddles the two words
    cols += [(hi >> (_H1 * c - 32)) & 0x7F for c in (5, 6)]
    return jnp.stack(cols, axis=-1)


_ROW_SHIFT = np.arange(ROWS - 1, -1, -1, dtype=np.uint32)[:, None]  # row 0 (top) is bit 5


def to_board(me: Bits, them: Bits) -> Array:
    """int8[..., 6, 7]: ``1`` on ``me``'s cells, ``-1`` on ``them``'s, else ``0`` (row 0 = top)."""
    mine = (column_words(me)[..., None, :] >> _ROW_SHIFT) & 1
    theirs = (column_words(them)[..., None, :] >> _ROW_SHIFT) & 1
    return (mine.astype(jnp.int8) - theirs.astype(jnp.int8))


def from_planes(planes: Array) -> Bits:
    """The cell set of a picture bool[..., 6, 7] (row 0 = top), as Bits."""
    flat = planes.reshape(planes.shape[:-2] + (ROWS * COLS,)).astype(_U32)
    shifted = flat << CELL_SHIFT  # [..., 42]; distinct bits, so a sum is an OR
    lo = jnp.sum(jnp.where(CELL_WORD == 0, shifted, 0), axis=-1, dtype=_U32)
    hi = jnp.sum(jnp.where(CELL_WORD == 1, shifted, 0), axis=-1, dtype=_U32)
    return Bits(lo, hi)
