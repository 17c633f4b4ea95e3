"""Property tests over random move sequences (hypothesis + chex): the environment against an
independent plain-Python board, rollouts, the replay buffer and the turn-based losses."""

from __future__ import annotations

from functools import partial

import chex
import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from c4jax.agents import arena, baselines
from c4jax.games.connect_four import env
from c4jax.games.connect_four.game import GAME as C4
from c4jax.games.connect_four.board import mirror_boards
from c4jax.learning import buffer as rb
from c4jax.games.connect_four import rewards as shaped_lib

import turn_based

ROWS, COLS = 6, 7
SETTINGS = settings(max_examples=40, deadline=None, derandomize=True)
moves = st.lists(st.integers(min_value=-1, max_value=COLS), min_size=0, max_size=45)  # -1 and 7: illegal
legal_moves = st.lists(st.integers(min_value=0, max_value=COLS - 1), min_size=0, max_size=45)
STEP = jax.jit(env.step)
OBSERVE = jax.jit(env.observe)
SHAPED = jax.jit(shaped_lib.shaped_reward)


class PlainBoard:
    """An independent Connect Four: a list of lists, stones +1 (first player) / -1 (second)."""

    def __init__(self):
        self.cells = [[0] * COLS for _ in range(ROWS)]
        self.turn, self.moves, self.winner, self.done, self.illegal = 1, 0, 0, False, False

    def play(self, col: int) -> None:
        if self.done:
            return
        if not 0 <= col < COLS or self.cells[0][col] != 0:
            self.done, self.illegal, self.winner = True, True, -self.turn
            return
        row = max(r for r in range(ROWS) if self.cells[r][col] == 0)
        self.cells[row][col] = self.turn
        self.moves += 1
        if self._four(row, col):
            self.done, self.winner = True, self.turn
        elif self.moves == ROWS * COLS:
            self.done = True
        self.turn = -self.turn

    def _four(self, row: int, col: int) -> bool:
        me = self.cells[row][col]
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            run = 1
            for sign in (1, -1):
                r, c = row + sign * dr, col + sign * dc
                while 0 <= r < ROWS and 0 <= c < COLS and self.cells[r][c] == me:
                    run, r, c = run + 1, r + sign * dr, c + sign * dc
            if run >= 4:
                return True
        return False

    def view(self) -> np.ndarray:
        """The board from the point of view of the player to move."""
        return (np.array(self.cells) * self.turn).astype(np.int8)


def _play(seq):
    state, ref, rewards = env.init(), PlainBoard(), []
    for a in seq:
        before = state
        state, _ = STEP(state, a), ref.play(a)
        rewards.append(float(SHAPED(before, state, a)))
    return state, ref, rewards


@SETTINGS
@given(moves)
def test_env_agrees_with_an_independent_board(seq):
    state, ref, _ = _play(seq)
    assert bool(state.done) == ref.done
    assert int(state.winner) == ref.winner
    if not ref.illegal:  # a disqualifying move leaves the board as it was before it
        np.testing.assert_array_equal(np.asarray(OBSERVE(state)), ref.view())
        assert int(state.num_moves) == ref.moves
    legal = [not ref.done and ref.cells[0][c] == 0 for c in range(COLS)]
    np.testing.assert_array_equal(np.asarray(state.legal_mask), legal)


@SETTINGS
@given(moves)
def test_env_invariants(seq):
    state = env.init()
    for a in seq:
        before = state
        state = STEP(state, a)
        board = np.asarray(OBSERVE(state))
        chex.assert_shape(board, (ROWS, COLS))
        assert board.dtype == np.int8
        if bool(before.done):  # a finished game never changes
            chex.assert_trees_all_equal(before, state)
        # the player to move has as many stones as the other, or one fewer
        assert (board == -1).sum() - (board == 1).sum() in (0, 1)
        # gravity: no empty cell under a stone
        for c in range(COLS):
            col = board[:, c]
            stones = np.nonzero(col)[0]
            assert stones.size == 0 or (col[stones[0]:] != 0).all()
        if not bool(before.done):
            illegal = not 0 <= a < COLS or not bool(before.legal_mask[a])
            if illegal:  # disqualified: the game ends with the illegal-move penalty
                assert bool(state.done) and float(SHAPED(before, state, a)) == shaped_lib.REWARD_ILLEGAL
            else:
                assert int(state.num_moves) == int(before.num_moves) + 1


@SETTINGS
@given(legal_moves)
def test_mirrored_games_give_mirrored_boards_and_the_same_rewards(seq):
    state, _, rewards = _play(seq)
    mirrored, _, mirrored_rewards = _play([COLS - 1 - a for a in seq])
    np.testing.assert_array_equal(np.asarray(OBSERVE(mirrored)), np.asarray(mirror_boards(OBSERVE(state))))
    assert rewards == mirrored_rewards
    assert int(state.winner) == int(mirrored.winner)


@SETTINGS
@given(st.integers(min_value=0, max_value=2**31 - 1))
def test_random_rollouts_are_well_formed(seed):
    batch = 8
    traj = _ROLLOUT(baselines.RandomAgent(game=C4), jax.random.key(seed), batch)
    valid, done = np.asarray(traj.valid), np.asarray(traj.done)
    length = np.asarray(traj.length)
    for b in range(batch):
        assert valid[b, :length[b]].all() and not valid[b, length[b]:].any()  # a prefix of real moves
        assert done[b].sum() == (length[b] > 0) and (length[b] == 0 or done[b, length[b] - 1])
        assert bool(traj.final.done[b])
    legal_at_move = np.asarray(traj.observations)[:, :, 0, :] == 0  # top cell empty
    played = np.take_along_axis(legal_at_move, np.asarray(traj.actions)[..., None], axis=-1)[..., 0]
    assert played[valid].all()  # every recorded move was legal


@partial(jax.jit, static_argnums=2)
def _ROLLOUT(agent, key, batch: int) -> arena.Trajectory:
    """Self-play of ``agent`` from ``batch`` random start boards (one compiled program)."""
    start_key, play_key = jax.random.split(key)
    states = arena.random_initial_states(start_key, batch, C4)
    return arena.rollout(agent, None, states, jnp.ones((batch,), bool), play_key, game=C4)


@SETTINGS
@given(st.integers(min_value=1, max_value=12), st.lists(st.lists(st.booleans(), min_size=5, max_size=5), min_size=1, max_size=8))
def test_buffer_keeps_the_newest_valid_rows_in_order(capacity, masks):
    buf = rb.init(jnp.int32(0), capacity)
    added, counter = [], 0
    for mask in masks:
        rows = jnp.arange(counter, counter + 5, dtype=jnp.int32)
        counter += 5
        if sum(mask) > capacity:
            continue  # add() takes at most `capacity` rows at once
        buf = rb.add(buf, rows, jnp.asarray(mask))
        added += [int(r) for r, m in zip(rows, mask) if m]
    newest = added[-capacity:] if added else []
    assert int(buf.size) == len(newest)
    stored = np.asarray(buf.items)
    order = [(int(buf.ptr) - len(newest) + i) % capacity for i in range(len(newest))]
    assert [int(stored[i]) for i in order] == newest


finite = st.floats(min_value=-2.0, max_value=2.0, allow_nan=False, width=32)


@SETTINGS
@given(st.lists(finite, min_size=1, max_size=42), st.integers(min_value=0, max_value=42),
       st.floats(min_value=0.0, max_value=1.0, width=32))
def test_turn_based_returns_satisfy_the_recursion(rewards, n_valid, gamma):
    r = np.asarray(rewards, np.float32)
    valid = np.arange(len(r)) < n_valid
    g = np.asarray(_RETURNS(r, valid, np.float32(gamma)))
    for t in range(len(r)):
        nxt = g[t + 1] if t + 1 < len(r) and valid[t + 1] else 0.0
        want = r[t] - np.float32(gamma) * nxt if valid[t] else 0.0
        np.testing.assert_allclose(g[t], want, rtol=1e-5, atol=1e-5)


_RETURNS = jax.jit(turn_based.turn_based_returns)


@SETTINGS
@given(finite, st.booleans(), st.lists(finite, min_size=7, max_size=7), st.lists(st.booleans(), min_size=7, max_size=7))
def test_td_target_subtracts_the_best_legal_next_value(reward, done, q_next, legal):
    q, legal_a = np.asarray(q_next, np.float32), np.asarray(legal)
    y = float(turn_based.td_target(jnp.float32(reward), jnp.bool_(done), q, legal_a, 0.95))
    bootstrap = not done and legal_a.any()
    want = reward - 0.95 * (q[legal_a].max() if bootstrap else 0.0)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


class TurnBasedLossesJitTest(chex.TestCase):
    """The losses give the same results jitted and not."""

    @chex.variants(with_jit=True, without_jit=True)
    def test_returns_and_td_target(self):
        rewards = jnp.array([0.0, 0.5, -1.0, 1.0], jnp.float32)
        valid = jnp.array([True, True, True, False])
        g = self.variant(turn_based.turn_based_returns)(rewards, valid, 0.9)
        chex.assert_trees_all_close(g, jnp.array([0.0 - 0.9 * (0.5 + 0.9), 0.5 + 0.9, -1.0, 0.0]), atol=1e-6)
        q = jnp.arange(7, dtype=jnp.float32)
        legal = jnp.array([True, True, False, True, False, False, False])
        y = self.variant(turn_based.td_target)(jnp.float32(1.0), jnp.bool_(False), q, legal, 0.5)
        chex.assert_trees_all_close(y, jnp.float32(1.0 - 0.5 * 3.0))
