"""Core tests of the Connect Four environment (``c4jax.games.connect_four.env`` and its board validation).

Everything here is checked against independent, plain numpy / python code written in
this file (gravity, the 69 four-cell lines, the design.md §2 shaped reward), never against
the library's own bitboards. Deterministic: every random draw uses a fixed key.

Notation for literal boards (row 0 = top, as in the public encoding):
  * ``X`` / ``O``: stones of the first / second player of the game;
  * ``x`` / ``o``: stones of the player to move / the opponent (public encoding 1 / -1);
  * ``.``: empty.
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from c4jax.games.connect_four import env
from c4jax.games.connect_four.board import check_boards
from c4jax.games.connect_four import rewards as shaped_lib
from c4jax.learning import backprop as backprop_lib

ROWS, COLS = 6, 7
ALLOWED_REWARDS = (-5.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5)
STATE_FIELDS = ("legal_mask", "done", "winner", "num_moves")

# ---------------------------------------------------------------------------------------
# Independent reference helpers (plain numpy / python, no c4jax code)
# ---------------------------------------------------------------------------------------

# (row step, column step) with row 0 on top: "diagonal_down" runs like \, "diagonal_up" like /.
_DIRECTIONS = {"horizontal": (0, 1), "vertical": (1, 0), "diagonal_down": (1, 1), "diagonal_up": (1, -1)}


def _make_lines():
    lines, names = [], []
    for r in range(ROWS):
        for c in range(COLS):
            for name, (dr, dc) in _DIRECTIONS.items():
                cells = [(r + k * dr, c + k * dc) for k in range(4)]
                if all(0 <= rr < ROWS and 0 <= cc < COLS for rr, cc in cells):
                    lines.append(cells)
                    names.append(name)
    return lines, names


LINES, LINE_DIRECTIONS = _make_lines()
LINE_FLAT = np.array([[r * COLS + c for r, c in line] for line in LINES])  # [69, 4]


def test_reference_has_69_lines():
    assert len(LINES) == 69
    assert len({frozenset(line) for line in LINE_FLAT.tolist()}) == 69  # all distinct
    counts = {d: LINE_DIRECTIONS.count(d) for d in _DIRECTIONS}
    assert counts == {"horizontal": 24, "vertical": 21, "diagonal_down": 12, "diagonal_up": 12}


def fours(boards: np.ndarray, value: int) -> np.ndarray:
    """bool[...]: the boards [..., 6, 7] hold four ``value`` stones in a line."""
    flat = np.asarray(boards).reshape(np.shape(boards)[:-2] + (ROWS * COLS,))
    return (flat[..., LINE_FLAT] == value).all(axis=-1).any(axis=-1)


def four_directions(board: np.ndarray, value: int) -> set[str]:
    """Directions of every four of ``value`` on one board."""
    flat = np.asarray(board).reshape(-1)
    hit = (flat[LINE_FLAT] == value).all(axis=-1)
    return {LINE_DIRECTIONS[i] for i in np.flatnonzero(hit)}


def drop_row(board, col: int):
    """Row where a stone dropped in ``col`` lands (largest empty row), or None if full."""
    for r in range(ROWS - 1, -1, -1):
        if board[r][col] == 0:
            return r
    return None


def board_from_moves(cols) -> np.ndarray:
    """int8[6, 7] of a move list, first player = +1, second = -1 (gravity by hand)."""
    b = np.zeros((ROWS, COLS), np.int8)
    for i, c in enumerate(cols):
        r = drop_row(b, c)
        assert r is not None, f"column {c} full at move {i}"
        b[r, c] = 1 if i % 2 == 0 else -1
    return b


def parse(rows) -> np.ndarray:
    """Literal board -> public int8[6, 7] (player to move = 1).

    ``x``/``o`` are already from the mover's point of view; ``X``/``O`` are the first and
    second player, and the stone count says which of them is to move.
    """
    assert len(rows) == ROWS and all(len(r) == COLS for r in rows)
    text = "".join(rows)
    if set(text) <= set("xo."):
        table = {"x": 1, "o": -1, ".": 0}
        return np.array([[table[ch] for ch in row] for row in rows], np.int8)
    assert set(text) <= set("XO.")
    first_to_move = (text.count("X") + text.count("O")) % 2 == 0
    s = 1 if first_to_move else -1
    table = {"X": s, "O": -s, ".": 0}
    return np.array([[table[ch] for ch in row] for row in rows], np.int8)


def _wins_at(board, r: int, c: int, v: int) -> bool:
    """A ``v`` stone on (r, c) would complete four (walks the four directions)."""
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        n = 1
        for sign in (1, -1):
            rr, cc = r + sign * dr, c + sign * dc
            while 0 <= rr < ROWS and 0 <= cc < COLS and board[rr][cc] == v:
                n += 1
                rr, cc = rr + sign * dr, cc + sign * dc
        if n >= 4:
            return True
    return False


def immediate_wins(board, v: int) -> set[int]:
    """Columns where a ``v`` stone dropped now would complete four."""
    out = set()
    for c in range(COLS):
        r = drop_row(board, c)
        if r is not None and _wins_at(board, r, c, v):
            out.add(c)
    return out


def reference_reward(board, action: int) -> float:
    """design.md §2 shaped reward of ``action`` on a public board (mover = 1), plain python."""
    board = [list(map(int, row)) for row in np.asarray(board)]
    if not 0 <= action < COLS or drop_row(board, action) is None:
        return -5.0
    r = drop_row(board, action)
    mover_before = immediate_wins(board, 1)
    opp_before = immediate_wins(board, -1)
    if action in mover_before:
        return 1.0
    board[r][action] = 1
    if all(board[0][c] != 0 for c in range(COLS)):
        return 0.0  # the board is full: a draw
    penalty = (-0.5 if mover_before else 0.0) + (-1.0 if immediate_wins(board, -1) else 0.0)
    if penalty != 0.0:
        return penalty
    return (1.0 if len(immediate_wins(board, 1)) >= 2 else 0.0) + (0.5 if action in opp_before else 0.0)


def assert_valid_boards(boards: np.ndarray):
    """Values in {-1, 0, 1}, gravity, and stone counts that a game reaches."""
    boards = np.asarray(boards)
    assert boards.dtype == np.int8
    assert np.isin(boards, (-1, 0, 1)).all()
    filled = boards != 0
    assert not (filled[..., :-1, :] & ~filled[..., 1:, :]).any(), "floating stone"
    diff = (boards == -1).sum(axis=(-1, -2)) - (boards == 1).sum(axis=(-1, -2))
    assert np.isin(diff, (0, 1)).all(), "impossible stone counts"


# Jitted entry points shared by the tests (compiled once per process).
step = jax.jit(env.step)
observe = jax.jit(env.observe)
from_board_jit = jax.jit(env.from_board)
shaped = jax.jit(shaped_lib.shaped_reward)


def reward_of(state, action) -> float:
    """design.md §2 shaped reward of playing ``action`` in ``state`` (c4jax.learning.rewards)."""
    return float(shaped(state, step(state, action), action))


def last_reward(states, moves) -> float:
    """The shaped reward of the last move of ``play(moves)``."""
    return float(shaped(states[-2], states[-1], moves[-1]))


def play(cols, state=None):
    """All states of a move list: [s0, s1, ..., sN]."""
    states = [env.init() if state is None else state]
    for c in cols:
        states.append(step(states[-1], c))
    return states


# ---------------------------------------------------------------------------------------
# 1. Hand-played games: wins in every direction, a draw, gravity, illegal moves
# ---------------------------------------------------------------------------------------

WIN_CASES = {
    "first_horizontal": ([0, 0, 1, 1, 2, 2, 3], 1, "horizontal", [
        ".......",
        ".......",
        ".......",
        ".......",
        "OOO....",
        "XXXX...",
    ]),
    "second_horizontal": ([6, 0, 6, 1, 5, 2, 5, 3], -1, "horizontal", [
        ".......",
        ".......",
        ".......",
        ".......",
        ".....XX",
        "OOOO.XX",
    ]),
    "first_vertical": ([0, 1, 0, 1, 0, 1, 0], 1, "vertical", [
        ".......",
        ".......",
        "X......",
        "XO.....",
        "XO.....",
        "XO.....",
    ]),
    "second_vertical": ([6, 0, 5, 0, 6, 0, 5, 0], -1, "vertical", [
        ".......",
        ".......",
        "O......",
        "O......",
        "O....XX",
        "O....XX",
    ]),
    "first_diagonal_up": ([0, 1, 1, 2, 2, 3, 3, 3, 2, 6, 3], 1, "diagonal_up", [
        ".......",
        ".......",
        "...X...",
        "..XO...",
        ".XXX...",
        "XOOO..O",
    ]),
    "first_diagonal_down": ([6, 5, 5, 4, 4, 3, 3, 3, 4, 0, 3], 1, "diagonal_down", [
        ".......",
        ".......",
        "...X...",
        "...OX..",
        "...XXX.",
        "O..OOOX",
    ]),
    "second_diagonal_up": ([6, 0, 1, 1, 2, 2, 3, 3, 3, 2, 6, 3], -1, "diagonal_up", [
        ".......",
        ".......",
        "...O...",
        "..OX...",
        ".OOO..X",
        "OXXX..X",
    ]),
    "second_diagonal_down": ([0, 6, 5, 5, 4, 4, 3, 3, 3, 4, 0, 3], -1, "diagonal_down", [
        ".......",
        ".......",
        "...O...",
        "...XO..",
        "X..OOO.",
        "X..XXXO",
    ]),
}

# A full-board draw found by random play; verified independently below.
DRAW_MOVES = [3, 5, 5, 0, 6, 5, 3, 2, 2, 0, 1, 5, 0, 5, 1, 3, 4, 4, 4, 6, 5, 3, 6, 0, 6, 1, 4,
              1, 3, 4, 3, 4, 1, 1, 2, 6, 2, 2, 2, 0, 0, 6]
DRAW_BOARD = [
    "XOXXOXO",
    "OXOXOOO",
    "OOXOXOX",
    "XOXOXOX",
    "OXXXOXO",
    "OXOXXOX",
]
# A draw whose last move (O in column 4) also fills X's winning cell: it would be a
# +0.5 block, but a draw scores 0.
BLOCKING_DRAW_MOVES = [3, 6, 3, 5, 1, 6, 1, 2, 5, 5, 5, 5, 3, 2, 6, 6, 0, 0, 4, 1, 5, 4, 1, 2, 2,
                       0, 2, 1, 2, 1, 6, 3, 0, 0, 3, 4, 0, 6, 4, 4, 3, 4]
BLOCKING_DRAW_BEFORE_LAST = [
    "XOXX.XO",
    "OOXXOOX",
    "XXXOXXO",
    "OOOXOOX",
    "OXOXOXO",
    "XXOXXOO",
]


def test_init_shapes_and_dtypes():
    s = env.init()
    chex.assert_shape(s.legal_mask, (7,))
    chex.assert_type([s.legal_mask, s.done], bool)
    chex.assert_type([s.winner, s.num_moves], jnp.int32)
    assert np.asarray(s.legal_mask).all() and not bool(s.done)
    assert int(s.winner) == 0 and int(s.num_moves) == 0
    assert bool(s.first_player_to_move)
    board = observe(s)
    chex.assert_shape(board, (6, 7))
    assert board.dtype == jnp.int8 and not np.asarray(board).any()
    # init(key) ignores the key.
    chex.assert_trees_all_equal(env.init(jax.random.key(3)), s)


@pytest.mark.parametrize("name", list(WIN_CASES))
def test_wins_in_every_direction(name):
    moves, winner, direction, rows = WIN_CASES[name]
    literal = parse(rows)
    # The literal board is the hand-built one (independent gravity), from the loser's view.
    by_hand = board_from_moves(moves) * (1 if len(moves) % 2 == 0 else -1)
    np.testing.assert_array_equal(literal, by_hand)
    assert four_directions(literal, -1) == {direction}  # the last mover (-1) has the four
    assert not fours(literal, 1)

    states = play(moves)
    for i, s in enumerate(states[:-1]):
        assert not bool(s.done) and int(s.winner) == 0, f"game over too early at move {i}"
        assert bool(s.first_player_to_move) == (i % 2 == 0)
    final = states[-1]
    assert bool(final.done)
    assert int(final.winner) == winner
    assert last_reward(states, moves) == 1.0
    np.testing.assert_array_equal(final.rewards, [winner, -winner])  # the game protocol's result
    assert int(final.num_moves) == len(moves)
    assert not np.asarray(final.legal_mask).any()
    np.testing.assert_array_equal(np.asarray(observe(final)), literal)

    # The same finished board through from_board.
    rebuilt = env.from_board(literal)
    assert bool(rebuilt.done) and int(rebuilt.winner) == winner
    assert int(rebuilt.num_moves) == len(moves)
    assert not np.asarray(rebuilt.legal_mask).any()


@pytest.mark.parametrize("moves,rows", [(DRAW_MOVES, DRAW_BOARD),
                                        (BLOCKING_DRAW_MOVES, None)])
def test_full_board_draw(moves, rows):
    assert len(moves) == 42
    final_board = board_from_moves(moves)  # raises if a column overflows
    assert (final_board != 0).all()
    assert (final_board == 1).sum() == 21 and (final_board == -1).sum() == 21
    # No four for anyone on the full board, hence on no earlier position either.
    assert not fours(final_board, 1) and not fours(final_board, -1)
    if rows is not None:
        np.testing.assert_array_equal(parse(rows), final_board)  # 42 stones: X to "move"

    states = play(moves)
    for i, s in enumerate(states[:-1]):
        assert not bool(s.done), f"game over too early at move {i}"
        np.testing.assert_array_equal(np.asarray(s.legal_mask), np.asarray(observe(s))[0] == 0)
    final = states[-1]
    assert bool(final.done) and int(final.winner) == 0
    assert last_reward(states, moves) == 0.0
    np.testing.assert_array_equal(final.rewards, [0.0, 0.0])
    assert int(final.num_moves) == 42
    assert not np.asarray(final.legal_mask).any()
    np.testing.assert_array_equal(np.asarray(observe(final)), final_board)

    rebuilt = env.from_board(final_board)
    assert bool(rebuilt.done) and int(rebuilt.winner) == 0 and int(rebuilt.num_moves) == 42
    assert not np.asarray(rebuilt.legal_mask).any()


def test_draw_ending_move_scores_zero_even_when_it_blocks():
    before = parse(BLOCKING_DRAW_BEFORE_LAST)
    np.testing.assert_array_equal(before, -board_from_moves(BLOCKING_DRAW_MOVES[:41]))
    # Column 4 is the only one left, and it is a cell where the opponent would win.
    assert immediate_wins(before, -1) == {4} and immediate_wins(before, 1) == set()
    s = env.from_board(before)
    np.testing.assert_array_equal(np.asarray(s.legal_mask), [0, 0, 0, 0, 1, 0, 0])
    after = step(s, 4)
    assert reward_of(s, 4) == 0.0
    assert bool(after.done) and int(after.winner) == 0 and int(after.num_moves) == 42
    assert reference_reward(before, 4) == 0.0
    # Played from the start, the last (O) move is the same.
    assert last_reward(play(BLOCKING_DRAW_MOVES), BLOCKING_DRAW_MOVES) == 0.0


def test_gravity_and_perspective_swap():
    s0, s1, s2, s3, s4 = play([3, 3, 3, 0])
    b1 = np.asarray(observe(s1))  # O to move: X's stone is -1 at the bottom of column 3
    expected1 = np.zeros((6, 7), np.int8)
    expected1[5, 3] = -1
    np.testing.assert_array_equal(b1, expected1)
    b2 = np.asarray(observe(s2))  # X to move: X bottom, O on top of it
    expected2 = np.zeros((6, 7), np.int8)
    expected2[5, 3], expected2[4, 3] = 1, -1
    np.testing.assert_array_equal(b2, expected2)
    b4 = np.asarray(observe(s4))
    np.testing.assert_array_equal(b4, parse([
        ".......",
        ".......",
        ".......",
        "...X...",
        "...O...",
        "O..X...",
    ]))
    assert b4[3, 3] == 1 and b4[5, 0] == -1  # X is to move after 4 moves
    for i, s in enumerate((s0, s1, s2, s3, s4)):
        assert int(s.num_moves) == i
        assert bool(s.first_player_to_move) == (i % 2 == 0)
    # A column takes exactly six stones, filled bottom to top.
    states = play([5] * 6)
    for k, s in enumerate(states[1:], start=1):
        col = np.asarray(observe(s))[:, 5]
        assert (col[: 6 - k] == 0).all() and (col[6 - k:] != 0).all()
        np.testing.assert_array_equal(np.asarray(s.legal_mask), [1, 1, 1, 1, 1, k < 6, 1])


@pytest.mark.parametrize("prefix,action,winner", [
    ([0] * 6, 0, -1),  # full column, first player moves -> second player wins
    ([0] * 6 + [1], 0, 1),  # full column, second player moves -> first player wins
    ([], -1, -1),
    ([], 7, -1),
    ([3], -1, 1),
    ([3], 7, 1),
    ([3, 3], 100, -1),
    ([3, 3, 4], -100, 1),
])
def test_illegal_moves(prefix, action, winner):
    before = play(prefix)[-1]
    after = step(before, action)
    assert reward_of(before, action) == -5.0
    assert bool(after.done)
    assert int(after.winner) == winner
    assert not np.asarray(after.legal_mask).any()
    # No stone is placed.
    assert int(after.num_moves) == int(before.num_moves)
    np.testing.assert_array_equal(np.asarray(observe(after)), np.asarray(observe(before)))
    # Un-jitted step gives the same result.
    chex.assert_trees_all_equal(env.step(before, action), after)


def _finished_states():
    return {
        "win": play(WIN_CASES["first_vertical"][0])[-1],
        "second_win": play(WIN_CASES["second_diagonal_up"][0])[-1],
        "draw": play(DRAW_MOVES)[-1],
        "illegal": step(play([2, 2])[-1], 9),
    }


@pytest.mark.parametrize("which", ["win", "second_win", "draw", "illegal"])
def test_stepping_a_finished_game_is_a_noop(which):
    done = _finished_states()[which]
    assert bool(done.done)
    for action in range(-2, 9):
        chex.assert_trees_all_equal(step(done, action), done)  # every field, bitboards too
    chex.assert_trees_all_equal(env.step(done, 3), done)


# ---------------------------------------------------------------------------------------
# 2. Shaped reward (design.md §2), one hand-built position per case
# ---------------------------------------------------------------------------------------

REWARD_CASES = {
    # x completes a horizontal four.
    "win": ([
        ".......",
        ".......",
        ".......",
        ".......",
        "ooo....",
        "xxx....",
    ], 3, 1.0, True),
    # x wins (col 4) while o also has a playable win (col 0): the win counts.
    "win_despite_opponent_threat": ([
        ".......",
        ".......",
        ".......",
        "o......",
        "o......",
        "oxxx...",
    ], 4, 1.0, True),
    # x makes _xxx_ on the bottom row: two immediate winning columns (1 and 5).
    "double_threat": ([
        ".......",
        ".......",
        ".......",
        ".......",
        "..oo...",
        "..xx...",
    ], 4, 1.0, False),
    # o has an open bottom-row win in column 3 that x ignores.
    "leaves_win": ([
        ".......",
        ".......",
        ".......",
        ".......",
        "xx.....",
        "ooo....",
    ], 6, -1.0, False),
    # o wins on (row 4, col 3) once it is playable: x plays directly under it.
    "plays_under_opponent_win": ([
        ".......",
        ".......",
        ".......",
        "x......",
        "ooo....",
        "xox....",
    ], 3, -1.0, False),
    # x fills the cell where o would have won.
    "block": ([
        ".......",
        ".......",
        ".......",
        ".......",
        "xx.....",
        "ooo....",
    ], 3, 0.5, False),
    # x could win in column 3 but plays elsewhere (o has no playable win).
    "missed_win": ([
        ".......",
        ".......",
        ".......",
        ".......",
        "ooo....",
        "xxx....",
    ], 6, -0.5, False),
    "missed_win_gap": ([
        ".......",
        ".......",
        ".......",
        ".......",
        "ooo....",
        "xxx....",
    ], 4, -0.5, False),
    # x misses its win (col 3) and leaves o's vertical win in column 6.
    "missed_and_leaves_win": ([
        ".......",
        ".......",
        ".......",
        "......o",
        "......o",
        "xxx...o",
    ], 4, -1.5, False),
    # x blocks o's column-6 win but misses its own win: the penalty wins over the bonus.
    "missed_win_while_blocking": ([
        ".......",
        ".......",
        ".......",
        "......o",
        "......o",
        "xxx...o",
    ], 6, -0.5, False),
    # Nothing happens.
    "quiet": ([
        ".......",
        ".......",
        ".......",
        ".......",
        "...o...",
        "..xxo..",
    ], 6, 0.0, False),
    # One immediate winning column (col 1) is not a forced win: 0.
    "single_threat": ([
        ".......",
        ".......",
        ".......",
        ".......",
        "...o...",
        "..xxo..",
    ], 0, 0.0, False),
    "first_move": ([
        ".......",
        ".......",
        ".......",
        ".......",
        ".......",
        ".......",
    ], 3, 0.0, False),
}


@pytest.mark.parametrize("name", list(REWARD_CASES))
def test_reward_cases(name):
    rows, action, reward, done = REWARD_CASES[name]
    board = parse(rows)
    assert reference_reward(board, action) == reward  # the test's own reference agrees
    s = env.from_board(board)
    assert not bool(s.done)
    after = step(s, action)
    assert reward_of(s, action) == reward
    assert bool(after.done) == done
    if done:  # the mover won: it is the first player iff it moved on an even count
        assert int(after.winner) == (1 if int(s.num_moves) % 2 == 0 else -1)
    else:
        assert int(after.winner) == 0


def test_plays_under_opponent_win_is_the_only_leaving_column():
    # In "plays_under_opponent_win", every other column is harmless (0), so the -1 is
    # caused by opening (row 4, col 3), not by an already playable threat.
    board = parse(REWARD_CASES["plays_under_opponent_win"][0])
    s = env.from_board(board)
    rewards = [reward_of(s, a) for a in range(7)]
    assert rewards == [0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0]
    assert rewards == [reference_reward(board, a) for a in range(7)]


# ---------------------------------------------------------------------------------------
# 3. Reward back-propagation (design.md §2)
# ---------------------------------------------------------------------------------------

def test_backprop_hand_computed_first_mover_wins():
    # 7 moves, the first mover (A: moves 0, 2, 4, 6, T=4) wins; B (moves 1, 3, 5, T=3) loses.
    # Padded to 10 with garbage rewards that must be masked out.
    rewards = jnp.array([0, 0, 0.5, -1, 0, 0, 1, 7, 0, -3], jnp.float32)
    valid = jnp.arange(10) < 7
    out = backprop_lib.backprop_episode(rewards, valid, jnp.float32(1.0))
    expected = np.array([
        (1 / 4) ** 3,  # A, t=1 of 4
        -(1 / 3) ** 3,  # B, t=1 of 3
        0.5,  # A, kept
        -1.0,  # B, kept
        (3 / 4) ** 3,  # A, t=3 of 4
        -1.0,  # B, t=3 of 3: (3/3)**3
        1.0,  # A, the winning move, kept
        0.0, 0.0, 0.0,  # padding
    ], np.float32)
    chex.assert_type(out, jnp.float32)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6, atol=1e-7)
    # Concrete numbers written out as well.
    np.testing.assert_allclose(np.asarray(out)[:7],
                               [0.015625, -0.037037037, 0.5, -1.0, 0.421875, -1.0, 1.0], rtol=1e-6)


def test_backprop_second_mover_wins_and_exponent():
    # 6 moves; the first mover loses (outcome -1); each player has T = 3 moves.
    rewards = jnp.array([0, 0, 0, 0.5, -1.5, 1], jnp.float32)
    valid = jnp.ones(6, bool)
    out = backprop_lib.backprop_episode(rewards, valid, jnp.float32(-1.0))
    expected = [-(1 / 3) ** 3, (1 / 3) ** 3, -(2 / 3) ** 3, 0.5, -1.5, 1.0]
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)
    out1 = backprop_lib.backprop_episode(rewards, valid, jnp.float32(-1.0), n=1.0)
    np.testing.assert_allclose(np.asarray(out1), [-1 / 3, 1 / 3, -2 / 3, 0.5, -1.5, 1.0], rtol=1e-6)


def test_backprop_draw_keeps_zeros():
    rewards = jnp.array([0, 0.5, 0, 0, -0.5, 0, 0, 0, 9], jnp.float32)
    valid = jnp.arange(9) < 8
    out = backprop_lib.backprop_episode(rewards, valid, jnp.float32(0.0))
    np.testing.assert_array_equal(np.asarray(out), [0, 0.5, 0, 0, -0.5, 0, 0, 0, 0])


def test_backprop_vmapped_batch_of_different_lengths():
    L = 9
    rewards = np.zeros((4, L), np.float32)
    rewards[0, :7] = [0, 0, 0.5, -1, 0, 0, 1]
    rewards[1, :2] = [0, -5]  # second mover disqualified on its first move
    rewards[2, :9] = [0, 0, 0, 0, 0, 0, 0, 0, 0]
    rewards[3, :1] = [1]  # a single (winning) move, e.g. from a random initial board
    lengths = np.array([7, 2, 9, 1])
    valid = np.arange(L)[None] < lengths[:, None]
    outcome = np.array([1, 1, -1, 1], np.float32)
    out = np.asarray(jax.jit(jax.vmap(backprop_lib.backprop_episode))(rewards, valid, outcome))
    expected = np.zeros((4, L), np.float32)
    expected[0, :7] = [1 / 64, -1 / 27, 0.5, -1.0, 27 / 64, -1.0, 1.0]
    expected[1, :2] = [1.0, -5.0]  # A: t=1 of 1
    # 9 moves, first mover (T=5) loses, second (T=4) wins.
    expected[2, :9] = [-(1 / 5) ** 3, (1 / 4) ** 3, -(2 / 5) ** 3, (2 / 4) ** 3, -(3 / 5) ** 3,
                       (3 / 4) ** 3, -(4 / 5) ** 3, 1.0, -1.0]
    expected[3, :1] = [1.0]
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-7)
    # Row by row, the same as the single-episode call.
    for i in range(4):
        np.testing.assert_allclose(
            np.asarray(backprop_lib.backprop_episode(rewards[i], valid[i], outcome[i])), out[i], rtol=1e-6)


# ---------------------------------------------------------------------------------------
# 4. Invariants over thousands of random playouts
# ---------------------------------------------------------------------------------------

N_GAMES = 4096


def _playout(key):
    """One random game as the stacked states s_0..s_42 and the 42 actions."""
    def body(state, k):
        action = env.random_legal_action(k, state.legal_mask)
        return env.step(state, action), (state, action)

    final, (states, actions) = jax.lax.scan(body, env.init(), jax.random.split(key, env.MAX_MOVES))
    states = jax.tree.map(lambda h, f: jnp.concatenate([h, f[None]]), states, final)
    return states, actions


_playout_jit = jax.jit(_playout)
_playouts_jit = jax.jit(jax.vmap(_playout))


def _to_numpy(states, actions) -> dict:
    """Stacked states ([43] or [G, 43]) -> numpy fields, public boards and actions."""
    observe_all = jax.vmap(env.observe)
    if states.done.ndim == 2:
        observe_all = jax.vmap(observe_all)
    out = {f: np.asarray(getattr(states, f)) for f in STATE_FIELDS}
    out["first"] = np.asarray(states.first_player_to_move)
    out["board"] = np.asarray(observe_all(states))
    out["action"] = np.asarray(actions)
    # the shaped reward of move t, at t + 1 (index 0: no move yet; 0 once the game is over)
    before = jax.tree.map(lambda x: x[:, :-1] if states.done.ndim == 2 else x[:-1], states)
    after = jax.tree.map(lambda x: x[:, 1:] if states.done.ndim == 2 else x[1:], states)
    reward_fn = jax.vmap(shaped) if states.done.ndim == 2 else shaped
    moved = np.asarray(reward_fn(before, after, jnp.asarray(actions)))
    out["reward"] = np.concatenate([np.zeros(moved.shape[:-1] + (1,), np.float32), moved], axis=-1)
    out["states"] = states
    return out


@pytest.fixture(scope="module")
def playouts():
    keys = jax.random.split(jax.random.key(20240611), N_GAMES)
    states, actions = _playouts_jit(keys)
    return {"keys": keys, **_to_numpy(states, actions)}


def _check_trajectories(p):
    """Invariants of trajectories [G, 43] of states (numpy dict from ``_to_numpy``)."""
    board, done, winner, nm = p["board"], p["done"], p["winner"], p["num_moves"]
    G = board.shape[0]
    assert board.shape == (G, 43, 6, 7)
    assert_valid_boards(board)
    stones = (board != 0).sum(axis=(-1, -2))
    np.testing.assert_array_equal(nm, stones)
    assert (nm <= 42).all()
    np.testing.assert_array_equal(p["first"], nm % 2 == 0)
    np.testing.assert_array_equal(p["legal_mask"], (board[..., 0, :] == 0) & ~done[..., None])
    assert np.isin(p["reward"], ALLOWED_REWARDS).all()
    # Four-in-a-row bookkeeping, checked with the independent 69-line test.
    cur_four, opp_four = fours(board, 1), fours(board, -1)
    full = stones == 42
    assert not cur_four.any(), "the player to move never has four in a row"
    np.testing.assert_array_equal(done, opp_four | full)
    np.testing.assert_array_equal(winner != 0, opp_four)
    # The last mover (the -1 stones) is the first player iff the stone count is odd.
    np.testing.assert_array_equal(winner[opp_four], np.where(nm[opp_four] % 2 == 1, 1, -1))
    assert np.isin(winner, (-1, 0, 1)).all()
    # Transitions: a live game gets the action's stone and swaps perspective; a finished
    # one stays put (random legal actions are never illegal here).
    for t in range(42):
        live = ~done[:, t]
        a = p["action"][:, t]
        assert p["legal_mask"][live, t][np.arange(live.sum()), a[live]].all()
        expected = board[:, t].copy()
        cols = board[:, t] != 0
        heights = cols.sum(axis=1)  # [G, 7] stones per column
        rows = 5 - heights[np.arange(G), a]
        expected[live, rows[live], a[live]] = 1
        np.testing.assert_array_equal(board[live, t + 1], -expected[live])
        np.testing.assert_array_equal(nm[live, t + 1], nm[live, t] + 1)
        for f in ("board", "done", "winner", "num_moves", "legal_mask"):
            np.testing.assert_array_equal(p[f][~live, t + 1], p[f][~live, t])
        np.testing.assert_array_equal(p["reward"][~live, t + 1], 0.0)  # no move, no reward
    assert done[:, -1].all(), "every game ends within 42 moves"
    assert not done[:, 0].any()


def test_vmapped_playouts_invariants(playouts):
    _check_trajectories(playouts)
    # Both players win sometimes, and the move counts cover the whole range.
    final_winner = playouts["winner"][:, -1]
    assert (final_winner == 1).sum() > 1000 and (final_winner == -1).sum() > 1000
    lengths = playouts["num_moves"][:, -1]
    assert lengths.min() <= 9 and lengths.max() >= 40
    # All reward values show up in random play (-5 needs an illegal move).
    seen = set(np.unique(playouts["reward"]).tolist())
    assert seen >= set(ALLOWED_REWARDS) - {-5.0}, seen


def test_single_game_matches_vmapped(playouts):
    for i in range(6):
        states, actions = _playout_jit(playouts["keys"][i])
        single = _to_numpy(states, actions)
        _check_trajectories({k: v[None] for k, v in single.items() if k != "states"})
        for f in ("board", "action", "reward", *STATE_FIELDS):
            np.testing.assert_array_equal(single[f], playouts[f][i])
    # And step by step with the jitted single-game step (no scan).
    i = 7
    s = env.init()
    for t in range(42):
        chex.assert_trees_all_equal(s, jax.tree.map(lambda x: x[i, t], playouts["states"]))
        if bool(s.done):
            break
        s = step(s, int(playouts["action"][i, t]))


def test_from_board_reproduces_playout_states(playouts):
    states = playouts["states"]
    flat = jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), states)
    boards = playouts["board"].reshape(-1, 6, 7)
    # Every reachable board passes validation.
    check_boards(boards, batched=True)
    rebuilt = jax.jit(jax.vmap(env.from_board))(boards)
    # Bitboards, threat sets and the public fields all match the incremental ones.
    for f in ("cur", "opp", "cur_wins", "opp_wins", "legal_mask", "done", "winner", "num_moves"):
        chex.assert_trees_all_equal(getattr(rebuilt, f), getattr(flat, f))
    np.testing.assert_array_equal(np.asarray(rebuilt.first_player_to_move),
                                  np.asarray(flat.first_player_to_move))
    # The concrete (validating) path agrees on a few boards.
    for j in range(0, boards.shape[0], boards.shape[0] // 25):
        one = env.from_board(boards[j])
        for f in STATE_FIELDS:
            np.testing.assert_array_equal(np.asarray(getattr(one, f)), np.asarray(getattr(rebuilt, f))[j])


# ---------------------------------------------------------------------------------------
# 5. Shaped reward against the independent reference on random games
# ---------------------------------------------------------------------------------------

def test_reward_matches_reference_on_random_games(playouts):
    board, action, reward, done = playouts["board"], playouts["action"], playouts["reward"], playouts["done"]
    # The first 2048 games, plus every game with a rare reward (+1.5) or a draw.
    rare = np.flatnonzero((reward == 1.5).any(axis=1) | (playouts["winner"][:, -1] == 0))
    games = sorted(set(range(2048)) | set(rare.tolist()))
    checked = {}
    mismatches = []
    for g in games:
        for t in range(42):
            if done[g, t]:
                break
            want = reference_reward(board[g, t], int(action[g, t]))
            got = float(reward[g, t + 1])
            checked[want] = checked.get(want, 0) + 1
            if got != want:
                mismatches.append((g, t, int(action[g, t]), got, want))
    assert not mismatches, mismatches[:5]
    assert sum(checked.values()) > 40000
    # Every reward case was exercised.
    assert set(checked) == {-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5}, checked


def test_reward_matches_reference_for_every_action(playouts):
    # All 7 actions (full columns included: -5) on a sample of mid-game positions.
    boards = playouts["board"][:60, ::3].reshape(-1, 6, 7)
    live = ~playouts["done"][:60, ::3].reshape(-1)
    boards = boards[live]
    states = jax.vmap(env.from_board)(jnp.asarray(boards))
    after = jax.jit(jax.vmap(jax.vmap(env.step, (None, 0)), (0, None)))(states, jnp.arange(7))
    rewards = np.stack([np.asarray(shaped(states, jax.tree.map(lambda x: x[:, a], after), jnp.full(len(boards), a)))
                        for a in range(7)], axis=1)
    expected = np.array([[reference_reward(b, a) for a in range(7)] for b in boards])
    np.testing.assert_array_equal(rewards, expected)
    assert (expected == -5.0).any()


# ---------------------------------------------------------------------------------------
# 6. jit and no-jit give identical results
# ---------------------------------------------------------------------------------------

class JitConsistencyTest(chex.TestCase):

    def setUp(self):
        super().setUp()
        self.board = parse([
            ".......",
            ".......",
            ".......",
            "......o",
            "....x.o",
            "xxx.o.o",
        ])

    @chex.variants(with_jit=True, without_jit=True)
    def test_step_and_observe(self):
        step_v, observe_v = self.variant(env.step), self.variant(env.observe)
        state = env.from_board(self.board)
        for a in (-1, 0, 3, 4, 6, 7):
            got = step_v(state, jnp.int32(a))
            chex.assert_trees_all_equal(got, step(state, a))
            chex.assert_trees_all_equal(observe_v(got), observe(got))
        np.testing.assert_array_equal(np.asarray(observe_v(state)), self.board)
        reward_v = self.variant(shaped_lib.shaped_reward)
        for a, want in ((3, 1.0), (5, -1.5), (6, -0.5)):
            self.assertEqual(float(reward_v(state, step_v(state, jnp.int32(a)), jnp.int32(a))), want)

    @chex.variants(with_jit=True, without_jit=True)
    def test_from_board(self):
        got = self.variant(env.from_board)(jnp.asarray(self.board))
        chex.assert_trees_all_equal(got, from_board_jit(self.board))
        chex.assert_trees_all_equal(got, env.from_board(self.board))
        np.testing.assert_array_equal(np.asarray(got.legal_mask), np.ones(7, bool))
        self.assertEqual(int(got.num_moves), 8)

    @chex.variants(with_jit=True, without_jit=True)
    def test_random_initial_state(self):
        key = jax.random.key(7)
        got = self.variant(env.random_initial_state)(key)
        chex.assert_trees_all_equal(got, jax.jit(env.random_initial_state)(key))
        self.assertFalse(bool(got.done))

    @chex.variants(with_jit=True, without_jit=True)
    def test_backprop_rewards(self):
        fn = self.variant(functools.partial(backprop_lib.backprop_episode, n=3.0))
        rewards = jnp.array([0, 0, 0.5, -1, 0, 0, 1, 0], jnp.float32)
        valid = jnp.arange(8) < 7
        got = fn(rewards, valid, jnp.float32(1.0))
        chex.assert_trees_all_close(got, jax.jit(backprop_lib.backprop_episode)(rewards, valid, jnp.float32(1.0)),
                                    rtol=0, atol=0)
        np.testing.assert_allclose(np.asarray(got), [1 / 64, -1 / 27, 0.5, -1, 27 / 64, -1, 1, 0],
                                   rtol=1e-6)


# ---------------------------------------------------------------------------------------
# 7. Left-right mirror symmetry
# ---------------------------------------------------------------------------------------

def test_mirror_symmetry():
    keys = jax.random.split(jax.random.key(99), 512)

    @jax.jit
    def run(keys):
        s = jax.vmap(env.random_initial_state)(keys)
        board = jax.vmap(env.observe)(s)
        mirror = jax.vmap(env.from_board)(jnp.flip(board, axis=-1))
        steps = jax.vmap(jax.vmap(env.step, (None, 0)), (0, None))
        rewards = jax.vmap(jax.vmap(shaped_lib.shaped_reward, (None, 0, 0)), (0, 0, None))
        cols = jnp.arange(7)
        after, after_m = steps(s, cols), steps(mirror, cols)
        return board, s, mirror, after, after_m, rewards(s, after, cols), rewards(mirror, after_m, cols)

    board, s, mirror, after, after_m, reward, reward_m = run(keys)
    board = np.asarray(board)
    np.testing.assert_array_equal(np.asarray(jax.vmap(env.observe)(mirror)), board[..., ::-1])
    np.testing.assert_array_equal(np.asarray(mirror.legal_mask), np.asarray(s.legal_mask)[:, ::-1])
    np.testing.assert_array_equal(np.asarray(reward), np.asarray(reward_m)[:, ::-1], err_msg="reward")
    for f in ("done", "winner", "num_moves", "legal_mask"):
        a, b = np.asarray(getattr(after, f)), np.asarray(getattr(after_m, f))[:, ::-1]
        if f == "legal_mask":
            b = b[..., ::-1]
        np.testing.assert_array_equal(a, b, err_msg=f)
    obs = np.asarray(jax.vmap(jax.vmap(env.observe))(after))
    obs_m = np.asarray(jax.vmap(jax.vmap(env.observe))(after_m))
    np.testing.assert_array_equal(obs, obs_m[:, ::-1, :, ::-1])
    # The sample is not trivial: many distinct rewards, some asymmetric positions.
    assert len(np.unique(np.asarray(reward))) >= 5
    assert (board != board[..., ::-1]).any(axis=(1, 2)).mean() > 0.8


# ---------------------------------------------------------------------------------------
# 8. Random initial states and random legal actions
# ---------------------------------------------------------------------------------------

def test_random_initial_state_batch(playouts):
    n = 4096
    keys = jax.random.split(jax.random.key(123), n)
    s = jax.jit(jax.vmap(env.random_initial_state))(keys)
    board = np.asarray(jax.vmap(env.observe)(s))
    done, nm = np.asarray(s.done), np.asarray(s.num_moves)
    assert not done.any()
    assert np.asarray(s.legal_mask).any(axis=1).all()
    assert_valid_boards(board)
    assert not fours(board, 1).any() and not fours(board, -1).any()
    np.testing.assert_array_equal(nm, (board != 0).sum(axis=(1, 2)))
    assert (np.asarray(s.winner) == 0).all() and (nm < 42).all()
    np.testing.assert_array_equal(np.asarray(s.legal_mask), board[:, 0, :] == 0)
    # Internally consistent with a rebuild from the public board.
    rebuilt = jax.vmap(env.from_board)(jnp.asarray(board))
    for f in ("cur", "opp", "cur_wins", "opp_wins", "legal_mask", "done", "num_moves"):
        chex.assert_trees_all_equal(getattr(rebuilt, f), getattr(s, f))
    # Distribution: a uniform position of a uniform random game. With L the game length,
    # P(empty board) = E[1/L] and E[num_moves] = E[(L-1)/2]; estimate both from the
    # independent playouts. Tolerances are ~5 standard errors.
    lengths = playouts["num_moves"][:, -1].astype(np.float64)
    p_empty = (1 / lengths).mean()
    freq_empty = (nm == 0).mean()
    assert abs(freq_empty - p_empty) < 5 * np.sqrt(p_empty * (1 - p_empty) / n) + 0.005, (freq_empty, p_empty)
    mean_moves = ((lengths - 1) / 2).mean()
    assert abs(nm.mean() - mean_moves) < 0.6, (nm.mean(), mean_moves)
    # Both players to move, and deep positions too.
    assert 0.3 < (nm % 2 == 0).mean() < 0.7 and nm.max() >= 35
    # Different keys give different positions.
    distinct = len({b.tobytes() for b in board})
    assert distinct > n // 2


def test_random_initial_state_is_deterministic():
    f = jax.jit(env.random_initial_state)
    a, b = f(jax.random.key(5)), f(jax.random.key(5))
    chex.assert_trees_all_equal(a, b)
    others = [f(jax.random.key(k)) for k in range(6, 12)]
    boards = {np.asarray(observe(s)).tobytes() for s in [a, *others]}
    assert len(boards) >= 5


def test_random_legal_action():
    mask = jnp.array([True, False, True, False, False, False, True])
    keys = jax.random.split(jax.random.key(0), 6000)
    actions = np.asarray(jax.jit(jax.vmap(env.random_legal_action, (0, None)))(keys, mask))
    counts = np.bincount(actions, minlength=7)
    assert counts[[1, 3, 4, 5]].sum() == 0
    assert (np.abs(counts[[0, 2, 6]] - 2000) < 200).all(), counts
    none = env.random_legal_action(jax.random.key(1), jnp.zeros(7, bool))
    assert int(none) == 0 and none.dtype == jnp.int32


# ---------------------------------------------------------------------------------------
# 9. from_board: validation of concrete input
# ---------------------------------------------------------------------------------------

BAD_BOARDS = {
    "wrong_shape": (np.zeros((7, 6), np.int8), "shape"),
    "batched_shape": (np.zeros((1, 6, 7), np.int8), "shape"),
    "flat": (np.zeros(42, np.int8), "shape"),
    "float": (np.zeros((6, 7), np.float32), "integers"),
    "bool": (np.zeros((6, 7), bool), "integers"),
    "value_2": (np.where(np.arange(42).reshape(6, 7) == 38, 2, 0).astype(np.int8), r"-1, 0 or 1.*\[2\]"),
    "floating_stone": (parse([
        ".......",
        ".......",
        ".......",
        "...o...",
        ".......",
        "...x...",
    ]), "floating stone"),
    "mover_two_more": (parse([
        ".......",
        ".......",
        ".......",
        ".......",
        ".......",
        "xx.....",
    ]), "impossible stone counts"),
    "mover_one_more": (parse([
        ".......",
        ".......",
        ".......",
        ".......",
        ".......",
        "...x...",
    ]), "impossible stone counts"),
    "opponent_two_more": (parse([
        ".......",
        ".......",
        ".......",
        ".......",
        ".......",
        "oo.....",
    ]), "impossible stone counts"),
    "mover_has_four": (parse([
        ".......",
        ".......",
        ".......",
        ".......",
        "oooo...",
        "xxxx...",
    ]), "four in a row for the player to move"),
}


@pytest.mark.parametrize("name", list(BAD_BOARDS))
def test_from_board_rejects_bad_input(name):
    board, match = BAD_BOARDS[name]
    with pytest.raises(ValueError, match=match):
        env.from_board(board)


def test_from_board_accepts_lists_and_other_int_dtypes():
    board = parse([
        ".......",
        ".......",
        ".......",
        ".......",
        "...o...",
        "..xxo..",
    ])
    ref = env.from_board(board)
    for b in (board.tolist(), board.astype(np.int64), jnp.asarray(board, jnp.int32)):
        chex.assert_trees_all_equal(env.from_board(b), ref)
    assert int(ref.num_moves) == 4 and bool(ref.first_player_to_move)


@pytest.mark.parametrize("rows,winner", [
    # 8 stones: the first player is to move, so the second player (o) won.
    ([
        ".......",
        ".......",
        "o......",
        "o......",
        "o.....x",
        "o...xxx",
    ], -1),
    # 9 stones: the second player is to move, so the first player (o) won.
    ([
        ".......",
        ".......",
        "o......",
        "o......",
        "o.....x",
        "oo..xxx",
    ], 1),
])
def test_from_board_finished_board(rows, winner):
    board = parse(rows)  # the opponent (who just moved) has a vertical four
    n = int((board != 0).sum())
    s = env.from_board(board)
    assert bool(s.done)
    assert not np.asarray(s.legal_mask).any()
    assert int(s.winner) == winner
    assert bool(s.first_player_to_move) == (n % 2 == 0)
    assert int(s.num_moves) == n
    # A finished game cannot be stepped.
    chex.assert_trees_all_equal(step(s, 3), s)


def test_check_boards_batched_names_the_bad_board():
    good = np.zeros((3, 6, 7), np.int8)
    bad = good.copy()
    bad[2, 0, 0] = 1  # floating
    with pytest.raises(ValueError, match="board 2 has a floating stone"):
        check_boards(bad, batched=True)
    finished = np.stack([good[0], parse(WIN_CASES["first_vertical"][3])])
    check_boards(finished, batched=True)
    with pytest.raises(ValueError, match="board 1 is a finished game"):
        check_boards(finished, batched=True, allow_finished=False)
    full = np.stack([board_from_moves(DRAW_MOVES)])
    with pytest.raises(ValueError, match="board is full"):
        check_boards(full, batched=True, allow_finished=False)
