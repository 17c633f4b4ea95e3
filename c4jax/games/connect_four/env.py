"""Pure-functional Connect Four: ``init``, ``step``, ``observe``, ``from_board``; ``render`` (text, host side).

Every function works on one game and is ``jit``/``vmap``-compatible. The public board (design.md §1) is
``int8[6, 7]``, row 0 on top, ``1`` = player to move, ``-1`` = opponent. The state holds bitboards and,
per player, the cells that would complete a four."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct
from jax import Array

from c4jax.games.base import random_legal_action  # noqa: F401  (env.random_legal_action: a random legal column)
from c4jax.games.connect_four import bitboard as bb
from c4jax.games.connect_four.bitboard import Bits
from c4jax.games.connect_four.board import check_boards, first_player_board, four_cells

ROWS, COLS = bb.ROWS, bb.COLS
NUM_ACTIONS = COLS
MAX_MOVES = ROWS * COLS  # 42

@struct.dataclass
class EnvState:
    """One game. Every field is per game; a batch adds leading axes (``vmap``)."""

    cur: Bits  # uint32 pair []: stones of the player to move
    opp: Bits  # uint32 pair []: stones of the other player
    cur_wins: Bits  # uint32 pair []: empty cells that would complete a four for `cur`
    opp_wins: Bits  # uint32 pair []: same for `opp`
    legal_mask: Array  # bool[7]: columns the player to move may play (all False once done)
    done: Array  # bool[]: the game is over
    winner: Array  # int32[]: +1 first player won, -1 second player won, 0 none / draw
    num_moves: Array  # int32[]: stones on the board (the game's length once done)

    @property
    def first_player_to_move(self) -> Array:
        """bool[]: the player to move is the one who moved first (an even stone count)."""
        return (self.num_moves & 1) == 0  # not % 2: jax2onnx cannot lower an integer rem of unknown batch

    # The game protocol's view of the state (c4jax.games.base): player 0 moves first.

    @property
    def current_player(self) -> Array:
        """int32[]: 0 when the first player is to move, else 1."""
        return (self.num_moves & 1).astype(jnp.int32)

    @property
    def legal_action_mask(self) -> Array:
        """bool[7]: the legal columns (``legal_mask``)."""
        return self.legal_mask

    @property
    def terminated(self) -> Array:
        """bool[]: the game is over (``done``)."""
        return self.done

    @property
    def truncated(self) -> Array:
        """bool[]: always False (a game ends by its rules within 42 moves)."""
        return jnp.zeros_like(self.done)

    @property
    def rewards(self) -> Array:
        """float32[2]: the game's result for player 0 and player 1 once it is over (+1 / -1), else 0."""
        first = jnp.where(self.done, self.winner, 0).astype(jnp.float32)
        return jnp.stack([first, 0.0 - first], axis=-1)  # 0.0 - x: a draw gives +0.0 to both


def init(key: Array | None = None) -> EnvState:
    """Empty board, first player to move. ``key`` is unused (API symmetry)."""
    del key
    z = bb.empty_like()
    return EnvState(
        cur=z,
        opp=z,
        cur_wins=z,
        opp_wins=z,
        legal_mask=jnp.ones(COLS, jnp.bool_),
        done=jnp.bool_(False),
        winner=jnp.int32(0),
        num_moves=jnp.int32(0),
    )


def step(state: EnvState, action: Array) -> EnvState:
    """Drop a stone for the player to move in column ``action`` and swap perspectives. An illegal action
    (a full column, or outside 0..6) ends the game, the opponent winning; a finished game stays unchanged."""
    action = jnp.asarray(action, jnp.int32)
    in_range = (action >= 0) & (action < COLS)
    col = jnp.clip(action, 0, COLS - 1)
    legal = in_range & state.legal_mask[col]

    mask = state.cur | state.opp
    cell = bb.playable(mask) & bb.column(col)
    win = (cell & state.cur_wins).any()
    new_cur = state.cur | cell
    new_mask = mask | cell
    new_cur_wins = bb.winning_cells(new_cur) & ~new_mask
    new_opp_wins = state.opp_wins & ~cell
    num_moves = state.num_moves + 1
    draw = num_moves == MAX_MOVES

    # The mover is the first player iff it moved at an even stone count.
    mover_sign = jnp.where(state.first_player_to_move, 1, -1).astype(jnp.int32)
    done = win | draw
    moved = EnvState(
        cur=state.opp,
        opp=new_cur,
        cur_wins=new_opp_wins,
        opp_wins=new_cur_wins,
        legal_mask=~bb.full_columns(new_mask) & ~done,
        done=done,
        winner=jnp.where(win, mover_sign, 0),
        num_moves=num_moves,
    )
    disqualified = state.replace(
        legal_mask=jnp.zeros(COLS, jnp.bool_),
        done=jnp.bool_(True),
        winner=-mover_sign,
    )
    new = jax.tree.map(lambda a, b: jnp.where(legal, a, b), moved, disqualified)
    return jax.tree.map(lambda a, b: jnp.where(state.done, a, b), state, new)


def observe(state: EnvState) -> Array:
    """int8[6, 7]: the public board from the point of view of the player to move."""
    return bb.to_board(state.cur, state.opp)


def _from_board(board: Array) -> EnvState:
    board = jnp.asarray(board)
    cur = bb.from_planes(board == 1)
    opp = bb.from_planes(board == -1)
    mask = cur | opp
    num_moves = mask.count()
    opp_won = bb.has_four(opp)
    done = opp_won | (num_moves == MAX_MOVES)
    # The stone-count parity says who moved first (21 stones each, first player starts).
    opp_sign = jnp.where((num_moves & 1) == 0, -1, 1).astype(jnp.int32)
    return EnvState(
        cur=cur,
        opp=opp,
        cur_wins=bb.winning_cells(cur) & ~mask,
        opp_wins=bb.winning_cells(opp) & ~mask,
        legal_mask=~bb.full_columns(mask) & ~done,
        done=done,
        winner=jnp.where(opp_won, opp_sign, 0),
        num_moves=num_moves,
    )


def from_board(board) -> EnvState:
    """The state of a public board ``int8[6, 7]`` (jit/vmap-compatible). A concrete board is
    validated first (``ValueError``); a board where the opponent has four in a row comes back finished."""
    if not isinstance(board, jax.core.Tracer):
        board = check_boards(board, batched=False)
    return _from_board(board)



def random_initial_state(key: Array) -> EnvState:
    """design.md §3: one of the positions before the last move of a random game (the empty
    board included), each with equal probability."""
    play_key, pick_key = jax.random.split(key)

    def _step(state, k):
        return step(state, random_legal_action(k, state.legal_mask)), state

    final, history = jax.lax.scan(_step, init(), jax.random.split(play_key, MAX_MOVES))
    index = jax.random.randint(pick_key, (), 0, final.num_moves)
    return jax.tree.map(lambda x: x[index], history)


# --------------------------------------------------------------------------- host-side pictures

STONES = ("X", "O")  # the first player's and the second player's stones in text


def status_text(state: EnvState, names: tuple[str, str] = STONES) -> str:
    """``"X to move"``, ``"O wins"``, ``"draw"`` or ``"X wins (O played an illegal move)"`` for one
    (unbatched) state; ``names``: the first and the second player's names."""
    state = jax.device_get(state)
    if np.asarray(state.num_moves).shape != ():
        raise ValueError(f"expected one state, got a batch of shape {np.asarray(state.num_moves).shape}")
    if not bool(state.done):
        return f"{names[int(state.num_moves) % 2]} to move"
    winner = int(state.winner)
    if winner == 0:
        return "draw"
    name, loser = (names[0], names[1]) if winner == 1 else (names[1], names[0])
    if not four_cells(np.asarray(observe(state))):
        return f"{name} wins ({loser} played an illegal move)"
    return f"{name} wins"


def render(state: EnvState) -> str:
    """A text diagram of one (unbatched) state: the column numbers, the rows from the top (``X`` the
    first player, ``O`` the second, ``.`` empty) and the :func:`status_text` line."""
    status = status_text(state)  # first: it refuses a batch of states
    board = first_player_board(np.asarray(jax.device_get(observe(state))))
    lines = [" ".join(str(c) for c in range(COLS))]
    lines += [" ".join({1: STONES[0], -1: STONES[1]}.get(int(v), ".") for v in row) for row in board]
    return "\n".join(lines + [status])

