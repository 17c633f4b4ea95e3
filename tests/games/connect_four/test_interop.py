"""PettingZoo's and pgx's Connect Four observations as c4jax boards (c4jax.games.connect_four.interop), and the
shipped AlphaZero network as a pgx-style baseline (c4jax.agents.pgx_baseline): random games stepped
in both libraries and in c4jax's environment with the same moves give the same boards, and the
baseline's greedy move is the raw network agent's."""

from __future__ import annotations

import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pgx
import pytest

from c4jax import agents
from c4jax.agents.pgx_baseline import PgxBaseline, baseline
from c4jax.games.connect_four import interop
from c4jax.games.connect_four import env
from scripts import ROOT

GAMES = 48


def _random_games(seed: int, n: int = GAMES):
    """Step ``n`` pgx games and the c4jax environment with the same random legal moves; per ply the
    pgx observations, the c4jax boards and which games were still running: lists of [n, ...] arrays."""
    pgx_env = pgx.make("connect_four")
    key = jax.random.key(seed)
    p = jax.jit(jax.vmap(pgx_env.init))(jax.random.split(key, n))
    c = jax.vmap(lambda _: env.init())(jnp.arange(n))
    pgx_step, c4_step = jax.jit(jax.vmap(pgx_env.step)), jax.jit(jax.vmap(env.step))
    observations, boards, running, moves = [], [], [], []
    for ply in range(env.MAX_MOVES):
        live = ~(p.terminated | p.truncated)
        assert np.array_equal(live, ~c.done)
        if not live.any():
            break
        observations.append(np.asarray(p.observation))
        boards.append(np.asarray(jax.vmap(env.observe)(c)))
        running.append(np.asarray(live))
        assert np.array_equal(np.asarray(p.legal_action_mask)[live], np.asarray(c.legal_mask)[live])
        logits = jnp.where(c.legal_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(jax.random.fold_in(key, ply), logits).astype(jnp.int32)
        action = jnp.where(live, action, 0)
        moves.append(np.asarray(action))
        p, c = pgx_step(p, action), c4_step(c, action)
    return observations, boards, running, moves


@pytest.fixture(scope="module")
def games():
    return _random_games(0)


def test_pgx_observations_are_c4jax_boards_batched_and_single(games):
    observations, boards, running, _ = games
    assert len(observations) > 20  # random games last a while
    for obs, board, live in zip(observations, boards, running):
        converted = np.asarray(interop.board_from_pgx(obs))
        assert converted.dtype == np.int8 and converted.shape == (GAMES, 6, 7)
        np.testing.assert_array_equal(converted[live], board[live])
        i = int(np.flatnonzero(live)[0])
        np.testing.assert_array_equal(np.asarray(interop.board_from_pgx(obs[i])), board[i])
    stacked = np.stack(observations[:5])  # [T, B, 6, 7, 2]: any leading axes
    np.testing.assert_array_equal(np.asarray(jax.jit(interop.board_from_pgx)(stacked)), np.stack(boards[:5]))


def test_a_pgx_observation_rebuilds_the_c4jax_state(games):
    observations, boards, running, _ = games
    obs, board, live = observations[9], boards[9], running[9]
    i = int(np.flatnonzero(live)[0])
    state, expected = interop.state_from_pgx(obs[i]), env.from_board(board[i])
    for field in ("cur", "opp", "legal_mask", "done", "num_moves"):
        np.testing.assert_array_equal(np.asarray(jax.tree.leaves(getattr(state, field))),
                                      np.asarray(jax.tree.leaves(getattr(expected, field))))
    assert int(state.num_moves) == 9


def _pettingzoo_observation(moves: list[int]) -> dict:
    """PettingZoo connect_four_v3's observation of the agent to move after ``moves``, built from its
    documented layout: a row-major 6 x 7 board (row 0 on top) where player_0's stones are 1 and
    player_1's 2, dropped from the bottom row; plane 0 the observing agent's stones, plane 1 the
    other's, int8; action_mask int8[7] of the columns with an empty top cell."""
    board = np.zeros((6, 7), np.int8)
    for ply, col in enumerate(moves):
        row = max(r for r in range(6) if board[r, col] == 0)
        board[row, col] = ply % 2 + 1
    me, other = len(moves) % 2 + 1, (len(moves) + 1) % 2 + 1
    planes = np.stack([board == me, board == other], axis=2).astype(np.int8)
    return {"observation": planes, "action_mask": (board[0] == 0).astype(np.int8)}


def test_pettingzoo_observations_are_c4jax_boards(games):
    _, boards, running, moves = games
    for g in range(4):
        history = []
        for ply, (board, live) in enumerate(zip(boards, running)):
            if not live[g]:
                break
            obs = _pettingzoo_observation(history)
            np.testing.assert_array_equal(np.asarray(interop.board_from_pettingzoo(obs)), board[g])
            np.testing.assert_array_equal(np.asarray(interop.board_from_pettingzoo(obs["observation"])), board[g])
            np.testing.assert_array_equal(np.asarray(obs["action_mask"]).astype(bool), board[g][0] == 0)
            assert int(interop.state_from_pettingzoo(obs).num_moves) == ply
            history.append(int(moves[ply][g]))
    batch = [_pettingzoo_observation([3, 3, 4][:k]) for k in range(3)]
    stacked = {key: np.stack([o[key] for o in batch]) for key in batch[0]}  # a batch, as a vector env gives
    expected = np.stack([np.asarray(env.observe(s)) for s in (env.init(), env.step(env.init(), 3),
                                                               env.step(env.step(env.init(), 3), 3))])
    np.testing.assert_array_equal(np.asarray(jax.jit(interop.board_from_pettingzoo)(stacked)), expected)


def test_the_real_pettingzoo_environment_if_installed():
    connect_four_v3 = pytest.importorskip("pettingzoo.classic.connect_four_v3")
    pz = connect_four_v3.env()
    pz.reset(seed=0)
    state, rng = env.init(), np.random.default_rng(0)
    for agent in pz.agent_iter():
        obs, _, terminated, truncated, _ = pz.last()
        if terminated or truncated:
            break
        np.testing.assert_array_equal(np.asarray(interop.board_from_pettingzoo(obs)), np.asarray(env.observe(state)))
        col = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        pz.step(col)
        state = env.step(state, col)


def test_observations_of_another_shape_are_refused():
    with pytest.raises(ValueError, match=r"\[\.\.\., 6, 7, 2\]"):
        interop.board_from_pgx(np.zeros((6, 7)))
    with pytest.raises(ValueError, match="'observation' entry"):
        interop.board_from_pettingzoo({"action_mask": np.ones(7)})


def test_the_adapters_import_neither_library():
    code = ("import sys, c4jax.games.connect_four.interop, c4jax.agents.pgx_baseline; "
            "print(sorted(m for m in ('pgx', 'pettingzoo') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.fixture(scope="module")
def model() -> PgxBaseline:
    return baseline("alphazero")


def test_the_baseline_plays_the_raw_alphazero_networks_moves(games, model):
    observations, boards, running, _ = games
    obs = np.concatenate([o[r] for o, r in zip(observations, running)])  # every position that was to move
    ref = np.concatenate([b[r] for b, r in zip(boards, running)])
    raw = agents.load("alphazero@0:det")
    logits, value = model(obs)
    assert logits.shape == (len(obs), 7) and value.shape == (len(obs),) and len(obs) > 500
    np.testing.assert_array_equal(np.asarray(jnp.argmax(logits, -1)), np.asarray(raw.act(ref, jax.random.key(0))))
    probs = np.asarray(jax.nn.softmax(logits, -1))
    np.testing.assert_allclose(probs[ref[:, 0, :] == 0], np.asarray(raw.scores(ref))[ref[:, 0, :] == 0], atol=1e-5)
    assert (probs[ref[:, 0, :] != 0] == 0).all()  # full columns are never chosen
    assert ((-1 <= np.asarray(value)) & (np.asarray(value) <= 1)).all() and np.ptp(np.asarray(value)) > 0.5


def test_the_baseline_is_pure_jax(games, model):
    obs = games[0][12]
    logits, value = model(obs)
    for fn in (jax.jit(model), jax.vmap(model)):
        other_logits, other_value = fn(obs)
        np.testing.assert_allclose(np.asarray(other_logits), np.asarray(logits), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.asarray(other_value), np.asarray(value), rtol=1e-5, atol=1e-5)
    as_argument = jax.jit(lambda m, o: m(o))(model, obs)  # a pytree of its parameters
    np.testing.assert_allclose(np.asarray(as_argument[0]), np.asarray(logits), rtol=1e-5, atol=1e-5)
    single_logits, single_value = model(obs[0])
    assert single_logits.shape == (7,) and single_value.shape == ()
    np.testing.assert_allclose(np.asarray(single_logits), np.asarray(logits[0]), rtol=1e-5, atol=1e-5)


def test_only_networks_with_a_value_head_are_baselines():
    with pytest.raises(ValueError, match="not an AlphaZero-style network"):
        baseline("supervised")
    with pytest.raises(ValueError, match="no shipped agent or checkpoint"):
        baseline("no_such_network")


def _pgx_states(moves: list[int], n: int):
    """A batch of ``n`` pgx connect_four states: the last ``n`` prefixes of ``moves`` played."""
    pgx_env, out = pgx.make("connect_four"), []
    init, step = jax.jit(pgx_env.init), jax.jit(pgx_env.step)  # compiled once for the prefixes' moves
    for k in range(len(moves) - n + 1, len(moves) + 1):
        state = init(jax.random.key(k))
        for col in moves[:k]:
            state = step(state, col)
        out.append(state)
    return jax.tree.map(lambda *x: jnp.stack(x), *out)


def test_a_pgx_state_rebuilds_the_c4jax_state():
    moves = [3, 3, 4, 2, 5]
    batch = _pgx_states(moves, n=3)  # after 3, 4 and 5 moves
    one = jax.tree.map(lambda x: x[2], batch)
    expected = env.init()
    for col in moves:
        expected = env.step(expected, col)
    for state in (interop.state_from_pgx(one), interop.state_from_pgx(one.observation),
                  interop.state_from_pgx(observation=one.observation)):
        np.testing.assert_array_equal(np.asarray(env.observe(state)), np.asarray(env.observe(expected)))
        assert int(state.num_moves) == 5
    rebuilt = jax.vmap(interop.state_from_pgx)(batch)  # a batch of pgx states
    assert np.asarray(rebuilt.num_moves).tolist() == [3, 4, 5]
    np.testing.assert_array_equal(np.asarray(rebuilt.legal_mask), np.asarray(batch.legal_action_mask))
    with pytest.raises(TypeError, match="one of the two"):
        interop.state_from_pgx(one, observation=one.observation)
    with pytest.raises(TypeError, match="one of the two"):
        interop.state_from_pgx()


def test_agents_play_a_batched_pgx_loop_where_some_games_have_ended():
    """agent.act on pgx's batch as it is, outside jit: finished games get column 0, the others a
    legal column, until every game is over."""
    pgx_env = pgx.make("connect_four")
    key = jax.random.key(1)
    state = jax.jit(jax.vmap(pgx_env.init))(jax.random.split(key, 16))
    step = jax.jit(jax.vmap(pgx_env.step))
    agent = agents.load("1steplA:sto")
    mixed = 0  # plies with both running and finished games
    for _ in range(env.MAX_MOVES):
        live = np.asarray(~(state.terminated | state.truncated))
        if not live.any():
            break
        mixed += int(not live.all())
        key, sub = jax.random.split(key)
        action = np.asarray(agent.act(interop.board_from_pgx(state.observation), sub))
        assert np.asarray(state.legal_action_mask)[np.arange(16), action][live].all()
        assert (action[~live] == 0).all()
        state = step(state, jnp.asarray(action))
    assert not live.any() and mixed > 0
