"""The published code's training switches (design.md §7a) and the two presets, on hand-worked cases.

Every switch defaults to the thesis text; ``--preset published`` turns them all on. The expected
numbers below are worked out by hand in the comments next to them.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import struct

from c4jax import agents
from c4jax.agents import arena
from c4jax.agents.policy import all_columns
from c4jax.games.connect_four import env
from c4jax.games.connect_four.board import legal_mask, mirror_boards
from c4jax.games.connect_four.kit import MIRROR
from c4jax.io import checkpoint
from c4jax import games
from c4jax.learning import config, loop, losses, onpolicy_games, rundir, selection, stacked, train_state
from c4jax.learning import dqn as dqn_lib
from c4jax.learning.dqn import DQN, DQNConfig, epsilon, mirror_avg_q
from c4jax.learning.dqn_games import EpsilonGreedy, Transition
from c4jax.learning.ppo import PPO, PPOConfig
from c4jax.learning.reinforce import Reinforce, ReinforceConfig
from c4jax.learning.settings.loop import whole_games
from c4jax.learning import rollouts
from c4jax.learning import backprop as backprop_lib

from scripts import run_script

seg = jax.jit(backprop_lib.backprop_episode_segments, static_argnames="n")


def _segments(rewards, stones):
    r = jnp.asarray(rewards + [0.0] * (42 - len(rewards)), jnp.float32)
    valid = jnp.arange(42) < len(rewards)
    return np.asarray(seg(r, valid, jnp.int32(stones), n=3.0))[: len(rewards)]


# --- reward back-propagation "segments" ------------------------------------------------------


def test_segments_one_win_from_the_empty_board():
    # Turns 1..5, the mover of turn 5 wins (R = +1, T = 5). Turns 1 and 3 are the winner's: (i/5)^3;
    # turns 2 and 4 the loser's, taken one later: -((i+1)/5)^3.
    got = _segments([0.0, 0.0, 0.0, 0.0, 1.0], stones=0)
    np.testing.assert_allclose(got, [1 / 125, -27 / 125, 27 / 125, -1.0, 1.0], atol=1e-6)
    # the thesis' per-player formula on the same game: winner's own moves 1..3 of 3, loser's 1..2 of 2
    per_player = backprop_lib.backprop_episode(jnp.asarray([0, 0, 0, 0, 1.0]), jnp.ones(5, bool), jnp.float32(1.0))
    np.testing.assert_allclose(per_player, [1 / 27, -1 / 8, 8 / 27, -1.0, 1.0], rtol=1e-6)


def test_segments_count_the_stones_of_a_random_start_board():
    # 10 stones on the start board: the moves are turns 11..14, T = 14, R = +1.
    # turn 11 (14 - 11 odd: the loser's) -> -(12/14)^3 = -0.629738 -> rounded -0.6297;
    # turn 12 keeps its +0.5 block; turn 13 (the loser's) -> -(14/14)^3 = -1; turn 14 is the win.
    got = _segments([0.0, 0.5, 0.0, 1.0], stones=10)
    np.testing.assert_allclose(got, [-0.6297, 0.5, -1.0, 1.0], atol=1e-6)
    # a -1.5 (missed win + left a win) is not a ±1 split: the game stays one segment
    # turn 1 (the loser's) -> -(2/4)^3 = -0.125, turn 3 (the loser's) -> -(4/4)^3 = -1
    np.testing.assert_allclose(_segments([0.0, -1.5, 0.0, 1.0], stones=0), [-0.125, -1.5, -1.0, 1.0], atol=1e-6)


def test_segments_split_at_every_plus_minus_one_with_the_published_indexing():
    # 2 stones at the start: positions 0..8 are turns 3..11. Position 2 (turn 5) leaves the opponent a
    # win (-1): split. Segment 1 = turns 3, 4 with R = -1 at T = 5, whose "winner" is the other player:
    #   turn 3 (same player as turn 5: the loser) -> -((3+1)/5)^3 = -0.512
    #   turn 4 (the winner)                       -> +(4/5)^3   =  0.512
    # The next segment starts at turn 6 and ends with the win at turn 11 (R = +1). Its values are written
    # at offsets 0, 1, ... from the FIRST move (the published code's slip), only where still exactly 0:
    #   offsets 0..2 hold -0.512, 0.512, -1: kept;
    #   offset 3 (turn 6's slot, still 0) gets turn 9's value: 11 - 9 even, the winner: (9/11)^3 = 0.5477
    #   offset 4 (turn 7's slot) gets turn 10's: the loser, -((10+1)/11)^3 = -1
    # Positions 5..7 (turns 8..10: zero rewards after the first split) stay 0.
    rewards = [0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    got = _segments(rewards, stones=2)
    np.testing.assert_allclose(got, [-0.512, 0.512, -1.0, 0.5477, -1.0, 0.0, 0.0, 0.0, 1.0], atol=1e-6)
    # A +1 forced win in the middle splits as well. Stones 0: turns 1..6; turn 2 (+1: two threats) splits:
    # turn 1 (2 - 1 odd: the loser's) -> -(2/2)^3 = -1. The next segment is turns 3..5 before the win at
    # turn 6: its values go to offsets 0..2, which hold -1, +1 and +0.5 (a block): all kept, so turns 4
    # and 5 stay 0.
    got = _segments([0.0, 1.0, 0.5, 0.0, 0.0, 1.0], stones=0)
    np.testing.assert_allclose(got, [-1.0, 1.0, 0.5, 0.0, 0.0, 1.0], atol=1e-6)


def test_segments_of_a_draw_and_padding():
    # a draw (last reward 0) back-propagates nothing; padding is 0
    np.testing.assert_array_equal(_segments([0.0, 0.5, 0.0, 0.0], stones=38), [0.0, 0.5, 0.0, 0.0])
    r = jnp.zeros(42).at[:3].set(jnp.array([0.0, 0.0, 1.0])).at[10].set(7.0)
    out = seg(r, jnp.arange(42) < 3, jnp.int32(0), n=3.0)
    assert float(jnp.abs(out[3:]).sum()) == 0.0


def test_arena_segments_take_the_start_board_stones_from_the_trajectory():
    key = jax.random.key(3)
    starts = arena.random_initial_states(key, 16, C4)
    rand = agents.load("random")
    traj = jax.jit(functools.partial(arena.rollout, game=C4))(rand, None, starts, True, jax.random.key(4))
    got = backprop_lib.backprop_rewards(traj, 3.0, "segments")
    stones = np.asarray(starts.num_moves)
    assert stones.max() > 0
    for b in range(16):
        want = backprop_lib.backprop_episode_segments(traj.rewards[b], traj.valid[b], jnp.int32(stones[b]), 3.0)
        np.testing.assert_array_equal(got[b], want)
    with pytest.raises(ValueError, match="per_player"):
        backprop_lib.backprop_rewards(traj, 3.0, "bogus")


def test_segments_statistic_on_typical_games():
    """design.md §7a: on typical games the published back-propagation gives larger rewards to the
    zero-reward moves than the per-player formula (mean |r| ≈ 0.36 vs ≈ 0.20). Measured here on 400
    1StepLA self-play games from random start boards, draws replaced (per-player ≈ 0.20, segments ≈ 0.41)."""
    la = agents.load("1steplA")
    starts = arena.random_initial_states(jax.random.key(0), 400, C4)
    traj, _ = jax.jit(lambda s, k: rollouts.mixed_rollout_no_draws(la, None, s, 0, k, game=C4))(starts, jax.random.key(1))
    zero = np.asarray((traj.rewards == 0) & traj.valid)
    mean = {v: float(np.abs(np.asarray(backprop_lib.backprop_rewards(traj, 3.0, v)))[zero].mean())
            for v in ("per_player", "segments")}
    assert 0.17 < mean["per_player"] < 0.23, mean
    assert 0.33 < mean["segments"] < 0.47, mean


# --- draws replaced ---------------------------------------------------------------------------


def _drawn_in_one():
    """A 41-stone position whose only move draws: the board before the last move of a drawn random game."""
    rand = agents.load("random")
    traj = jax.jit(functools.partial(arena.rollout, game=C4))(rand, None, arena.initial_states(3000, C4), True,
                                                         jax.random.key(0))
    b = int(np.flatnonzero(np.asarray((traj.final.winner == 0) & (traj.length == 42)))[0])
    return env.from_board(np.asarray(traj.observations[b, 41]))


def test_draws_are_replaced_by_games_from_the_empty_board():
    drawn = _drawn_in_one()
    others = arena.random_initial_states(jax.random.key(5), 3, C4)
    starts = jax.tree.map(lambda d, o: jnp.concatenate([d[None], o]), drawn, others)
    rand = agents.load("random")
    key = jax.random.key(6)
    plain, _ = jax.jit(lambda s, k: rollouts.mixed_rollout(rand, None, s, 0, k, game=C4))(starts, key)
    assert int(plain.final.winner[0]) == 0 and int(plain.length[0]) == 1
    traj, moves = jax.jit(lambda s, k: rollouts.mixed_rollout_no_draws(rand, None, s, 0, k, game=C4))(starts, key)
    # the drawn game is replaced by a decided game from the empty board
    assert int(traj.final.winner[0]) != 0 and not np.asarray(traj.observations[0, 0]).any()
    np.testing.assert_array_equal(moves[0], traj.valid[0])
    # the decided games are the plain rollout's, untouched
    for b in range(1, 4):
        if int(plain.final.winner[b]) != 0:
            chex.assert_trees_all_equal(jax.tree.map(lambda x: x[b], traj), jax.tree.map(lambda x: x[b], plain))


# --- DQN ----------------------------------------------------------------------------------------


class _FakeQ:
    """Q(s)[c] = params["scale"] * (stones in column c + 0.1 c): simple enough to work out by hand."""

    def apply(self, variables, boards):
        stones = jnp.sum(boards != 0, axis=-2).astype(jnp.float32)
        return variables["params"]["scale"] * (stones + 0.1 * jnp.arange(7.0))


def _next_board_col0_full():
    board = np.zeros((6, 7), np.int8)
    board[:, 0] = [1, -1, 1, -1, 1, -1]
    board[5, 1] = 1
    return board


@pytest.mark.parametrize("flags, want", [
    # Q(s') of the target net (scale 2) = 2 * [6, 1.1, 0.2, 0.3, 0.4, 0.5, 0.6]; column 0 is full.
    ({}, 0.5 - 0.95 * 2.2),                                        # legal max: column 1
    ({"target_online": True}, 0.5 - 0.95 * 1.1),                   # online net (scale 1)
    ({"target_unmasked": True}, 0.5 - 0.95 * 12.0),                # the full column counts
    # mirror average: (stones_c + 0.1 c + stones_c + 0.1 (6 - c)) / 2 = stones_c + 0.3
    ({"target_mirror_avg": True}, 0.5 - 0.95 * 2.6),               # legal max: column 1, 2 * 1.3
    ({"target_online": True, "target_mirror_avg": True, "target_unmasked": True}, 0.5 - 0.95 * 6.3),
])
def test_dqn_target_variants_by_hand(flags, want):
    algo = DQN(DQNConfig(**flags), game=C4)
    algo.net = _FakeQ()
    batch = Transition(board=jnp.zeros((1, 6, 7), jnp.int8), action=jnp.zeros(1, jnp.int32),
                       reward=jnp.full(1, 0.5), next_board=jnp.asarray(_next_board_col0_full())[None],
                       done=jnp.zeros(1, bool))
    _, aux = algo.loss({"scale": jnp.float32(1.0)}, {"scale": jnp.float32(2.0)}, batch)
    assert float(aux["target"]) == pytest.approx(want, rel=1e-6)
    # a finished game's target is its reward, whatever the switches
    _, aux = algo.loss({"scale": jnp.float32(1.0)}, {"scale": jnp.float32(2.0)}, batch.replace(done=jnp.ones(1, bool)))
    assert float(aux["target"]) == pytest.approx(0.5)


@struct.dataclass
class _Counts:
    episodes: jax.Array
    updates: jax.Array


@struct.dataclass
class _Nets:
    params: dict
    target_params: dict


def test_epsilon_per_update():
    state = _Counts(episodes=jnp.int32(0), updates=jnp.int32(0))
    warm = state.replace(episodes=jnp.int32(1000), updates=jnp.int32(0))
    # the thesis: by episodes; the published code: by updates (0 during the warm-up: ε = 0.8)
    thesis, published = DQN(DQNConfig(), game=C4), DQN(DQNConfig(eps_per_update=True), game=C4)
    assert float(thesis.behaviour_epsilon(warm)) == pytest.approx(0.05 + 0.75 * np.exp(-2.0))
    assert float(published.behaviour_epsilon(warm)) == pytest.approx(0.8)
    later = state.replace(episodes=jnp.int32(10), updates=jnp.int32(500))
    assert float(published.behaviour_epsilon(later)) == pytest.approx(0.05 + 0.75 * np.exp(-1.0))
    assert float(thesis.behaviour_epsilon(later)) == pytest.approx(float(epsilon(DQNConfig(), jnp.float32(10))))


def test_self_play_on_mirror_averaged_q_then_masked():
    board = np.zeros((6, 7), np.int8)
    board[:, 0] = [1, -1, 1, -1, 1, -1]  # column 0 full
    # Q = [6, 0.1, 0.2, ..., 0.6]: the legal argmax is column 6; mirror-averaged Q = [6.3, 0.3, ..., 0.3]:
    # column 0 is masked and the tie goes to the lowest legal column, 1.
    plain = EpsilonGreedy(params={"scale": 1.0}, epsilon=jnp.float32(0.0), net=_FakeQ(), legal=legal_mask, game=C4)
    avg = plain.replace(q=functools.partial(mirror_avg_q, symmetry=MIRROR))
    boards = jnp.asarray(board)[None]
    assert int(plain.act(boards, jax.random.key(0))[0]) == 6
    assert int(avg.act(boards, jax.random.key(0))[0]) == 1


def test_target_reset_with_the_old_network_rule():
    algo = DQN(DQNConfig(reset_target_on_old=True), game=C4)
    # K = 2 seeds stacked
    state = _Nets(params={"w": jnp.array([[1.0], [2.0]])}, target_params={"w": jnp.zeros((2, 1))})
    out = algo.sync_target(state, np.array([True, False]))
    np.testing.assert_array_equal(out.target_params["w"], [[1.0], [0.0]])
    assert DQN(DQNConfig(), game=C4).sync_target(state, np.array([True, True])) is state  # the thesis: untouched


# --- the old-network rule -----------------------------------------------------------------------


def _decisions(tmp_path, wins, **rule):
    run = rundir.SeedRun(tmp_path, 0, {"name": "t"}, selection.new_counters(), False, None,
                         rule=selection.Rule(revert_drop=0.08, **rule), select_by="1steplA")
    out = []
    for i, w in enumerate(wins):
        out.append(run.record(i, {"eval/vs_1steplA": w}, {"w": jnp.zeros(1)}, 0.0))
    return out, run.loop


def test_old_network_rule_thresholds(tmp_path):
    wins = [0.45, 0.42, 0.6, 0.52, 0.55, 0.61]
    # the thesis: the first evaluation is a best; revert only strictly more than 0.08 below
    thesis, counters = _decisions(tmp_path / "a", wins)
    assert thesis == ["best", "keep", "best", "keep", "keep", "best"]
    # published: best starts at 0.5 (0.45 is not a best), revert at <= best - 0.08 (0.42 = 0.5 - 0.08,
    # 0.52 = 0.6 - 0.08)
    published, counters_p = _decisions(tmp_path / "b", wins, old_best_start=0.5, revert_at_equal=True)
    assert published == ["keep", "revert", "best", "revert", "keep", "best"]
    assert counters_p["reverts"] == 2 and counters_p["old_best"] == 0.61
    # best/ still keeps the best evaluation so far (0.45 at the first one)
    assert counters_p["best_win_rate"] == 0.61 and counters["best_win_rate"] == 0.61
    assert _decisions(tmp_path / "c", [0.45], old_best_start=0.5)[1]["best_win_rate"] == 0.45
    assert (tmp_path / "c" / "best" / checkpoint.METADATA_FILE).is_file()
    # each threshold alone
    assert _decisions(tmp_path / "d", wins, old_best_start=0.5)[0] == ["keep", "keep", "best", "keep", "keep", "best"]
    assert _decisions(tmp_path / "e", wins, revert_at_equal=True)[0] == ["best", "keep", "best", "revert", "keep", "best"]


# --- PPO ----------------------------------------------------------------------------------------


def test_one_step_td_targets_and_advantages_by_hand():
    r = jnp.array([0.1, -0.2, 1.0, 0.0])
    v = jnp.array([0.5, 0.3, -0.4, 9.0])  # the last row is padding
    valid = jnp.array([True, True, True, False])
    done = jnp.array([False, False, True, False])
    targets, adv = losses.one_step_td(r, v, valid, done, 0.95)
    # target_0 = 0.1 - 0.95 * 0.3 = -0.185, adv_0 = -0.185 - 0.5 = -0.685
    # target_1 = -0.2 - 0.95 * (-0.4) = 0.18, adv_1 = 0.18 - 0.3 = -0.12
    # target_2 = 1.0 (done), adv_2 = 1.0 - (-0.4) = 1.4
    np.testing.assert_allclose(targets, [-0.185, 0.18, 1.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(adv, [-0.685, -0.12, 1.4, 0.0], atol=1e-6)


def _params(seed=0):
    return loop.initial_params(loop.LoopConfig(game="connect_four"), "two", 128, jax.random.key(seed))


C4 = games.make(games.DEFAULT)


def _collect(algo, params, start_key, play_key):
    """The flat samples of one collection of ``algo`` (whole games) from ``params``."""
    state = algo.init(jax.random.key(0), params)
    samples = jax.jit(lambda s: algo.collection.collect(s, (start_key, play_key), algo.cfg.gae_lambda)[1])(state)
    return jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), samples)


def test_collect_with_the_published_switches():
    params = _params()
    algo = PPO(config.with_preset(PPOConfig(games_per_collect=6), "published"), C4)
    batch = _collect(algo, params, jax.random.key(1), jax.random.key(2))
    valid = np.asarray(batch.valid)
    # value targets and advantages: one-step TD on the mirror-averaged value of the collecting network
    logits, v = algo.collection.apply(params, batch.obs)
    _, v_m = algo.collection.apply(params, mirror_boards(batch.obs))
    v_bar = np.asarray(0.5 * (v + v_m)).reshape(-1, 84)[:, :42]
    ep = jax.tree.map(lambda x: x.reshape((-1, 84) + x.shape[1:]), batch)
    rewards = np.asarray(ep.reward[:, :42])
    nxt = np.concatenate([v_bar[:, 1:], np.zeros((v_bar.shape[0], 1))], axis=1)
    want = np.where(np.asarray(ep.done[:, :42]), rewards, rewards - 0.95 * nxt)
    want = np.where(np.asarray(ep.valid[:, :42]), want, 0.0)
    np.testing.assert_allclose(np.asarray(ep.target[:, :42]), want, atol=2e-5)
    np.testing.assert_allclose(np.asarray(ep.advantage[:, :42]), np.where(ep.valid[:, :42], want - v_bar, 0), atol=2e-5)
    # a mirrored episode has its original's targets and advantages (V̄ is mirror-symmetric)
    np.testing.assert_allclose(ep.advantage[:, 42:], ep.advantage[:, :42], atol=2e-5)
    # stored log-probs over all 7 columns, unmasked, of the network's own logits
    logp = np.asarray(jax.nn.log_softmax(logits))[np.arange(batch.size), np.asarray(batch.action)]
    np.testing.assert_allclose(np.asarray(batch.logp)[valid], logp[valid], atol=1e-5)
    # no draws: every game ends with a win (+1 for its last move)
    last = np.asarray(ep.valid[:, :42]).sum(1) - 1
    np.testing.assert_array_equal(rewards[np.arange(len(last)), last], 1.0)


def test_behaviour_policy_explores_and_samples_the_mirror_averaged_logits():
    params = _params()
    board = np.zeros((6, 7), np.int8)
    board[:, 0] = [1, -1, 1, -1, 1, -1]
    board[5, 3], board[5, 2] = 1, -1
    boards = jnp.broadcast_to(jnp.asarray(board), (20000, 6, 7))
    collection = PPO(PPOConfig(), C4).collection
    logits, _ = collection.apply(params, boards[:1])
    mirrored, _ = collection.apply(params, mirror_boards(boards[:1]))
    avg = 0.5 * (logits + mirrored[..., ::-1])
    probs = np.asarray(jax.nn.softmax(jnp.where(jnp.arange(7) == 0, -jnp.inf, avg[0])))
    for explore in (0.0, 0.5, 1.0):
        agent = onpolicy_games.exploring_policy(collection, params, explore=explore, mirror_avg=True)
        acts = np.asarray(jax.jit(agent.act)(boards, jax.random.key(1)))
        freq = np.bincount(acts, minlength=7) / len(acts)
        want = (1 - explore) * probs + explore * np.r_[0.0, np.full(6, 1 / 6)]
        assert freq[0] == 0.0
        np.testing.assert_allclose(freq, want, atol=0.015)


def test_ppo_loss_unmasked_entropy_and_log_probs():
    params = _params()
    board = np.zeros((6, 7), np.int8)
    board[:, 6] = [1, -1, 1, -1, 1, -1]  # column 6 full
    algo = PPO(PPOConfig(games_per_collect=4), C4)
    batch = onpolicy_games.take_first(_collect(algo, params, jax.random.key(1), jax.random.key(2)), 32)
    batch = batch.replace(obs=batch.obs.at[:].set(jnp.asarray(board)), action=jnp.zeros(32, jnp.int32),
                          logp=jnp.zeros(32), valid=jnp.ones(32, bool))
    logits, _ = algo.collection.apply(params, batch.obs[:1])
    p = jax.nn.softmax(logits[0])
    full_entropy = float(-(p * jnp.log(p)).sum())
    pm = jax.nn.softmax(logits[0, :6])
    masked_entropy = float(-(pm * jnp.log(pm)).sum())
    w = jnp.ones(32)
    unmasked = PPO(PPOConfig(games_per_collect=4, unmasked_log_probs=True), C4)
    _, m_un = jax.jit(unmasked.loss)(params, batch.replace(legal=all_columns(batch.obs)), w)  # jitted: one compile
    _, m = jax.jit(algo.loss)(params, batch.replace(legal=legal_mask(batch.obs)), w)  # instead of one per op
    assert float(m_un["train/entropy"]) == pytest.approx(full_entropy, rel=1e-5)
    assert float(m["train/entropy"]) == pytest.approx(masked_entropy, rel=1e-5)
    # ratio exp(log pi(0|s) - 0): unmasked log pi is lower (part of the mass sits on the full column)
    assert float(m_un["train/approx_kl"]) != pytest.approx(float(m["train/approx_kl"]))


def test_ppo_evaluates_every_n_buffers():
    small = dict(buffer_size=64, games_per_collect=4, epochs=1, minibatch_size=32)
    two = PPO(PPOConfig(buffers_per_eval=2, **small), C4)
    one = PPO(PPOConfig(**small), C4)
    state = two.init(jax.random.key(0), _params())
    s2, m2 = two.chunk(state)
    s1, m1a = one.chunk(state)
    s1, m1b = one.chunk(s1)
    assert int(s2.episodes) == int(s1.episodes) == 8 and int(s2.updates) == int(s1.updates) > 0
    chex.assert_trees_all_close(s2.params, s1.params, atol=1e-6)
    assert float(m2["train/loss"]) == pytest.approx((float(m1a["train/loss"]) + float(m1b["train/loss"])) / 2, rel=1e-5)
    with pytest.raises(ValueError, match="buffers-per-eval"):
        config.validate(PPOConfig(buffers_per_eval=0))


# --- presets --------------------------------------------------------------------------------------


def test_presets_set_what_they_claim():
    fields = {f.name for cls in (DQNConfig, PPOConfig, ReinforceConfig, loop.LoopConfig) for f in dataclasses.fields(cls)}
    assert set(config.PUBLISHED) <= fields  # no misspelt switch
    for cfg in (DQNConfig(), PPOConfig(), ReinforceConfig(), loop.LoopConfig(game="connect_four")):
        assert config.with_preset(cfg, "thesis") == cfg
    dqn = config.with_preset(DQNConfig(dueling=True, eps_decay=600.0), "published")
    assert dqn.dueling and dqn.eps_decay == 600.0  # fields outside the preset are kept
    assert (dqn.target_online, dqn.target_mirror_avg, dqn.target_unmasked, dqn.eps_per_update,
            dqn.selfplay_mirror_avg, dqn.reset_target_on_old, dqn.replace_draws) == (True,) * 7
    assert dqn.reward_backprop == "segments"
    ppo = config.with_preset(PPOConfig(), "published")
    assert (ppo.td_advantage, ppo.explore, ppo.selfplay_mirror_avg, ppo.unmasked_log_probs, ppo.buffers_per_eval,
            ppo.reward_backprop, ppo.replace_draws) == (True, 0.1, True, True, 5, "segments", True)
    rei = config.with_preset(ReinforceConfig(), "published")
    assert (rei.reward_backprop, rei.replace_draws) == ("segments", True)
    run = config.with_preset(loop.LoopConfig(game="connect_four"), "published")
    assert (run.old_best_start, run.revert_at_equal) == (0.5, True)
    with pytest.raises(ValueError, match="unknown preset"):
        config.with_preset(DQNConfig(), "bogus")
    for cfg in (DQNConfig(), PPOConfig(), ReinforceConfig(), loop.LoopConfig(game="connect_four")):  # thesis undoes published
        assert config.with_preset(config.with_preset(cfg, "published"), "thesis") == cfg


def _bound(f):
    """A strategy function as ``(function, bound keywords)`` when it is a ``functools.partial``."""
    return (f.func, f.keywords) if isinstance(f, functools.partial) else f


MIRROR_AVG_Q = (mirror_avg_q, {"symmetry": MIRROR})  # the published code's Q, on Connect Four's mirror


def test_presets_choose_the_strategies():
    assert PPO(PPOConfig(), C4).strategies == Reinforce(ReinforceConfig(), C4).strategies == onpolicy_games.Strategies()
    ppo = PPO(config.with_preset(PPOConfig(), "published"), C4).strategies
    assert ppo.behaviour.func is onpolicy_games.exploring_policy
    assert ppo.behaviour.keywords == {"explore": 0.1, "mirror_avg": True}
    assert (ppo.play, ppo.backprop, ppo.targets, ppo.log_prob_columns) == (
        rollouts.mixed_rollout_no_draws, backprop_lib.backprop_segments, onpolicy_games.one_step_td_targets, all_columns)
    rei = Reinforce(config.with_preset(ReinforceConfig(), "published"), C4).strategies
    assert rei == onpolicy_games.Strategies(play=rollouts.mixed_rollout_no_draws, backprop=backprop_lib.backprop_segments)
    for preset, want in (("thesis", (dqn_lib.target_network, dqn_lib.q_values, legal_mask)),
                         ("published", (dqn_lib.online_network, MIRROR_AVG_Q, all_columns))):
        s = DQN(config.with_preset(DQNConfig(), preset), game=C4).strategies
        assert s.td_target.func is dqn_lib.max_td_target
        assert (s.td_target.keywords["net"], _bound(s.td_target.keywords["q"]), s.td_target.keywords["legal"]) == want
    s = DQN(config.with_preset(DQNConfig(), "published"), game=C4).strategies
    assert (_bound(s.behaviour_q), s.epsilon_clock, s.sync_target, s.play, s.backprop) == (
        MIRROR_AVG_Q, dqn_lib.update_clock, dqn_lib.reset_target, rollouts.mixed_rollout_no_draws,
        backprop_lib.backprop_segments)
    assert DQN(DQNConfig(double=True), game=C4).strategies.td_target.func is dqn_lib.double_td_target


def test_preset_flag_on_every_trainer_and_explicit_flags_override():
    from c4jax.cli.training import defaults, parse

    c = parse("dqn", ["--preset", "published", "--eps-decay", "600", "--no-target-online"])
    assert c.preset == "published" and c.dqn.eps_decay == 600.0 and not c.dqn.target_online
    assert c.dqn.target_unmasked and c.run.old_best_start == 0.5
    d = parse("dueling_dqn", ["--preset=published"])
    assert d.dqn.dueling and d.dqn.eps_per_update
    p = parse("ppo", ["--preset", "published", "--eval-every", "315"])
    assert p.ppo.td_advantage and p.ppo.buffers_per_eval == 1 and p.ppo.eval_every == 0
    r = parse("reinforce", ["--preset", "published"])
    assert r.reinforce.reward_backprop == "segments" and r.run.revert_at_equal
    # dqn's default is the published preset; --preset thesis turns every switch back off
    assert parse("dqn", []) == defaults("dqn", "connect_four")
    assert defaults("dqn", "connect_four").preset == "published" and defaults("dqn", "connect_four").dqn.target_online
    t = parse("dqn", ["--preset", "thesis"])
    assert t.dqn == DQNConfig() and t.run == whole_games("runs/dqn", "connect_four")
    assert defaults("ppo", "connect_four").preset == "published" and defaults("ppo", "connect_four").ppo.td_advantage
    tp = parse("ppo", ["--preset", "thesis"])
    assert tp.ppo == PPOConfig() and tp.run == whole_games("runs/ppo", "connect_four")
    assert parse("reinforce", []).preset == "thesis"
    du = parse("dueling_dqn", [])  # Dueling DQN keeps the thesis text
    assert du == defaults("dueling_dqn", games.DEFAULT) and du.preset == "thesis" and du.dqn == DQNConfig(dueling=True)
    bad = run_script("ppo.py", "--preset", "bogus", "--no-progress")
    assert bad.returncode == 2 and "bogus" in bad.stderr


# --- every switch off: today's trainers; the published preset resumes exactly -------------------

# Metrics of these fixed-seed runs, recorded with the trainers before the switches existed.
BEFORE = {
    "dueling_dqn": ("dueling_dqn.py", ["--total-updates", "200", "--buffer-size", "2000", "--learning-starts", "200",
                                       "--eval-every", "200"],
                    [{"step": 200, "train/loss": 34.66529846191406, "selfplay/length": 11.300000190734863,
                      "eval/vs_random": 0.99, "eval/vs_1steplA": 0.46}]),
    "ppo": ("ppo.py", ["--total-updates", "20", "--buffer-size", "256", "--games-per-collect", "16", "--epochs", "2"],
            [{"step": 16, "train/loss": 1.3795020580291748, "train/value_loss": 2.0179505348205566,
              "selfplay/length": 9.75, "eval/vs_random": 1.0, "eval/vs_1steplA": 0.49},
             {"step": 32, "train/loss": 1.4361591339111328, "train/value_loss": 2.0614523887634277,
              "selfplay/length": 8.75, "eval/vs_random": 0.98, "eval/vs_1steplA": 0.45}]),
    "reinforce": ("reinforce.py", ["--total-updates", "20", "--games-per-collect", "5", "--eval-every", "10"],
                  [{"step": 10, "train/loss": 1.0460931062698364, "train/value_loss": 1.4006071090698242,
                    "selfplay/length": 11.800000190734863, "eval/vs_random": 1.0, "eval/vs_1steplA": 0.5},
                   {"step": 20, "train/loss": 1.3426892757415771, "train/value_loss": 1.4610036611557007,
                    "selfplay/length": 7.600000381469727, "eval/vs_random": 0.99, "eval/vs_1steplA": 0.46}]),
}


def _rows(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BEFORE))
def test_every_switch_off_repeats_the_trainers_before_the_switches(tmp_path, name):
    script, flags, want = BEFORE[name]
    proc = run_script(script, "--out", str(tmp_path), "--no-progress", "--preset", "thesis", *flags)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = _rows(tmp_path / "metrics.jsonl")
    assert [{k: r[k] for k in w} for r, w in zip(rows, want)] == want


@pytest.mark.slow
def test_published_preset_resumes_exactly(tmp_path):
    flags = ["--buffer-size", "2000", "--learning-starts", "200", "--eval-every", "200", "--no-progress",
             "--preset", "published"]
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    assert run_script("dqn.py", "--out", str(straight), "--total-updates", "400", *flags).returncode == 0
    assert run_script("dqn.py", "--out", str(resumed), "--total-updates", "200", *flags).returncode == 0
    assert run_script("dqn.py", "--out", str(resumed), "--total-updates", "400", "--resume", *flags).returncode == 0
    drop = lambda rows: [{k: v for k, v in r.items() if k != "time/wall_s"} for r in rows]  # noqa: E731
    rows = drop(_rows(straight / "metrics.jsonl"))
    assert rows == drop(_rows(resumed / "metrics.jsonl"))
    # ε per update: 0.05 + 0.75 exp(-u / 500) at u = 200, 400 updates
    np.testing.assert_allclose([r["selfplay/epsilon"] for r in rows], 0.05 + 0.75 * np.exp(-np.array([200, 400]) / 500),
                               rtol=1e-6)
    meta = checkpoint.read_metadata(straight / "last")
    assert meta["config"]["target_online"] and meta["config"]["reward_backprop"] == "segments"
    algo = DQN(DQNConfig(buffer_size=2000, learning_starts=200, eval_every=200), game=C4)
    params = loop.initial_params(loop.LoopConfig(game="connect_four"), algo.heads, 128, jax.random.key(0))
    like = {"state": train_state.keys_to_data(stacked.stack_seeds([algo.init(jax.random.key(0), params)])),
            "old_params": stacked.stack_seeds([params])}
    a, b = checkpoint.restore(straight / "last", like), checkpoint.restore(resumed / "last", like)
    chex.assert_trees_all_equal(a, b)
    # the last evaluation (0.30 <= 0.5 - 0.08) reverts: the target network is reset to the restored weights
    assert rows[-1]["eval/reverted"] == 1.0
    chex.assert_trees_all_equal(a["state"].target_params, a["state"].params)
