"""The game protocol (c4jax.games.base): Connect Four and pgx games behind it, and the generic
core (rollouts, matches, AlphaZero) on a game other than Connect Four."""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from c4jax import agents, evaluation, games
from c4jax.agents import arena
from c4jax.games import base
from c4jax.games.connect_four import env
from c4jax.games.connect_four.game import GAME as C4

TTT = games.from_pgx("tic_tac_toe")


def test_registry_and_protocol():
    assert games.make("connect_four") is C4
    assert isinstance(C4, base.Game) and isinstance(TTT, base.Game)
    assert games.make("pgx:tic_tac_toe") is TTT  # one object per environment: jit caches stay warm
    assert (TTT.id, TTT.num_actions, TTT.num_players, TTT.observation_shape, TTT.max_steps) == \
        ("pgx:tic_tac_toe", 9, 2, (3, 3, 2), 9)
    with pytest.raises(ValueError, match="unknown game 'go'"):
        games.make("go")
    with pytest.raises(ValueError, match="pass max_steps"):
        games.from_pgx("go_9x9")
    with pytest.raises(TypeError, match="is not a game: it has no .*max_steps"):
        base.check_game(object())


def test_connect_four_protocol_views_follow_the_rules():
    """current_player, rewards, legal_action_mask, terminated/truncated of Connect Four states agree
    with the environment's own fields on random games."""
    keys = jax.random.split(jax.random.key(0), 256)
    states = jax.vmap(C4.init)(keys)
    # each compiled once for the 43 plies (op by op, every ply ran hundreds of small programs)
    random_actions, step = jax.jit(jax.vmap(base.random_legal_action)), jax.jit(jax.vmap(C4.step))
    mover_reward, discount = jax.jit(jax.vmap(base.mover_reward)), jax.jit(jax.vmap(base.discount))
    for t in range(env.MAX_MOVES + 1):
        k = jax.random.fold_in(jax.random.key(1), t)
        actions = random_actions(jax.random.split(k, 256), states.legal_action_mask)
        new = step(states, actions)
        np.testing.assert_array_equal(new.current_player, new.num_moves % 2)
        np.testing.assert_array_equal(new.legal_action_mask, new.legal_mask)
        assert not new.truncated.any()
        # a finishing move: the winner (player 0 = first mover) gets +1, the loser -1; zero-sum always
        r = np.asarray(new.rewards)
        np.testing.assert_array_equal(r.sum(-1), 0.0)
        np.testing.assert_array_equal(r[:, 0], np.where(new.done, new.winner, 0))
        mover = mover_reward(states, new)
        np.testing.assert_array_equal(mover, np.where(states.done, 0.0, np.where(new.done, np.abs(new.winner), 0.0)))
        # the player to move alternates until the end: the search's discount is -1, then 0
        np.testing.assert_array_equal(discount(states, new), np.where(new.done, 0.0, -1.0))
        states = new
    assert states.done.all()


def _play_random(game, n: int, key) -> arena.Trajectory:
    rand = agents.load("random").replace(game=game)
    starts = jax.vmap(game.init)(jax.random.split(key, n))
    first = jnp.arange(n) % 2 == 0
    return jax.jit(functools.partial(arena.rollout, game=game))(rand, rand, starts, first, jax.random.fold_in(key, 1))


def test_rollout_of_a_pgx_game_replays_and_scores():
    traj = _play_random(TTT, 512, jax.random.key(2))
    lengths = np.asarray(traj.length)
    assert lengths.min() >= 5 and lengths.max() <= 9 and (lengths < 9).any()
    assert set(np.unique(traj.outcome_a)) == {-1.0, 0.0, 1.0}
    # replaying each game's actions with pgx gives the recorded outcome; A moved where by_a says
    step, observe = jax.jit(TTT.step), jax.jit(TTT.observe)
    for b in range(0, 512, 37):
        s = TTT.init(jax.random.split(jax.random.key(2), 512)[b])
        a_player = int(s.current_player) if b % 2 == 0 else 1 - int(s.current_player)
        total = np.zeros(2)
        for t in range(lengths[b]):
            assert bool(traj.by_a[b, t]) == (int(s.current_player) == a_player)
            np.testing.assert_array_equal(traj.observations[b, t], observe(s))
            s = step(s, traj.actions[b, t])
            total += np.asarray(s.rewards)
        assert bool(s.terminated) and float(traj.outcome_a[b]) == total[a_player]
    assert not traj.valid[np.arange(512), np.minimum(lengths, 8)][lengths < 9].any()


def test_match_on_a_pgx_game():
    rand = agents.load("random").replace(game=TTT)
    result = evaluation.match(rand, rand, jax.random.key(3))
    assert result.total.games == 100 and result.a_first.games == 50
    assert 0.3 < result.win_rate < 0.7  # random against itself
    # the first mover of tic-tac-toe wins more often than the second (about 59% to 29% at random)
    assert result.win_rate_a_first > result.win_rate_b_first


def test_random_agent_on_connect_four_acts_as_before():
    """The states entry point of Random picks what its board entry point picks on live games."""
    rand = agents.load("random")
    states = arena.random_initial_states(jax.random.key(4), 64, C4)
    key = jax.random.key(5)
    boards = jax.vmap(env.observe)(states)
    chex.assert_trees_all_equal(jax.jit(rand.act_states)(states, key), rand.act(boards, key))


@pytest.mark.slow  # a training run of minutes; test_match_on_a_pgx_game keeps the adapter in the default run
def test_alphazero_learns_tic_tac_toe_from_pgx():
    """The generic core end to end on a pgx game: a few AlphaZero iterations (search with the game
    as the model, self-play by current_player, the residual tower) beat Random >= 0.9, and the raw
    network improves on the untrained one."""
    from c4jax.learning.alphazero import AlphaZero, AlphaZeroConfig

    cfg = AlphaZeroConfig(games=64, num_simulations=16, max_considered=9, temperature_moves=2, random_start_frac=0.0,
                          buffer_size=4096, batch_size=128, updates_per_iteration=16, iterations_per_eval=6,
                          learning_rate=3e-3, eval_simulations=16, tower_blocks=1, tower_channels=32)
    algo = AlphaZero(cfg, game=TTT)
    init_key, run_key = jax.random.split(jax.random.key(0))
    state = algo.init(run_key, algo.fresh_params(init_key))
    untrained = state.params
    state, metrics = algo.chunk(state)
    assert int(state.updates) == cfg.eval_updates and float(metrics["selfplay/length"]) >= 5
    rand = agents.load("random").replace(game=TTT)
    key = jax.random.key(1)
    searched = evaluation.match(algo.agent_of(state.params, "az").replace(num_simulations=32), rand, key).win_rate
    raw = evaluation.match(algo.agent_of(state.params, "az").replace(num_simulations=0, deterministic=False), rand,
                           key).win_rate
    raw_before = evaluation.match(algo.agent_of(untrained, "az").replace(num_simulations=0, deterministic=False),
                                  rand, key).win_rate
    assert searched >= 0.9, (searched, raw, raw_before)
    assert raw > raw_before + 0.1, (raw, raw_before)
