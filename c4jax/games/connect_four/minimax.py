"""Seed 002's opponent (design.md §4a): depth-limited minimax over its window heuristic, from boards
``int8[B, 6, 7]`` to each column's exact int32 value: leaves at ply ``D`` score :func:`heuristic`, a four
made at ply ``p`` ``+-(WIN - p)``, a full board 0. All ``7 ** D`` move sequences are expanded at once as
bitboards with trailing ``[7] * D`` axes."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from c4jax.games.connect_four import bitboard as bb
from c4jax.games.connect_four import env
from c4jax.games.connect_four.bitboard import Bits

COLS = bb.COLS
MAX_DEPTH = 7  # the seed's deepest search (design.md §4a)
WIN = 1_000_000  # a four made at ply p scores +-(WIN - p): beyond any heuristic sum (|h| <= 345)
ILLEGAL = np.iinfo(np.int32).min  # the value of a full column in :func:`column_values`
_INT_MAX = np.iinfo(np.int32).max

# The seed's evaluate_window, by window content (exactly k stones of one side and 4 - k empty cells).
OWN4, OWN3, OWN2, OPP3 = 100, 5, 2, -4


def heuristic(me: Bits, them: Bits) -> Array:
    """int32[...]: ``100*own4 + 5*own3 + 2*own2 - 4*opp3`` over the 69 windows, for ``me``."""
    n = bb.window_counts(me, them)
    return OWN4 * n["me4"] + OWN3 * n["me3"] + OWN2 * n["me2"] + OPP3 * n["them3"]


def _expand(me: Bits, them: Bits, depth: int, me_to_move: bool, ply: int) -> tuple[Array, Array]:
    """(value int32[..., 7], legal bool[..., 7]) of each column's child, ``depth`` >= 1 plies left."""
    child_me, child_them, legal, won, full = bb.children(me, them, me_to_move)
    if depth == 1:
        below = heuristic(child_me, child_them)
    else:
        values, child_legal = _expand(child_me, child_them, depth - 1, not me_to_move, ply + 1)
        below = _reduce(values, child_legal, maximize=not me_to_move)
    win = WIN - (ply + 1)
    terminal = jnp.where(won, win if me_to_move else -win, 0)
    return jnp.where(won | full, terminal, below), legal


def _reduce(values: Array, legal: Array, maximize: bool) -> Array:
    pick, pad = (jnp.max, ILLEGAL) if maximize else (jnp.min, _INT_MAX)
    return pick(jnp.where(legal, values, pad), axis=-1)


def column_values(boards: Array, depth: int) -> tuple[Array, Array]:
    """``(values int32[B, 7], legal bool[B, 7])``: each column's depth-``depth`` value for the player
    to move (:data:`ILLEGAL` for a full column). ``boards``: int8[B, 6, 7], not over; ``depth``: a Python int
    in 1 .. :data:`MAX_DEPTH`. Jittable; exact."""
    if not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
        raise ValueError(f"minimax depth must be an int in 1..{MAX_DEPTH}, got {depth!r}")
    state = jax.vmap(env.from_board)(boards)
    values, legal = _expand(state.cur, state.opp, depth, True, 0)
    return jnp.where(legal, values, ILLEGAL), legal


def best_columns(values: Array, legal: Array) -> Array:
    """bool[B, 7]: the legal columns of the largest value."""
    top = _reduce(values, legal, maximize=True)
    return legal & (values == top[..., None])


def value(boards: Array, depth: int) -> Array:
    """int32[B]: each board's depth-``depth`` minimax value for the player to move."""
    values, legal = column_values(boards, depth)
    return _reduce(values, legal, maximize=True)


def scores_and_best(boards: Array, depth: int) -> tuple[Array, Array]:
    """The ``minimax<D>`` player: float32 values (full columns ``-inf``) and :func:`best_columns`."""
    values, legal = column_values(boards, depth)
    return jnp.where(legal, values.astype(jnp.float32), -jnp.inf), best_columns(values, legal)
