"""Pure-functional Checkers (English draughts): ``init``, ``step``, ``observe``; rules, encoding,
observation and actions: design.md "Checkers". Every function works on one game and is
``jit``/``vmap``-compatible; the rule variant is a hashable :class:`Rules` (a static argument).

**Actions** (256): ``8 * q + kind`` for the mover's canonical square ``q`` and ``kind`` 0-3 a step, 4-7 a
jump, in direction ``kind % 4``. **Observation** ``int8[8, 8, 2]``: channel 0 the board from the mover's
side (own man 1, own king 3, the opponent's -1 / -3), channel 1 one on the piece that must jump on.

**History**: ``history[c + 1]`` holds the kings of the player who made the ply that reached quiet count
``c`` (its frame), ``history[c]`` the other player's; position ``c`` repeats position ``j`` when ``c - j``
is even and both words agree."""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct
from jax import Array

from c4jax.games.checkers import bitboard as bb

NUM_ACTIONS = 256
OBSERVATION_SHAPE = (8, 8, 2)

_U32 = jnp.uint32


@dataclass(frozen=True)
class Rules:
    """A rule variant. ``quiet_limit``: plies without a capture (and, with ``man_move_resets``, a man's
    move) that draw; ``repetition``: a third occurrence of a position draws (needs ``man_move_resets``);
    ``quiet_draw_first``: a ply reaching ``quiet_limit`` that blocks the opponent draws (else the mover
    wins); ``max_steps``: the ply cap (``truncated``)."""

    max_steps: int = 512
    quiet_limit: int = 100
    man_move_resets: bool = True
    repetition: bool = True
    quiet_draw_first: bool = False

    def __post_init__(self):
        if self.repetition and not self.man_move_resets:
            raise ValueError("repetition needs man_move_resets=True (positions are compared by their kings)")
        if self.quiet_limit < 1 or self.max_steps < 1:
            raise ValueError("quiet_limit and max_steps must be positive")

    @property
    def history_size(self) -> int:
        return self.quiet_limit + 1 if self.repetition else 0


@struct.dataclass
class State:
    """One game; a batch adds leading axes (``vmap``)."""

    cur: Array  # uint32[]: pieces of the player to move (canonical frame)
    opp: Array  # uint32[]: the opponent's pieces
    kings: Array  # uint32[]: the kings of both players
    jumper: Array  # uint32[]: the piece that must continue a multi-jump, 0 when none
    legal: Array  # uint32[8]: squares each move kind may start from (all 0 once the game is over)
    current_player: Array  # int32[]: 0 = the first player (black), 1 = the second (white)
    rewards: Array  # float32[2]: the result of the step that made this state, per player id
    terminated: Array  # bool[]: ended by the rules (no move for the player to move, or a draw)
    truncated: Array  # bool[]: ended by the ply cap
    step_count: Array  # int32[]: plies played
    quiet: Array  # int32[]: plies since the last capture (or man's move, with man_move_resets)
    history: Array  # uint32[quiet_limit + 1]: each side's kings since the last progress (module docstring)

    @property
    def legal_action_mask(self) -> Array:
        """bool[256]: action ``8 * q + kind`` is legal."""
        squares = jnp.arange(bb.NUM_SQUARES, dtype=_U32)
        bits = (self.legal[..., None, :] >> squares[:, None]) & 1  # [..., 32, 8]
        return bits.reshape(bits.shape[:-2] + (NUM_ACTIONS,)).astype(jnp.bool_)

    @property
    def done(self) -> Array:
        return self.terminated | self.truncated


def _from_board(rules: Rules, cur, opp, kings, jumper, player) -> State:
    """A state of a board in the mover's frame, no ply played since the last progress."""
    cur, opp, kings, jumper = (jnp.asarray(x, _U32) for x in (cur, opp, kings, jumper))
    legal = bb.moves(cur, opp, kings, jumper)
    lost = ~(legal != 0).any()
    player = jnp.asarray(player, jnp.int32)
    winner_reward = jnp.where(lost, 1.0, 0.0)  # for the player who just moved
    rewards = jnp.where(player == 0, jnp.stack([-winner_reward, winner_reward]),
                        jnp.stack([winner_reward, -winner_reward])).astype(jnp.float32)
    history = jnp.zeros(rules.history_size, _U32)
    if rules.history_size:  # position 0: the mover's kings, then the opponent's (in its frame); no scatter (ONNX)
        history = jnp.concatenate([jnp.stack([cur & kings, bb.rotate(opp & kings)]),
                                   jnp.zeros(rules.history_size - 2, _U32)])
    return State(cur=cur, opp=opp, kings=kings & (cur | opp), jumper=jumper,
                 legal=jnp.where(lost, _U32(0), legal), current_player=player, rewards=rewards,
                 terminated=lost, truncated=jnp.bool_(False), step_count=jnp.int32(0), quiet=jnp.int32(0),
                 history=history)


def init(rules: Rules) -> State:
    """The start position: 12 men each, black (player 0) to move."""
    return _from_board(rules, 0xFFF00000, 0x00000FFF, 0, 0, 0)


def from_board(rules: Rules, cur, opp, kings, player, jumper=0) -> State:
    """The state of a position in the mover's frame (uint32 bitboards; ``player`` 0 or 1 to move),
    reached once, ``quiet = step_count = 0``. A mover without a legal move has lost."""
    return _from_board(rules, cur, opp, kings, jumper, player)


def _count_true(flags: Array) -> Array:
    """int32[]: the number of True in ``flags``, summed in chunks of at most 32 (a longer sum is an
    unfused reduce-window on XLA:CPU)."""
    n = flags.shape[-1]
    chunks = -(-n // 32)
    width = -(-n // chunks)
    flags = flags.astype(jnp.int32)
    if chunks * width > n:  # no pad of 0 (jax2onnx cannot lower a pad of a batch of unknown size)
        flags = jnp.pad(flags, (0, chunks * width - n))
    partial, = _materialize(flags.reshape(chunks, width).sum(axis=-1))  # else XLA merges the two sums
    return partial.sum()


def _materialize(*values: Array) -> tuple[Array, ...]:
    """``values``, each computed once into its own buffer (design.md "Checkers", compiled step)."""
    return tuple(jnp.stack([v, jnp.zeros_like(v)], -1).max(-1) for v in values)


def _select(pred: Array, a, b):
    return jax.tree.map(lambda x, y: jnp.where(pred, x, y), a, b)


def step(rules: Rules, state: State, action: Array) -> State:
    """Play ``action`` for the player to move. An illegal action ends the game (-1 for its mover, board
    unchanged); a finished game stays unchanged."""
    action = jnp.asarray(action, jnp.int32)
    in_range = (action >= 0) & (action < NUM_ACTIONS)
    a, in_range = _materialize(jnp.clip(action, 0, NUM_ACTIONS - 1), in_range)  # e.g. a random pick: once
    q = (a >> 3).astype(_U32)
    kind = a & 7
    # No gathers (no table lookups, no dynamic index): XLA:CPU emits a gather as a scalar loop
    # and recomputes the action inside each one; selects and shifts vectorize over the batch.
    word = state.legal[..., 0]
    for i in range(1, 8):
        word = jnp.where(kind == i, state.legal[..., i], word)
    legal = in_range & (((word >> q) & 1) != 0)

    # bb.ACTION_START / ACTION_END / ACTION_OVER of the action, by bit arithmetic
    start = _U32(1) << q
    direction = kind & 3
    one = bb.shift(start, 0)
    for d in range(1, bb.NUM_DIRECTIONS):
        one = jnp.where(direction == d, bb.shift(start, d), one)
    two = bb.shift(one, 0)
    for d in range(1, bb.NUM_DIRECTIONS):
        two = jnp.where(direction == d, bb.shift(one, d), two)
    jump = kind >= 4
    end = jnp.where(jump, two, one)
    over = jnp.where(jump & (two != 0), one, _U32(0))
    legal, start, end, over = _materialize(legal, start, end, over)
    was_king = (state.kings & start) != 0
    crowned = ~was_king & ((end & bb.TOP_ROW) != 0)
    capture = over != 0
    cur = (state.cur ^ start) | end
    opp = state.opp & ~over
    kings = (state.kings & ~(start | over)) | jnp.where(was_king | crowned, end, _U32(0))
    mover = state.current_player
    step_count = state.step_count + 1
    progress = capture | ~was_king if rules.man_move_resets else capture
    quiet = jnp.where(progress, 0, state.quiet + 1)
    n_cur, n_opp, n_kings = bb.rotate(opp), bb.rotate(cur), bb.rotate(kings)
    cur, opp, kings, n_cur, n_opp, n_kings, quiet = _materialize(cur, opp, kings, n_cur, n_opp, n_kings, quiet)
    empty = ~(cur | opp)

    # The same piece jumps on (no crowning in between): same player, only its jumps legal.
    again = bb.jumps_from(end, was_king, opp, empty)
    goes_on = capture & ~crowned & (again != 0).any()
    cont_legal = jnp.concatenate([jnp.zeros(4, _U32), again])

    # Otherwise the turn passes: the board turned to the opponent's frame (n_cur, n_opp, n_kings).
    n_legal = bb.moves(n_cur, n_opp, n_kings, _U32(0))
    blocked = ~(n_legal != 0).any()  # the opponent has no move: the mover wins
    repeated = jnp.bool_(False)
    if rules.history_size:
        # the new position: the kings of the player to move (its frame), then the mover's (its frame)
        position = jnp.stack([n_cur & n_kings, cur & kings])
        index = jnp.arange(rules.quiet_limit)
        same_side = (index < quiet) & (((quiet - index) & 1) == 0)
        seen = same_side & (state.history[:-1] == position[0]) & (state.history[1:] == position[1])
        repeated = _count_true(seen) >= 2  # this is its third occurrence
    quiet_draw = quiet >= rules.quiet_limit
    draw = repeated | quiet_draw
    wins = blocked & ~quiet_draw if rules.quiet_draw_first else blocked
    ended = wins | draw
    goes_on, wins, ended = _materialize(goes_on, wins, ended)

    mover_reward = jnp.where(wins, 1.0, 0.0)
    rewards = jnp.where(mover == 0, jnp.stack([mover_reward, -mover_reward]),
                        jnp.stack([-mover_reward, mover_reward])).astype(jnp.float32)
    # The small fields are chosen with `where`; the history (most of the state's bytes) gets
    # one scattered write, of the position a legal turn-passing move made.
    passed = State(cur=n_cur, opp=n_opp, kings=n_kings, jumper=_U32(0),
                   legal=jnp.where(ended, _U32(0), n_legal), current_player=1 - mover, rewards=rewards,
                   terminated=ended, truncated=jnp.bool_(False), step_count=step_count, quiet=quiet, history=None)
    again_state = State(cur=cur, opp=opp, kings=kings, jumper=end, legal=cont_legal, current_player=mover,
                        rewards=jnp.zeros(2, jnp.float32), terminated=jnp.bool_(False),
                        truncated=jnp.bool_(False), step_count=step_count, quiet=quiet, history=None)
    moved = _select(goes_on, again_state, passed)
    cap = ~moved.terminated & (step_count >= rules.max_steps)
    moved = moved.replace(truncated=cap, legal=jnp.where(cap, _U32(0), moved.legal))

    loser = jnp.where(mover == 0, jnp.array([-1.0, 1.0], jnp.float32), jnp.array([1.0, -1.0], jnp.float32))
    kept = state.replace(history=None)
    disqualified = kept.replace(legal=jnp.zeros(8, _U32), rewards=loser, terminated=jnp.bool_(True))
    finished = state.terminated | state.truncated
    cap, finished = _materialize(cap, finished)
    new = _select(finished, kept, _select(legal, moved, disqualified))
    history = state.history
    if rules.history_size:
        write = legal & ~finished & ~goes_on
        row = jnp.where(write & (quiet < rules.quiet_limit), quiet, rules.history_size)  # no write
        row, = _materialize(row)
        # elementwise (no scatter: XLA:CPU runs a scatter as a slow unfused loop plus a copy)
        column = jnp.arange(rules.history_size)
        history = jnp.where(column == row, position[0], jnp.where(column == row + 1, position[1], history))
    # done flags are read per history word by an auto-reset `where` over the whole state
    terminated, truncated = _materialize(new.terminated, new.truncated)
    return new.replace(history=history, terminated=terminated, truncated=truncated)


def pick_action(legal: Array, x: Array) -> Array:
    """int32[]: the ``k``-th legal action (kind, then square), ``k = ((x >> 16) * n_legal) >> 16``
    for uint32 random bits ``x``, from ``legal`` (uint32[8]) with elementwise operations only. Undefined when
    no action is legal."""
    x = jnp.asarray(x, _U32)
    counts = [jnp.bitwise_count(legal[..., i]).astype(_U32) for i in range(8)]
    ends = [counts[0]]
    for c in counts[1:]:
        ends.append(ends[-1] + c)  # legal actions of kinds 0..i
    k = ((x >> 16) * ends[-1]) >> 16
    word, base, kind = legal[..., 0], jnp.zeros_like(k), jnp.zeros_like(k)
    for i in range(1, 8):  # the kind of the k-th action: the first with ends[i] > k
        later = ends[i - 1] <= k
        word = jnp.where(later, legal[..., i], word)
        base = jnp.where(later, ends[i - 1], base)
        kind = jnp.where(later, _U32(i), kind)
    rank = k - base  # its rank among the squares of its kind
    square = jnp.zeros_like(k)
    for width in (16, 8, 4, 2, 1):  # binary search for the rank-th set bit of the word
        low = jnp.bitwise_count(word & _U32((1 << width) - 1)).astype(_U32)
        skip = rank >= low
        rank = jnp.where(skip, rank - low, rank)
        word = jnp.where(skip, word >> width, word)
        square = jnp.where(skip, square + width, square)
    return (square * 8 + kind).astype(jnp.int32)


# For each of the 64 cells (row-major, row 0 on top): its square's bit, 0 for a light square.
_CELL_BITS = np.zeros(64, np.uint32)
for _q in range(bb.NUM_SQUARES):
    _r, _c = bb.row_col(_q)
    _CELL_BITS[8 * _r + _c] = 1 << _q


def _planes(bits: Array) -> Array:
    """int8[..., 8, 8]: 1 on the squares of ``bits``."""
    on = (bits[..., None] & _CELL_BITS) != 0
    return on.astype(jnp.int8).reshape(on.shape[:-1] + (8, 8))


def board(state: State) -> Array:
    """int8[8, 8]: channel 0 of the observation."""
    value = 1 + 2 * _planes(state.kings)
    return value * _planes(state.cur) - value * _planes(state.opp)


def observe(state: State) -> Array:
    """int8[8, 8, 2]: the board of the player to move and the piece that must jump on."""
    return jnp.stack([board(state), _planes(state.jumper)], axis=-1)
