"""DQN by self-play on any game (c4jax.learning.selfplay_dqn): learning tic-tac-toe, a chunk's
bookkeeping and reproducibility, the configuration's checks, and experiments/dqn.py --game
checkers end to end."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from c4jax import agents, evaluation, games
from c4jax.learning.selfplay_dqn import SelfPlayDQN, SelfPlayDQNConfig
from scripts import run_script

TTT = games.from_pgx("tic_tac_toe")
SMALL = dict(envs=32, steps=4, updates_per_iteration=4, batch_size=128, buffer_size=20_000, learning_starts=500,
             iterations_per_eval=50, epsilon_decay_updates=1000, tau=0.01, learning_rate=1e-3, tower_blocks=1,
             tower_channels=16)


def test_config_is_checked():
    with pytest.raises(ValueError, match="--buffer-size .* must hold one iteration"):
        SelfPlayDQNConfig(envs=64, steps=4, buffer_size=100)
    with pytest.raises(ValueError, match="--tau must be in"):
        SelfPlayDQNConfig(tau=2.0)


def test_a_chunk_counts_its_transitions_and_updates_and_repeats_exactly():
    cfg = SelfPlayDQNConfig(**{**SMALL, "envs": 8, "learning_starts": 64, "iterations_per_eval": 4,
                               "buffer_size": 512})
    algo = SelfPlayDQN(cfg, TTT)
    state = algo.init(jax.random.key(1), algo.fresh_params(jax.random.key(0)))
    first, m = algo.chunk(state)
    again, m_again = algo.chunk(state)
    for x, y in zip(jax.tree.leaves((first.params, first.buffer)), jax.tree.leaves((again.params, again.buffer))):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    assert {k: float(v) for k, v in m.items()} == {k: float(v) for k, v in m_again.items()}
    # 4 iterations of 8 x 4 plies: learning starts once 64 transitions are in (iteration 2)
    assert int(first.buffer.size) == 4 * 32 and int(first.updates) == (4 - 1) * 4
    assert 5 <= float(m["selfplay/length"]) <= 9 and float(m["selfplay/epsilon"]) < 1.0


def test_the_td_loss_is_the_huber_loss_to_the_negamax_double_dqn_target():
    """On played transitions with signs and ends mixed in, the TD loss is the Huber loss of Q(s, a) to
    r + gamma sign (1 - done) Q_target(s', argmax_{legal a'} Q_online(s', a')), recomputed in float64."""
    cfg = SelfPlayDQNConfig(**{**SMALL, "envs": 8, "steps": 2, "buffer_size": 64, "learning_starts": 16, "gamma": 0.9, "huber_delta": 0.3})
    algo = SelfPlayDQN(cfg, TTT)
    params, target = algo.fresh_params(jax.random.key(0)), algo.fresh_params(jax.random.key(1))
    batch, *_ = algo._play(algo.init(jax.random.key(2), params), jax.random.key(3))
    n = batch.action.shape[0]
    batch = batch.replace(sign=jnp.where(jnp.arange(n) % 3 == 0, 1.0, -1.0), done=jnp.arange(n) % 4 == 1)
    _, metrics = algo._loss(params, target, batch)
    q, q_online, q_target = (np.asarray(algo._q(p, o)[0], np.float64)
                             for p, o in ((params, batch.obs), (params, batch.next_obs), (target, batch.next_obs)))
    losses = []
    for i in range(n):
        legal = np.asarray(batch.next_legal[i])
        y = float(batch.reward[i])
        if not batch.done[i] and legal.any():
            best = int(np.argmax(np.where(legal, q_online[i], -np.inf)))
            y += 0.9 * float(batch.sign[i]) * q_target[i, best]
        err = abs(q[i, int(batch.action[i])] - y)
        losses.append(0.5 * err**2 if err <= 0.3 else 0.3 * (err - 0.5 * 0.3))
    np.testing.assert_allclose(float(metrics["train/td_loss"]), np.mean(losses), rtol=1e-5)


@pytest.mark.slow  # a minute of training; the chunk's bookkeeping above stays in the default run
def test_dqn_learns_tic_tac_toe():
    """Self-play Double DQN: the greedy policy beats a uniformly random player clearly after a few
    hundred updates (a random policy scores 0.5; measured: 0.82-0.89 from 400 to 1,600 updates)."""
    algo = SelfPlayDQN(SelfPlayDQNConfig(**SMALL), TTT)
    state = algo.init(jax.random.key(1), algo.fresh_params(jax.random.key(0)))
    first, m = algo.chunk(state)
    # 50 iterations of 32 x 4 plies: learning starts once 500 transitions are in (iteration 4)
    assert int(first.buffer.size) == 50 * 128 and int(first.updates) == (50 - 3) * 4
    state, _ = algo.chunk(first)
    result = evaluation.match(algo.agent_of(state.params, "dqn"), agents.load("random").replace(game=TTT),
                              jax.random.key(2), game=TTT)
    assert result.win_rate >= 0.7, result.win_rate


def test_dqn_script_trains_checkers_and_saves_a_greedy_agent(tmp_path):
    out = tmp_path / "ck"
    args = ("--game", "checkers", "--out", out, "--envs", "4", "--steps", "2", "--batch-size", "8",
            "--buffer-size", "64", "--learning-starts", "8", "--updates-per-iteration", "1", "--iterations-per-eval",
            "4", "--eval-opponents", "--select-by", "random", "--tower-blocks", "1", "--tower-channels", "4",
            "--no-progress")
    done = run_script("dqn.py", *args, "--total-updates", "4")
    assert done.returncode == 0, done.stderr[-2000:]
    agent = agents.load(str(out))
    assert agents.game_of(agent) == "checkers" and not agent.stochastic and agent.num_simulations == 0
    resumed = run_script("dqn.py", *args, "--total-updates", "8", "--resume")
    assert resumed.returncode == 0 and "resumed" in resumed.stdout, resumed.stderr[-2000:]
