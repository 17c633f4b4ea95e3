"""design.md §4 N-step lookahead, the players ``1steplA`` .. ``4steplA``: the whole depth-N tree of every
board expanded at once as bitboards with trailing ``[7] * depth`` axes; batched and jittable.

The heuristic needs 35 bits and ties need exact equality, so the score ``1e6 * high + low`` is carried as
the int32 pair ``(high, low)`` (``high = 1e4*own4 - 1e2*opp4 - opp3``, ``low = 1e4*own3 + 1e2*own2 -
opp2`` in [-69, 690000]), compared lexicographically; only the scores returned are float32."""

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


def _minimax(me: Bits, them: Bits, done: Array, depth: int, me_to_move: bool) -> tuple[Array, Array]:
    """Minimax value (high, low) of nodes; ``me`` maximises, leaves at depth 0 or when done."""
    leaf = heuristic(me, them)
    if depth == 0:
        return leaf
    child_me, child_them, legal, won, full = bb.children(me, them, me_to_move)
    value = _minimax(child_me, child_them, won | full, depth - 1, not me_to_move)
    best = _lex_reduce(*value, legal, maximize=me_to_move)
    return tuple(jnp.where(done, a, b) for a, b in zip(leaf, best))


def scores_and_best(boards: Array, n: int) -> tuple[Array, Array]:
    """Depth-``n`` lookahead of boards ``int8[B, 6, 7]``: float32[B, 7], each legal column's
    minimax score minus the current board's (full columns ``-inf``), and bool[B, 7], the exactly best columns."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"lookahead depth n must be a positive int, got {n!r}")
    state = jax.vmap(env.from_board)(boards)
    child_me, child_them, legal, won, full = bb.children(state.cur, state.opp, True)
    high, low = _minimax(child_me, child_them, won | full, n - 1, False)
    high0, low0 = heuristic(state.cur, state.opp)
    rel = (high - high0[:, None]).astype(jnp.float32) * 1e6 + (low - low0[:, None]).astype(jnp.float32)
    best_high, best_low = _lex_reduce(high, low, legal, maximize=True)
    best = legal & (high == best_high[:, None]) & (low == best_low[:, None])
    return jnp.where(legal, rel, -jnp.inf), best
