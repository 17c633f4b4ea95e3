"""DQN: replay buffer, transitions with mirrors, ε schedule, frozen conv, scripts, resume; on any game
(--collect streams, a residual tower): learning tic-tac-toe, a chunk's bookkeeping and reproducibility, the
negamax Double DQN target, the dueling tower, the per-game defaults and Checkers end to end."""

import functools
import json

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from c4jax import agents, evaluation, games
from c4jax.cli import training
from c4jax.learning import buffer as rb
from c4jax.io import checkpoint
from c4jax.games.connect_four import env
from c4jax.games.connect_four.kit import MIRROR
from c4jax.agents import arena
from c4jax.learning import config, loop, stacked, train_state
from c4jax.learning import dqn as dqn_lib
from c4jax.learning.dqn import DQN, DQNConfig, epsilon
from c4jax.learning.dqn_games import transitions
from c4jax.learning import backprop as backprop_lib
from c4jax.nets import tower as towers
from scripts import compile_lines_at_start, run_script

C4 = games.make(games.DEFAULT)


# A small configuration that starts learning at once: 10 games -> 40 updates per iteration.
TINY = dict(buffer_size=2000, learning_starts=200, eval_every=40, episodes_per_iteration=10, updates_per_episode=4)


# --- buffer ---------------------------------------------------------------------------------


def test_buffer_wraps_around_and_skips_invalid_rows():
    buf = rb.init({"x": jnp.int32(0), "v": jnp.zeros(2)}, capacity=5)
    buf = rb.add(buf, {"x": jnp.arange(1, 5), "v": jnp.ones((4, 2))}, jnp.array([True, False, True, True]))
    assert int(buf.size) == 3 and int(buf.ptr) == 3
    np.testing.assert_array_equal(buf.items["x"], [1, 3, 4, 0, 0])
    buf = rb.add(buf, {"x": jnp.arange(10, 14), "v": jnp.zeros((4, 2))}, jnp.ones(4, bool))
    assert int(buf.size) == 5 and int(buf.ptr) == 2
    np.testing.assert_array_equal(buf.items["x"], [12, 13, 4, 10, 11])  # oldest rows overwritten


def test_buffer_samples_only_filled_slots():
    buf = rb.init(jnp.int32(0), capacity=100)
    buf = rb.add(buf, jnp.arange(1, 8), jnp.ones(7, bool))
    s = rb.sample(buf, jax.random.key(0), 1000)
    assert set(np.asarray(s).tolist()) == set(range(1, 8))


# --- transitions ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def traj():
    a = agents.load("1steplA:sto")
    c4 = games.make("connect_four")
    return jax.jit(functools.partial(arena.rollout, game=c4))(a, None, arena.random_initial_states(jax.random.key(0), 16, c4),
                                                              True, jax.random.key(1))


@jax.jit
def _board_after(board, action):
    """The board after ``action`` on ``board``, seen by the player to move then (compiled once for the
    few hundred moves below)."""
    return env.observe(env.step(env.from_board(board), action))


def test_transitions_link_each_board_to_the_next_and_mirror_them(traj):
    items, valid = transitions(traj, 3.0, MIRROR)
    items, valid = jax.device_get(items), np.asarray(valid)
    n = 16 * env.MAX_MOVES
    boards, nxt, done = items.board[:n].reshape(16, 42, 6, 7), items.next_board[:n].reshape(16, 42, 6, 7), \
        items.done[:n].reshape(16, 42)
    tb, tv, td = np.asarray(traj.observations), np.asarray(traj.valid), np.asarray(traj.done)
    np.testing.assert_array_equal(boards, tb)
    for g in range(16):
        for t in range(int(tv[g].sum())):
            if td[g, t]:
                assert done[g, t] and (nxt[g, t] == 0).all()
            else:
                np.testing.assert_array_equal(nxt[g, t], tb[g, t + 1])
                # s' is s after the move, seen by the opponent: same stones with signs swapped
                np.testing.assert_array_equal(np.asarray(_board_after(tb[g, t], int(traj.actions[g, t]))), nxt[g, t])
    # the second half mirrors the first
    np.testing.assert_array_equal(items.board[n:], items.board[:n][..., ::-1])
    np.testing.assert_array_equal(items.next_board[n:], items.next_board[:n][..., ::-1])
    np.testing.assert_array_equal(items.action[n:], 6 - items.action[:n])
    np.testing.assert_array_equal(items.reward[n:], items.reward[:n])
    np.testing.assert_array_equal(valid[n:], valid[:n])
    np.testing.assert_array_equal(items.reward[:n].reshape(16, 42), np.asarray(backprop_lib.backprop_rewards(traj)))


def test_epsilon_schedule():
    cfg = DQNConfig()
    np.testing.assert_allclose(epsilon(cfg, 0.0), 0.8, rtol=1e-6)
    np.testing.assert_allclose(epsilon(cfg, 500.0), 0.05 + 0.75 * np.exp(-1), rtol=1e-6)
    np.testing.assert_allclose(epsilon(cfg, 1e6), 0.05, rtol=1e-6)


def test_bad_configuration_is_refused():
    with pytest.raises(ValueError, match="loss"):
        config.validate(DQNConfig(loss="l1"))
    with pytest.raises(ValueError, match="tau"):
        config.validate(DQNConfig(tau=0.0))
    with pytest.raises(ValueError, match="learning-starts"):
        config.validate(DQNConfig(buffer_size=10, learning_starts=20))


# --- updates --------------------------------------------------------------------------------


@pytest.mark.parametrize("dueling, double, loss, tau", [(False, False, "mse", 1.0), (True, True, "huber", 0.01)])
def test_updates_change_the_head_but_never_the_frozen_conv(dueling, double, loss, tau):
    cfg = DQNConfig(dueling=dueling, double=double, loss=loss, tau=tau, **TINY)
    algo = DQN(cfg, freeze_conv=True, game=C4)
    params = loop.initial_params(loop.LoopConfig(game="connect_four", init_from="checkpoints/supervised"), algo.heads, 128,
                                 jax.random.key(0))
    state = algo.init(jax.random.key(1), params)
    new, metrics = algo.chunk(state)
    assert int(new.updates) == 40 and int(new.episodes) >= 10
    chex.assert_trees_all_equal(new.params["conv"], params["conv"])
    assert not np.allclose(new.params["dense"]["kernel"], params["dense"]["kernel"])
    assert all(np.isfinite(np.asarray(v)).all() for v in metrics.values())
    if tau < 1.0:  # soft updates move the target a little every update
        assert not np.allclose(new.target_params["head"]["out"]["kernel"], params["head"]["out"]["kernel"])


def test_unfrozen_conv_trains():
    algo = DQN(DQNConfig(**TINY), freeze_conv=False, game=C4)
    params = loop.initial_params(loop.LoopConfig(game="connect_four", init_from=""), algo.heads, 128, jax.random.key(0))
    new, _ = algo.chunk(algo.init(jax.random.key(1), params))
    assert not np.allclose(new.params["conv"]["conv2"]["kernel"], params["conv"]["conv2"]["kernel"])


# --- scripts and resume ---------------------------------------------------------------------


# TINY's run: evaluations after 40 and 80 updates
SCRIPT_FLAGS = ("--buffer-size", "2000", "--learning-starts", "200", "--updates-per-episode", "4", "--eval-every", "40",
                "--no-progress")


def _run(script, out, *extra):
    cmd = [script, "--out", str(out), "--total-updates", "80", *SCRIPT_FLAGS, *extra]
    proc = run_script(*cmd)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def dqn_run(tmp_path_factory):
    """One finished 80-update dqn.py run (read, never changed, by the tests below): its output folder
    and the completed process."""
    out = tmp_path_factory.mktemp("dqn_run") / "dqn"
    with compile_lines_at_start():
        return out, _run("dqn.py", out)


@pytest.mark.parametrize("script, name", [("dqn.py", "dqn"),
                                          pytest.param("dueling_dqn.py", "dueling_dqn", marks=pytest.mark.slow)])
def test_script_end_to_end(tmp_path, script, name, request):
    if script == "dqn.py":
        out, proc = request.getfixturevalue("dqn_run")
    else:
        out = tmp_path / name
        with compile_lines_at_start():
            proc = _run(script, out)
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [40, 80]
    # stdout: a line before the first compiles, then one line per evaluation with its logged numbers
    lines = proc.stdout.splitlines()
    assert lines[:2] == [f"{name}: compiling the training program ...", f"{name}: compiling the evaluation matches ..."]
    per_eval = [line for line in lines if line.startswith(f"{name}  ")]
    assert [line.split("  ")[1] for line in per_eval] == ["40 upd", "80 upd"]
    for line, row in zip(per_eval, rows):
        assert (f"vs_random {row['eval/vs_random']:.2f}  vs_old {row['eval/vs_old']:.2f}  "
                f"vs_1steplA {row['eval/vs_1steplA']:.2f}  best {row['eval/best_vs_1steplA']:.2f}") in line
        assert line.endswith(f"  {row['time/wall_s']:.1f}s")
    for key in ("train/loss", "eval/vs_1steplA", "eval/vs_random", "eval/vs_old", "selfplay/length"):
        assert key in rows[-1]
    for f in ("metrics.csv", "curves.png", "summary.json", "best/metadata.json", "last/metadata.json"):
        assert (out / f).is_file(), f
    meta = checkpoint.read_metadata(out / "best")
    assert meta["algorithm"] == name and meta["agent"]["output"] == "q"
    agent = agents.load(str(out / "best"))
    assert agent.name.endswith(":det") and not agent.stochastic
    run = agents.load(str(out))  # a run directory loads its best agent, named by the directory
    assert run.name == f"{out}:det" and run.output == "q" and run.describe_scores().kind == "q"
    assert jax.tree.all(jax.tree.map(np.array_equal, run.params, agent.params))


def test_resume_continues_exactly_where_the_run_stopped(tmp_path, dqn_run):
    straight, resumed = dqn_run[0], tmp_path / "resumed"
    # the same run, stopped after its first evaluation and resumed
    cmd = ["dqn.py", "--out", str(resumed), "--total-updates", "40", *SCRIPT_FLAGS]
    assert run_script(*cmd).returncode == 0
    _run("dqn.py", resumed, "--resume")
    a = checkpoint.restore(straight / "last", _template(straight))
    b = checkpoint.restore(resumed / "last", _template(resumed))
    chex.assert_trees_all_equal(a, b)  # params, target, optimizer, buffer, key, counters
    rows = [json.loads(line) for line in (resumed / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [40, 80]
    # resuming with nothing to resume is a clear error
    bad = run_script("dqn.py", "--out", str(tmp_path / "none"),
                          "--resume", "--no-progress")
    assert bad.returncode != 0 and "no checkpoint to resume" in bad.stderr


def _template(out):
    algo = DQN(DQNConfig(**TINY), game=C4)
    params = loop.initial_params(loop.LoopConfig(game="connect_four"), algo.heads, 128, jax.random.key(0))
    state = stacked.stack_seeds([algo.init(jax.random.key(0), params)])  # last/ holds K = 1 stacked seeds
    return {"state": train_state.keys_to_data(state), "old_params": stacked.stack_seeds([params])}


def test_eval_symmetric_picks_best_by_how_the_shipped_agent_plays(dqn_run):
    # With --eval-symmetric (the default) the evaluation matches play the agent exactly as agents.load does (greedy,
    # symmetric averaging), so the loaded best agent re-scores its recorded best win rate to the game.
    out = dqn_run[0]
    best = checkpoint.read_metadata(out / "best")["metrics"]["eval/vs_1steplA"]
    agent = agents.load(str(out / "best"))
    assert agent.symmetric
    assert evaluation.win_rate(agent, agents.load("1steplA"), jax.random.key(123)) == best


# --- any game: streams of games on the game's own rewards, a residual tower ------------------------

TTT = games.from_pgx("tic_tac_toe")
# --collect streams's settings (c4jax.learning.dqn.STREAMS) with sizes that learn tic-tac-toe in a minute
SMALL = dict(dqn_lib.STREAMS, envs=32, steps=4, updates_per_iteration=4, batch_size=128, buffer_size=20_000,
             learning_starts=500, iterations_per_eval=50, eps_decay=1000.0, tau=0.01, learning_rate=1e-3,
             tower_blocks=1, tower_channels=16)


def _stream(game=TTT, **changes):
    return DQN(DQNConfig(**{**SMALL, **changes}), game=game)


def test_stream_config_is_checked():
    with pytest.raises(ValueError, match="--buffer-size .* must hold one iteration"):
        config.validate(DQNConfig(**{**SMALL, "envs": 64, "steps": 4, "buffer_size": 100, "learning_starts": 10}))
    with pytest.raises(ValueError, match="--target-mirror-avg, --replace-draws: only with --collect games"):
        config.validate(DQNConfig(**{**SMALL, "target_mirror_avg": True, "replace_draws": True}))
    with pytest.raises(ValueError, match="--collect games plays the thesis. whole games"):
        DQN(DQNConfig(), game=TTT)
    assert config.settle(DQNConfig(**{**SMALL, "eval_every": 64})).iterations_per_eval == 16  # iterations of 4 updates


def test_a_stream_chunk_counts_its_transitions_and_updates_and_repeats_exactly():
    algo = _stream(envs=8, learning_starts=64, iterations_per_eval=4, buffer_size=512)
    state = algo.init(jax.random.key(1), algo.fresh_params(jax.random.key(0)))
    first, m = algo.chunk(state)
    again, m_again = algo.chunk(state)
    chex.assert_trees_all_equal((first.params, first.buffer), (again.params, again.buffer))
    assert {k: float(v) for k, v in m.items()} == {k: float(v) for k, v in m_again.items()}
    # 4 iterations of 8 x 4 plies: learning starts once 64 transitions are in (iteration 2)
    assert int(first.buffer.size) == 4 * 32 and int(first.updates) == (4 - 1) * 4
    assert 5 <= float(m["selfplay/length"]) <= 9 and float(m["selfplay/epsilon"]) < 1.0
    assert set(m) >= {"train/loss", "train/td_loss", "train/value_loss", "train/q_taken"}


def test_the_stream_td_loss_is_the_huber_loss_to_the_negamax_double_dqn_target():
    """On played transitions with signs and ends mixed in, the TD loss is the Huber loss of Q(s, a) to
    r + gamma sign (1 - done) Q_target(s', argmax_{legal a'} Q_online(s', a')), recomputed in float64."""
    algo = _stream(envs=8, steps=2, buffer_size=64, learning_starts=16, gamma=0.9, huber_delta=0.3)
    params, target = algo.fresh_params(jax.random.key(0)), algo.fresh_params(jax.random.key(1))
    batch, *_ = algo.collection.play(algo, algo.init(jax.random.key(2), params), jax.random.key(3))
    n = batch.action.shape[0]
    batch = batch.replace(sign=jnp.where(jnp.arange(n) % 3 == 0, 1.0, -1.0), done=jnp.arange(n) % 4 == 1)
    _, aux = algo.loss(params, target, batch)
    q, q_online, q_target = (np.asarray(algo.q_and_value(p, o)[0], np.float64)
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
    np.testing.assert_allclose(float(aux["td_loss"]), np.mean(losses), rtol=1e-5)


def test_the_linear_epsilon_falls_to_its_floor_in_updates():
    cfg = DQNConfig(**{**SMALL, "eps_decay": 100.0})
    np.testing.assert_allclose([float(epsilon(cfg, jnp.float32(u))) for u in (0, 50, 100, 1000)],
                               [1.0, 0.525, 0.05, 0.05], rtol=1e-6)


def test_a_dueling_tower_folds_into_the_plain_tower_agents_play():
    algo = _stream(dueling=True)
    params = algo.fresh_params(jax.random.key(0))
    params = jax.tree.map(lambda x: x + 0.1 * jax.random.normal(jax.random.key(1), x.shape), params)
    obs = jax.vmap(TTT.observe)(jax.vmap(TTT.init)(jax.random.split(jax.random.key(2), 5)))
    dueling_logits, value = algo.net.apply({"params": params}, obs)
    plain = towers.Tower(blocks=1, channels=16, num_actions=TTT.num_actions, encoding=towers.encoding_for(TTT))
    plain_logits, plain_value = plain.apply({"params": towers.fold_dueling(params)}, obs)
    np.testing.assert_allclose(plain_logits, dueling_logits, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(plain_value, value)
    # without the dueling head the tower's outputs are its plain outputs
    plain_params = {k: v for k, v in params.items() if k != towers.DUELING}
    assert towers.fold_dueling(plain_params) is plain_params


@pytest.mark.slow  # a minute of training; the chunk's bookkeeping above stays in the default run
def test_stream_dqn_learns_tic_tac_toe():
    """Self-play Double DQN: the greedy policy beats a uniformly random player clearly after a few
    hundred updates (a random policy scores 0.5; measured: 0.82-0.89 from 400 to 1,600 updates)."""
    algo = _stream()
    state = algo.init(jax.random.key(1), algo.fresh_params(jax.random.key(0)))
    first, m = algo.chunk(state)
    # 50 iterations of 32 x 4 plies: learning starts once 500 transitions are in (iteration 4)
    assert int(first.buffer.size) == 50 * 128 and int(first.updates) == (50 - 3) * 4
    state, _ = algo.chunk(first)
    result = evaluation.match(algo.agent_of(state.params, "dqn"), agents.load("random").replace(game=TTT),
                              jax.random.key(2), game=TTT)
    assert result.win_rate >= 0.7, result.win_rate


def test_every_game_takes_the_same_flags_with_its_own_defaults(capsys):
    ck = training.parse("dqn", ["--game", "checkers", "--eps-start", "0.9", "--eval-every", "12"])
    assert ck.dqn.collect == "streams" and ck.dqn.double and ck.dqn.eps_start == 0.9 and ck.dqn.iterations_per_eval == 3
    assert ck.run.out == "runs/checkers/dqn" and ck.run.total_updates == 100_000 and ck.dqn.buffer_size == 100_000
    du = training.parse("dueling_dqn", ["--game", "checkers"])
    assert du.dqn.dueling and du.run.out == "runs/checkers/dueling_dqn"
    assert training.parse("dqn", []).dqn == training.defaults("dqn", "connect_four").dqn  # Connect Four: the published preset
    with pytest.raises(SystemExit) as e:
        training.parse("dqn", ["--game", "checkers", "--preset", "published"])
    assert e.value.code == 2
    assert "error: --preset published: the thesis' presets" in capsys.readouterr().err


# slow: test_third_game's dqn run trains, saves a greedy agent and resumes through the same stream
# collection on another game, and test_onpolicy's Checkers PPO script run steps Checkers through the same
# per-ply streams (c4jax.learning.streams)
@pytest.mark.slow
@pytest.mark.parametrize("script", ["dqn.py", "dueling_dqn.py"])
def test_dqn_script_trains_checkers_and_saves_a_greedy_agent(tmp_path, script):
    out = tmp_path / "ck"
    args = ("--game", "checkers", "--out", out, "--envs", "4", "--steps", "2", "--batch-size", "8",
            "--buffer-size", "64", "--learning-starts", "8", "--updates-per-iteration", "1", "--eval-every",
            "4", "--eval-opponents", "--select-by", "random", "--tower-blocks", "1", "--tower-channels", "4",
            "--no-progress")
    done = run_script(script, *args, "--total-updates", "4")
    assert done.returncode == 0, done.stderr[-2000:]
    agent = agents.load(str(out))
    assert agents.game_of(agent) == "checkers" and not agent.stochastic and agent.num_simulations == 0
    resumed = run_script(script, *args, "--total-updates", "8", "--resume")
    assert resumed.returncode == 0 and "resumed" in resumed.stdout, resumed.stderr[-2000:]


def test_a_smoke_run_takes_the_sizes_of_its_collection():
    streams = training.parse("dqn", ["--game", "checkers", "--preset", "smoke"])
    games_ = training.parse("dqn", ["--preset", "smoke"])
    assert streams.dqn.collect == "streams" and games_.dqn.collect == "games"
    assert streams.dqn.buffer_size == DQNConfig.STREAM_SMOKE["buffer_size"] and streams.run.total_updates == 4
    assert games_.dqn.buffer_size == DQNConfig.SMOKE["buffer_size"]
