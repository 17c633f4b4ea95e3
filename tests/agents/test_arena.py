"""Batched rollouts: recorded games replay exactly, accounting is consistent, keys reproduce."""

import functools
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from c4jax import agents
from c4jax.games.connect_four import env
from c4jax.games.connect_four.game import GAME as C4
from c4jax.agents import arena
from c4jax.games.connect_four import rewards as shaped_lib
from c4jax.learning import backprop as backprop_lib

B = 512
# the RL trainers' rollouts record design.md §2's shaped reward
rollout = jax.jit(functools.partial(arena.rollout, game=C4, reward_fn=shaped_lib.shaped_reward))


@pytest.fixture(scope="module")
def random_vs_lookahead():
    a, b = agents.load("random"), agents.load("1steplA")
    states = arena.random_initial_states(jax.random.key(0), B, C4)
    first = jnp.arange(B) % 2 == 0
    return states, first, rollout(a, b, states, first, jax.random.key(1))


def test_valid_is_a_prefix_and_length_matches_stones(random_vs_lookahead):
    states, _, traj = random_vs_lookahead
    valid = np.asarray(traj.valid)
    length = valid.sum(-1)
    assert (valid == (np.arange(env.MAX_MOVES)[None] < length[:, None])).all()
    assert np.asarray(traj.final.done).all()
    np.testing.assert_array_equal(length, np.asarray(traj.final.num_moves - states.num_moves))
    done = np.asarray(traj.done)
    assert (done.sum(-1) == 1).all() and (done.argmax(-1) == length - 1).all()


def test_replaying_recorded_actions_reproduces_boards_rewards_and_outcome(random_vs_lookahead):
    states, first, traj = random_vs_lookahead
    boards, actions = np.asarray(traj.observations), np.asarray(traj.actions)
    rewards, valid, by_a = np.asarray(traj.rewards), np.asarray(traj.valid), np.asarray(traj.by_a)
    outcome = np.asarray(traj.outcome_a)
    for g in range(0, B, 37):  # a spread of games, each replayed one move at a time
        s = jax.tree.map(lambda x: x[g], states)
        for t in range(int(valid[g].sum())):
            np.testing.assert_array_equal(np.asarray(env.observe(s)), boards[g, t])
            assert by_a[g, t] == ((t % 2 == 0) == bool(first[g]))
            before, s = s, env.step(s, actions[g, t])
            assert float(shaped_lib.shaped_reward(before, s, actions[g, t])) == rewards[g, t]
        assert bool(s.done)
        # outcome_a: the last mover won iff the final reward is a win.
        last_by_a = by_a[g, int(valid[g].sum()) - 1]
        expect = 0.0 if int(s.winner) == 0 else (1.0 if last_by_a else -1.0)
        assert outcome[g] == expect


def test_agents_only_play_legal_moves(random_vs_lookahead):
    _, _, traj = random_vs_lookahead
    boards, actions, valid = np.asarray(traj.observations), np.asarray(traj.actions), np.asarray(traj.valid)
    top = np.take_along_axis(boards[:, :, 0, :], actions[..., None], axis=-1)[..., 0]
    assert (top[valid] == 0).all()
    assert (np.asarray(traj.rewards)[valid] != shaped_lib.REWARD_ILLEGAL).all()


def test_swapping_agents_mirrors_outcomes_for_deterministic_players():
    a, b = agents.load("2steplA"), agents.load("1steplA")
    states = arena.random_initial_states(jax.random.key(5), 64, C4)
    first = jnp.arange(64) % 2 == 0
    ab = rollout(a, b, states, first, jax.random.key(0))
    ba = rollout(b, a, states, ~first, jax.random.key(0))
    np.testing.assert_array_equal(np.asarray(ab.outcome_a), -np.asarray(ba.outcome_a))
    np.testing.assert_array_equal(np.asarray(ab.actions), np.asarray(ba.actions))


def test_self_play_equals_playing_a_copy_of_itself():
    a = agents.load("1steplA")
    states = arena.random_initial_states(jax.random.key(2), 64, C4)
    own = rollout(a, None, states, True, jax.random.key(0))
    pair = rollout(a, agents.load("1steplA"), states, True, jax.random.key(0))
    np.testing.assert_array_equal(np.asarray(own.actions), np.asarray(pair.actions))
    np.testing.assert_array_equal(np.asarray(own.outcome_a), np.asarray(pair.outcome_a))


def test_same_key_same_games_different_key_different_games():
    r = agents.load("random")
    states = arena.initial_states(64, C4)
    t1 = rollout(r, None, states, True, jax.random.key(7))
    t2 = rollout(r, None, states, True, jax.random.key(7))
    t3 = rollout(r, None, states, True, jax.random.key(8))
    np.testing.assert_array_equal(np.asarray(t1.actions), np.asarray(t2.actions))
    assert not np.array_equal(np.asarray(t1.actions), np.asarray(t3.actions))


def test_lookahead_beats_random():
    r, l1 = agents.load("random"), agents.load("1steplA")
    states = arena.initial_states(400, C4)
    first = jnp.arange(400) % 2 == 0
    traj = rollout(l1, r, states, first, jax.random.key(3))
    win_rate = float(jnp.mean((traj.outcome_a + 1) / 2))
    assert win_rate > 0.95  # design.md §4: 1StepLA beats Random ~99% of the time


def test_backprop_rewards_on_trajectories(random_vs_lookahead):
    _, _, traj = random_vs_lookahead
    shaped = np.asarray(traj.rewards)
    out = np.asarray(backprop_lib.backprop_rewards(traj))
    valid = np.asarray(traj.valid)
    assert (out[~valid] == 0).all()
    keep = valid & (shaped != 0)
    np.testing.assert_array_equal(out[keep], shaped[keep])
    # The moves of a decided game's winner never get a negative propagated reward.
    outcome, by_a = np.asarray(traj.outcome_a), np.asarray(traj.by_a)
    winner_moves = valid & (shaped == 0) & (by_a == (outcome[:, None] == 1)) & (outcome[:, None] != 0)
    assert (out[winner_moves] > 0).all()
