"""Connect Four's shaped reward of a move (design.md §2, the kit's ``shaped_reward``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import Array

from c4jax.games.connect_four import bitboard as bb
from c4jax.games.connect_four import env
from c4jax.games.connect_four.bitboard import Bits

# design.md §2 reward values.
REWARD_WIN = 1.0  # the move wins, or leaves the mover two or more immediate wins
REWARD_LEAVES_WIN = -1.0  # after the move the opponent has an immediate win
REWARD_BLOCK = 0.5  # the move fills a cell where the opponent would have won
REWARD_MISSED_WIN = -0.5  # the mover had an immediate win and did not take it
REWARD_ILLEGAL = -5.0  # full column or column outside 0..6: the mover is disqualified


def _legal_move_reward(state: env.EnvState, cell: Bits, win: Array, new_mask: Bits, new_cur_wins: Bits,
                       new_opp_wins: Bits) -> Array:
    """The shaped reward of dropping a stone on ``cell`` (a legal move), for the mover."""
    before = bb.playable(state.cur | state.opp)
    after = bb.playable(new_mask)
    missed = (state.cur_wins & before).any() & ~win
    leaves = (new_opp_wins & after).any()
    penalty = jnp.where(missed, REWARD_MISSED_WIN, 0.0) + jnp.where(leaves, REWARD_LEAVES_WIN, 0.0)
    threats = (new_cur_wins & after).count() >= 2
    blocks = (cell & state.opp_wins).any()
    bonus = jnp.where(threats, REWARD_WIN, 0.0) + jnp.where(blocks, REWARD_BLOCK, 0.0)
    draw = new_mask.count() == env.MAX_MOVES
    shaped = jnp.where(penalty != 0.0, penalty, bonus)
    return jnp.where(win, REWARD_WIN, jnp.where(draw, 0.0, shaped)).astype(jnp.float32)


def _shaped_one(before: env.EnvState, after: env.EnvState, action: Array) -> Array:
    action = jnp.asarray(action, jnp.int32)
    col = jnp.clip(action, 0, env.COLS - 1)
    legal = (action >= 0) & (action < env.COLS) & before.legal_mask[col]
    mask = before.cur | before.opp
    cell = bb.playable(mask) & bb.column(col)
    win = (cell & before.cur_wins).any()
    # after a legal move the perspectives are swapped: the mover's stones and winning cells are after.opp*
    reward = _legal_move_reward(before, cell, win, after.cur | after.opp, after.opp_wins, after.cur_wins)
    reward = jnp.where(legal, reward, REWARD_ILLEGAL)
    return jnp.where(before.done, 0.0, reward).astype(jnp.float32)


def shaped_reward(before: env.EnvState, after: env.EnvState, action: Array) -> Array:
    """float32[...]: design.md §2 reward of ``action`` taking ``before`` to ``after``, for its mover
    (one game or a batch): +1 win or double threat, -1 leaves the opponent a win, +0.5 block, -0.5 missed win
    (penalties first, bonuses summed), 0 for filling the board, -5 illegal; 0 when ``before`` was finished."""
    if jnp.ndim(before.num_moves) == 0:
        return _shaped_one(before, after, action)
    return jax.vmap(_shaped_one)(before, after, action)
