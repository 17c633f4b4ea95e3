"""Training partly against a fixed opponent (--opponent, Löhr et al.): mixed rollouts, configs, collection."""

import functools
import json

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from c4jax import agents, games
from c4jax.agents import arena
from c4jax.learning import loop
from c4jax.learning.dqn import DQN, DQNConfig
from c4jax.learning.settings.opponent import OpponentConfig
from c4jax.learning.ppo import PPO, PPOConfig
from c4jax.learning.reinforce import ReinforceConfig
from c4jax.learning import rollouts
from c4jax.games.connect_four.rewards import shaped_reward
from c4jax.learning.config import validate
from scripts import run_script
import turn_based

B, N_VS = 64, 40
C4 = games.make(games.DEFAULT)
mixed_rollout = jax.jit(functools.partial(rollouts.mixed_rollout, game=C4), static_argnames=("n_vs",))


@pytest.fixture(scope="module")
def mixed():
    learner, opponent = agents.load("random"), agents.load("2steplA:det")
    states = arena.random_initial_states(jax.random.key(0), B, C4)
    traj, learner_moves = mixed_rollout(learner, opponent, states, N_VS, jax.random.key(1))
    return opponent, traj, np.asarray(learner_moves)


def test_the_opponent_makes_exactly_the_other_moves_of_its_games(mixed):
    opponent, traj, learner_moves = mixed
    valid, boards, actions = np.asarray(traj.valid), np.asarray(traj.observations), np.asarray(traj.actions)
    # self-play games: every move is the learner's
    np.testing.assert_array_equal(learner_moves[N_VS:], valid[N_VS:])
    # games against the opponent: the moves alternate and the opponent's are its own (deterministic) choices
    vs_valid, vs_learner = valid[:N_VS], learner_moves[:N_VS]
    assert (vs_learner <= vs_valid).all()
    opp = vs_valid & ~vs_learner
    assert (vs_learner[:, :-1] & vs_valid[:, 1:] <= opp[:, 1:]).all()  # learner move -> opponent next
    assert (opp[:, :-1] & vs_valid[:, 1:] <= vs_learner[:, 1:]).all()
    rows = np.nonzero(opp)
    chosen = np.asarray(opponent.act(jnp.asarray(boards[rows]), jax.random.key(0)))
    np.testing.assert_array_equal(chosen, actions[rows])
    # the learner moves first in some games and second in others
    first = vs_learner[:, 0]
    assert 0 < first.sum() < N_VS


def test_without_an_opponent_it_is_plain_self_play():
    learner = agents.load("random")
    states = arena.random_initial_states(jax.random.key(0), 16, C4)
    traj, moves = mixed_rollout(learner, None, states, 0, jax.random.key(3))
    plain = jax.jit(functools.partial(arena.rollout, game=C4, reward_fn=shaped_reward))(learner, None, states, True,
                                                                              jax.random.key(3))
    chex.assert_trees_all_equal(traj, plain)
    np.testing.assert_array_equal(moves, plain.valid)


def test_configs_check_the_opponent_and_its_share():
    for cls in (DQNConfig, PPOConfig, ReinforceConfig):
        validate(cls(opponent="nobody"))  # a name: the agent loads when the run starts
        with pytest.raises(ValueError, match="unknown agent 'nobody'"):
            _ = cls(opponent="nobody").opponent_agent
        with pytest.raises(ValueError, match="--opponent must be 'self' or an agent name"):
            validate(cls(opponent=" "))
        with pytest.raises(ValueError, match="opponent-frac"):
            validate(cls(opponent="1steplA", opponent_frac=1.5))
    assert OpponentConfig().opponent_games(10) == 0  # 'self': no games against anyone
    assert OpponentConfig(opponent="2steplA:sto", opponent_frac=0.5).opponent_games(10) == 5
    assert OpponentConfig(opponent="random", opponent_frac=1.0).opponent_games(7) == 7
    # PPO's automatic game count grows so that the learner's own moves still fill the buffer
    assert PPOConfig().games == 160
    assert PPOConfig(opponent="2steplA:sto").games == 214


def _supervised_two_heads():
    return loop.initial_params(loop.LoopConfig(game="connect_four"), "two", 128, jax.random.key(0))


def _collect(cfg, params):
    """One whole-games collection of PPO with ``cfg``: ``(samples [B, 2T], {"selfplay/length"})``."""
    algo = PPO(cfg, games.make(games.DEFAULT))
    state = algo.init(jax.random.key(0), params)
    return jax.jit(lambda s: algo.collection.collect(s, (jax.random.key(2), jax.random.key(5)))[1:])(state)


def test_collected_rows_are_the_learners_moves_with_returns_over_the_whole_game():
    params = _supervised_two_heads()
    rows, _ = _collect(PPOConfig(games_per_collect=8, opponent="1steplA:sto", opponent_frac=1.0), params)
    valid = np.asarray(rows.valid)  # [8, 84]: episode then mirror
    lengths = (np.asarray(rows.done[:, :42]).argmax(-1) + 1)
    np.testing.assert_array_equal(valid[:, :42], valid[:, 42:])
    # about half the moves of each game are the learner's: the rows are the moves of one seat
    played = np.arange(42)[None] < np.asarray(lengths)[:, None]
    assert (valid[:, :42] <= played).all()
    np.testing.assert_array_equal(valid[:, :42].sum(-1), (np.asarray(lengths) + valid[:, 0]) // 2)
    for g in range(8):
        idx = np.nonzero(valid[g, :42])[0]
        assert (np.diff(idx) == 2).all()
        # returns run over every move of the game, the opponent's included
        full = turn_based.turn_based_returns(jnp.asarray(rows.reward[g, :42]), jnp.asarray(played[g]), 0.95)
        np.testing.assert_allclose(np.asarray(rows.target[g, idx]), np.asarray(full)[idx], rtol=1e-6)
    # padding and opponent rows carry nothing
    assert (np.asarray(rows.advantage)[~valid] == 0).all() and (np.asarray(rows.logp)[~valid] == 0).all()


def test_without_an_opponent_every_move_is_a_row():
    plain, stats = _collect(PPOConfig(games_per_collect=8), _supervised_two_heads())
    assert float(stats["selfplay/length"]) == float(plain.valid.sum() / 16)


def test_dqn_learns_from_games_against_the_opponent():
    cfg = DQNConfig(buffer_size=2000, learning_starts=200, eval_every=40, updates_per_episode=4, opponent="2steplA:sto",
                    opponent_frac=0.5)
    algo = DQN(cfg, game=C4)
    params = loop.initial_params(loop.LoopConfig(game="connect_four"), algo.heads, 128, jax.random.key(0))
    state = algo.init(jax.random.key(1), params)
    new, metrics = algo.chunk(state)
    assert int(new.updates) == 40 and int(new.episodes) >= 10
    chex.assert_trees_all_equal(new.params["conv"], params["conv"])
    assert all(np.isfinite(np.asarray(v)).all() for v in metrics.values())


@pytest.mark.parametrize("script, extra", [
    ("ppo.py", ["--total-updates", "300", "--buffer-size", "500"]),
    ("dueling_dqn.py", ["--total-updates", "200", "--buffer-size", "2000", "--learning-starts", "200",
                        "--eval-every", "200"]),
])
@pytest.mark.slow
def test_scripts_train_against_an_opponent_and_record_it(tmp_path, script, extra):
    out = tmp_path / "run"
    cmd = [script, "--out", str(out), "--opponent", "2steplA:sto",
           "--opponent-frac", "0.5", "--no-progress", *extra]
    proc = run_script(*cmd)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    text = json.dumps(summary)
    assert "2steplA:sto" in text, "the run's record must say what it trained against"
    assert agents.load(str(out / "best")) is not None
    bad = run_script(script, "--out", str(tmp_path / "bad"),
                          "--opponent", "nobody", "--no-progress")
    assert bad.returncode != 0 and "unknown agent 'nobody'" in bad.stderr
