"""design.md §4 N-step lookahead, the players ``1steplA`` .. ``4steplA`` (the kit's
:class:`~c4jax.games.kit.Player` :func:`scores_and_best`): the whole depth-N tree of every board
expanded at once as bitboards with trailing ``[7] * depth`` axes, leaves scored with the window
heuristic, reduced by minimax; batched and jittable.

Exactness: the heuristic needs 35 bits, more than float32 holds, and ties need exact equality.
The score equals ``1e6 * high + low`` with ``high = 1e4*own4 - 1e2*opp4 - opp3`` and
``low = 1e4*own3 + 1e2*own2 - opp2`` in [-69, 690000], so comparing scores is comparing the int32
pairs ``(high, low)`` lexicographically; the search carries the pair, only the scores are float32.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from c4jax.games.connect_four import bitboard as bb
from c4jax.games.connect_four import env
from c4jax.games.connect_four.bitboard import Bits

COLS = bb.COLS
_INT_MIN = np.iinfo(np.int32).min
_INT_MAX = np.iinfo(np.int32).max


def heuristic(me: Bits, them: Bits) -> tuple[Array, Array]:
    """design.md §4 pattern score of ``me``'s position as the exact pair ``(high, low)`` (int32[...])."""
    n = bb.window_counts(me, them)
    high = 10_000 * n["me4"] - 100 * n["them4"] - n["them3"]
    low = 10_000 * n["me3"] + 100 * n["me2"] - n["them2"]
    return high, low


def _lex_reduce(high: Array, low: Array, valid: Array, maximize: bool) -> tuple[Array, Array]:
    """Max (or min) of ``(high, low)`` pairs over the last axis, among ``valid`` entries."""
    pick = jnp.max if maximize else jnp.min
    pad = _INT_MIN if maximize else _INT_MAX
    best_high = pick(jnp.where(valid, high, pad), axis=-1)
    tied = valid & (high == best_high[..., None])
    best_low = pick(jnp.where(tied, low, pad), axis=-1)
    return best_high, best_low


def _children(me: Bits, them: Bits, me_to_move: bool) -> tuple[Bits, Bits, Array, Array]:
    """Every column's child of each node: (me, them) with a new trailing [7] axis, legal, done."""
    mask = me | them
    free = bb.playable(mask)
    cells = Bits(free.lo[..., None] & bb.COLUMN_LO, free.hi[..., None] & bb.COLUMN_HI)
    legal = cells.any()  # [..., 7]
    widen = lambda b: Bits(b.lo[..., None], b.hi[..., None])  # noqa: E731
    mover = widen(me if me_to_move else them) | cells
    child_me, child_them = (mover, widen(them)) if me_to_move else (widen(me), mover)
    done = bb.has_four(mover) | ((widen(mask) | cells).count() == bb.ROWS * COLS)
    return child_me, child_them, legal, done


def _minimax(me: Bits, them: Bits, done: Array, depth: int, me_to_move: bool) -> tuple[Array, Array]:
    """Minimax value (high, low) of nodes; ``me`` maximises, leaves at depth 0 or when done."""
    leaf = heuristic(me, them)
    if depth == 0:
        return leaf
    child_me, child_them, legal, child_done = _children(me, them, me_to_move)
    value = _minimax(child_me, child_them, child_done, depth - 1, not me_to_move)
    best = _lex_reduce(*value, legal, maximize=me_to_move)
    return tuple(jnp.where(done, a, b) for a, b in zip(leaf, best))


def scores_and_best(boards: Array, n: int) -> tuple[Array, Array]:
    """Depth-``n`` lookahead of public boards ``int8[B, 6, 7]``: each legal column's minimax score minus
    the current board's score (what the UI shows) as float32, full columns ``-inf``, and bool[B, 7], the
    columns of the exactly best score (compared as the exact pairs: module docstring)."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"lookahead depth n must be a positive int, got {n!r}")
    state = jax.vmap(env.from_board)(boards)
    child_me, child_them, legal, done = _children(state.cur, state.opp, True)
    high, low = _minimax(child_me, child_them, done, n - 1, False)
    high0, low0 = heuristic(state.cur, state.opp)
    rel = (high - high0[:, None]).astype(jnp.float32) * 1e6 + (low - low0[:, None]).astype(jnp.float32)
    best_high, best_low = _lex_reduce(high, low, legal, maximize=True)
    best = legal & (high == best_high[:, None]) & (low == best_low[:, None])
    return jnp.where(legal, rel, -jnp.inf), best
