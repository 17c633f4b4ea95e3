"""On-policy building blocks: the whole-games collection with mirrors, the PPO buffer, PPO and
REINFORCE updates with a frozen conv block, and the supervised -> two-head transfer; whole games of a
game without random starts, mirror or shaped reward; and the per-ply streams of any game (--collect
streams): PPO's minibatch loss against a plain NumPy one, a chunk's bookkeeping, reproducibility, learning
tic-tac-toe, REINFORCE's update, and experiments/ppo.py --game checkers end to end."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from c4jax.cli import training
from scripts import run_script

from c4jax import agents, evaluation, games
from c4jax.learning import config, losses
from c4jax.learning.ppo import PPO, PPOConfig
from c4jax.learning.reinforce import Reinforce, ReinforceConfig
from c4jax.nets import cnet
from c4jax.nets.cnet import CNet
from c4jax.learning import onpolicy_games
from c4jax.learning.onpolicy_streams import StreamCollection
from c4jax.learning.optim import make_optimizer

import turn_based

GAMES = 6
ROWS = 2 * GAMES * 42
C4 = games.make(games.DEFAULT)


def collect(algo, params, start_key=jax.random.key(1), play_key=jax.random.key(2), gae_lambda=1.0):
    """The samples [G, R] of one collection of ``algo`` from ``params`` (jitted)."""
    state = algo.init(jax.random.key(0), params)
    return jax.jit(lambda s: algo.collection.collect(s, (start_key, play_key)[2 - algo.collection.keys:],
                                                     gae_lambda)[1])(state)


def started(algo):
    """``algo``'s training state from fresh parameters (keys 1 and 0), jitted: one compile, where the eager
    calls compile every operation of the network's init and the optimiser's."""
    return jax.jit(lambda: algo.init(jax.random.key(1), algo.fresh_params(jax.random.key(0))))()


def flat(samples):
    return jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), samples)


init_params = jax.jit(cnet.init_params, static_argnames=("width", "heads"))


@pytest.fixture(scope="module")
def params():
    return init_params(jax.random.key(0), heads="two")


@pytest.fixture(scope="module")
def batch(params):
    return jax.device_get(flat(collect(PPO(PPOConfig(games_per_collect=GAMES), C4), params)))


def _np_log_softmax_masked(logits, legal):
    z = np.where(legal, logits, -np.inf).astype(np.float64)
    return z - (np.log(np.exp(z - z.max(-1, keepdims=True)).sum(-1, keepdims=True)) + z.max(-1, keepdims=True))


def _bits(tree):
    return [np.asarray(x).view(np.uint32) for x in jax.tree.leaves(tree)]


def _same_bits(a, b):
    return all(np.array_equal(x, y) for x, y in zip(_bits(a), _bits(b)))


def test_batch_shapes_and_layout(batch):
    assert batch.obs.shape == (ROWS, 6, 7) and batch.obs.dtype == np.int8 and batch.legal.shape == (ROWS, 7)
    for name in ("action", "reward", "target", "logp", "value", "advantage", "done", "valid"):
        assert getattr(batch, name).shape == (ROWS,), name
    ep = jax.tree.map(lambda x: x.reshape((GAMES, 2, 42) + x.shape[1:]), batch)
    lengths = ep.valid[:, 0].sum(-1)
    assert (lengths >= 1).all()
    np.testing.assert_array_equal(ep.valid[:, 0], np.arange(42)[None] < lengths[:, None])  # a prefix
    np.testing.assert_array_equal(ep.done[:, 0].argmax(-1), lengths - 1)  # the last valid move ends the game
    # Sampled moves are legal on their boards.
    b, a = ep.obs[:, 0][ep.valid[:, 0]], ep.action[:, 0][ep.valid[:, 0]]
    assert (b[np.arange(len(a)), 0, a] == 0).all()
    np.testing.assert_array_equal(batch.legal, batch.obs[:, 0, :] == 0)


def test_mirrored_rows_are_mirrors(batch):
    ep = jax.tree.map(lambda x: x.reshape((GAMES, 2, 42) + x.shape[1:]), batch)
    orig, mir = jax.tree.map(lambda x: x[:, 0], ep), jax.tree.map(lambda x: x[:, 1], ep)
    v = orig.valid
    np.testing.assert_array_equal(mir.valid, v)
    np.testing.assert_array_equal(mir.obs[v], orig.obs[v][..., ::-1])
    np.testing.assert_array_equal(mir.action[v], 6 - orig.action[v])
    for name in ("reward", "target", "done"):
        np.testing.assert_array_equal(getattr(mir, name), getattr(orig, name), err_msg=name)


def test_log_probs_and_values_recomputed_directly(params, batch):
    """logp (originals and mirrors) = log pi of the recorded action on the recorded board."""
    v = batch.valid
    boards, actions = batch.obs[v], batch.action[v]
    logits, values = CNet(heads="two").apply({"params": params}, jnp.asarray(boards))
    logp = _np_log_softmax_masked(np.asarray(logits), boards[:, 0, :] == 0)[np.arange(len(actions)), actions]
    np.testing.assert_allclose(batch.logp[v], logp, atol=1e-4)
    np.testing.assert_allclose(batch.value[v], values, atol=1e-5)
    # A mirrored row's log-prob is the mirrored action on the mirrored board, not a copy of the
    # original's (an untrained network is not mirror-symmetric).
    ep = jax.tree.map(lambda x: x.reshape((GAMES, 2, 42) + x.shape[1:]), batch)
    w = ep.valid[:, 0]
    assert not np.allclose(ep.logp[:, 1][w], ep.logp[:, 0][w])


def test_returns_advantages_and_backprop_rewards(batch):
    ep = jax.tree.map(lambda x: x.reshape((GAMES * 2, 42) + x.shape[1:]), batch)
    g = jax.vmap(turn_based.turn_based_returns, in_axes=(0, 0, None))(ep.reward, ep.valid, 0.95)
    np.testing.assert_allclose(ep.target, g, rtol=1e-6, atol=1e-6)
    # Default lambda 1: the thesis advantage G - V_old.
    np.testing.assert_allclose(ep.advantage, np.where(ep.valid, ep.target - ep.value, 0.0), atol=1e-4)
    # design.md §2: the last move's reward is +1 for a win (back-propagated rewards keep it); padding is 0.
    assert (ep.reward[~ep.valid] == 0).all() and (ep.target[~ep.valid] == 0).all()


def test_take_first_keeps_order_and_exactly_n(batch):
    n = 50
    buf = jax.device_get(onpolicy_games.take_first(batch, n))
    assert buf.valid.shape == (n,) and buf.valid.all()
    idx = np.flatnonzero(batch.valid)[:n]
    np.testing.assert_array_equal(buf.obs, batch.obs[idx])
    np.testing.assert_array_equal(buf.action, batch.action[idx])
    np.testing.assert_array_equal(buf.logp, batch.logp[idx])
    # More rows asked than available (even than the batch has): the rest is marked invalid.
    count = int(batch.valid.sum())
    big = jax.device_get(onpolicy_games.take_first(batch, ROWS + 10))
    assert big.valid.shape == (ROWS + 10,) and big.valid.sum() == count
    assert big.valid[:count].all() and not big.valid[count:].any()
    np.testing.assert_array_equal(big.action[:count], batch.action[batch.valid])


def test_make_optimizer_freezes_conv(params):
    tx = make_optimizer(1e-2, 1e-1)
    grads = jax.tree.map(jnp.ones_like, params)
    updates, _ = jax.jit(tx.update)(grads, tx.init(params), params)
    assert all((np.asarray(u) == 0).all() for u in jax.tree.leaves(updates["conv"]))
    assert all((np.asarray(u) != 0).any() for u in jax.tree.leaves(updates["dense"]))


@pytest.fixture(scope="module")
def ppo_result(params, batch):
    algo = PPO(PPOConfig(epochs=2, minibatch_size=16, learning_rate=1e-3), C4)
    buf = onpolicy_games.take_first(batch, 40)
    return algo, buf, jax.jit(algo.update)(params, algo.tx.init(params), buf, jax.random.key(3))


def test_ppo_update_frozen_conv(params, ppo_result):
    _, buf, (new, _, metrics, updates) = ppo_result
    assert _same_bits(params["conv"], new["conv"])
    for name in ("dense", "head", "value"):
        assert not _same_bits(params[name], new[name]), name
    for k, v in metrics.items():
        assert np.isfinite(v).all(), k
    assert int(buf.valid.sum()) == 40 and int(updates) == 2 * 3  # ceil(40 / 16) minibatches per epoch
    assert 0.0 <= float(metrics["train/clip_fraction"]) <= 1.0 and float(metrics["train/entropy"]) > 0


def test_ppo_update_skips_empty_minibatches(params, ppo_result):
    algo, buf, _ = ppo_result
    opt_state = algo.tx.init(params)
    empty = buf.replace(valid=jnp.zeros_like(buf.valid))
    new, new_opt, _, updates = jax.jit(algo.update)(params, opt_state, empty, jax.random.key(4))
    assert _same_bits(params, new) and _same_bits(opt_state, new_opt)
    assert int(updates) == 0


def test_reinforce_update_frozen_conv(params, batch):
    algo = Reinforce(ReinforceConfig(learning_rate=1e-3), C4)
    opt_state = algo.tx.init(params)
    episodes = jax.tree.map(lambda x: x.reshape((GAMES, 84) + x.shape[1:]), batch)
    update = jax.jit(algo.update)
    new, _, metrics = update(params, opt_state, jax.tree.map(lambda x: x[:1], episodes))
    assert _same_bits(params["conv"], new["conv"])
    for name in ("dense", "head", "value"):
        assert not _same_bits(params[name], new[name]), name
    assert all(np.isfinite(v) for v in metrics.values())

    # K episodes in sequence: one update on them equals K single steps.
    p_scan, _, m_scan = update(params, opt_state, episodes)
    assert np.isfinite(m_scan["train/loss"])
    p, o = params, opt_state
    for k in range(GAMES):
        p, o, _ = update(p, o, jax.tree.map(lambda x: x[k:k + 1], episodes))
    assert _same_bits(p_scan["conv"], params["conv"])
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, atol=1e-6), p_scan, p)


# --------------------------------------------------------------------------- whole games of any game

TTT = games.from_pgx("tic_tac_toe")
CHECKERS = games.make("checkers")


@pytest.mark.parametrize("game", [TTT, CHECKERS], ids=["tic_tac_toe", "checkers"])
def test_whole_games_of_a_game_without_random_starts_mirror_or_shaped_reward(game):
    """The whole-games collection plays from the game's own start, without mirrors, on the game's rewards,
    back-propagated; the legal actions are the recorded ones; the returns follow who moves next."""
    algo = PPO(PPOConfig(network="tower", games_per_collect=3, tower_blocks=1, tower_channels=4, gamma=0.9), game)
    s = jax.device_get(collect(algo, jax.jit(algo.fresh_params)(jax.random.key(0))))
    t = game.max_steps
    assert s.valid.shape == (3, t) and s.obs.shape == (3, t) + tuple(game.observation_shape)
    v = s.valid
    assert v.any(axis=1).all() and (s.legal[v][np.arange(v.sum()), s.action[v]]).all()  # the moves were legal
    assert (s.done.sum(axis=1) <= 1).all() and np.isfinite(s.logp[v]).all() and (s.logp[v] <= 0).all()
    ended = v & s.done
    assert (np.abs(s.reward[ended]) <= 1).all() and (s.reward[~v] == 0).all()
    np.testing.assert_allclose(s.advantage[v], (s.target - s.value)[v], atol=1e-5)  # lambda 1: G - V


def test_whole_games_returns_keep_the_sign_of_a_player_moving_again():
    """A Checkers multi-jump: the same player moves next, so its next return adds (negamax), and the
    back-propagated rewards count the player's own moves."""
    from c4jax.agents.arena import Trajectory
    from c4jax.learning import backprop

    by_a = jnp.array([[True, False, False, True, False]])
    valid = jnp.array([[True, True, True, True, False]])
    rewards = jnp.array([[0.0, 0.0, 0.0, 1.0, 0.0]])
    traj = Trajectory(observations=jnp.zeros((1, 5, 1)), actions=jnp.zeros((1, 5), jnp.int32), rewards=rewards,
                      done=jnp.array([[False, False, False, True, False]]), valid=valid, by_a=by_a, final=None,
                      outcome_a=jnp.array([1.0]))
    r = np.asarray(backprop.backprop_per_player(traj, 1.0))[0]
    np.testing.assert_allclose(r, [0.5, -0.5, -1.0, 1.0, 0.0])  # A: moves 1, 2 of 2; B: moves 1, 2 of 2
    sign = onpolicy_games.next_sign(traj)[0]
    np.testing.assert_array_equal(np.asarray(sign), [-1.0, 1.0, -1.0, -1.0, -1.0])
    g = losses.negamax_gae(jnp.asarray(r), jnp.zeros(5), sign, False, 1.0, 1.0, valid=valid[0])
    # G_3 = 1, G_2 = -1 - G_3, G_1 = -0.5 + G_2 (B moves again), G_0 = 0.5 - G_1
    np.testing.assert_allclose(np.asarray(g), [3.0, -2.5, -2.0, 1.0, 0.0], atol=1e-6)


# --------------------------------------------------------------------------- per-ply streams (--collect streams)


STREAMS = dict(collect="streams", network="tower", gamma=1.0, gae_lambda=0.95, weight_decay=0.0, max_grad_norm=0.5,
               learning_rate=3e-4, c1=0.5, c2=0.01)


def test_streams_config_is_checked():
    with pytest.raises(ValueError, match="--minibatch-size .* must divide"):
        config.validate(PPOConfig(**STREAMS, envs=4, steps=3, minibatch_size=8))
    with pytest.raises(ValueError, match="--gae-lambda must be in"):
        config.validate(PPOConfig(**{**STREAMS, "gae_lambda": 1.5}))
    with pytest.raises(ValueError, match="--td-advantage, --explore: the whole-games collection's"):
        config.validate(PPOConfig(**STREAMS, minibatch_size=512, td_advantage=True, explore=0.1))
    with pytest.raises(ValueError, match="--replace-draws: the whole-games collection's"):
        config.validate(ReinforceConfig(collect="streams", network="tower", replace_draws=True))
    with pytest.raises(ValueError, match="--network cnet: the CNET does not read"):
        PPO(PPOConfig(), TTT)
    with pytest.raises(ValueError, match="--network cnet: the CNET does not read"):
        Reinforce(ReinforceConfig(collect="streams"), TTT)
    with pytest.raises(ValueError, match="the published code.s switches .* which pgx:tic_tac_toe with --network tower"):
        PPO(PPOConfig(network="tower", explore=0.1), TTT)


def _algo(**kw) -> PPO:
    cfg = dict(envs=16, steps=8, minibatch_size=32, epochs=2, buffers_per_eval=2, tower_blocks=1, tower_channels=8)
    return PPO(PPOConfig(**{**STREAMS, **cfg, **kw}), TTT)


def test_a_run_saves_the_raw_network_whose_searches_back_up_proven_values():
    assert _algo().agent_meta == {"search": {"simulations": 0, "solve": True}}


def test_the_minibatch_loss_is_ppo_on_normalised_advantages_with_the_squared_value_error():
    """``losses.ppo_loss`` vmapped over collected rows equals the same PPO written out in NumPy:
    advantages normalised over the minibatch, squared value error, entropy over the legal actions."""
    algo = _algo(envs=4, steps=6, minibatch_size=24, clip=0.1, c1=0.7, c2=0.05)
    # jitted: one compile each, where eager calls compile every operation
    params = jax.jit(algo.fresh_params)(jax.random.key(0))
    state = jax.jit(algo.init)(jax.random.key(1), params)
    mb = jax.tree.map(lambda x: x[0], jax.jit(lambda s: algo.collection.collect(s, (jax.random.key(2),))[1])(state))
    adv = jax.random.normal(jax.random.key(3), (24,))
    target = jnp.tanh(jax.random.normal(jax.random.key(4), (24,)))
    # the stored log-probabilities, moved a little: ratios on both sides of the clip
    mb = mb.replace(logp=mb.logp + 0.2 * jax.random.normal(jax.random.key(5), (24,)), advantage=adv, target=target)
    loss, m = jax.jit(algo.loss)(params, mb, None)

    logits, _, value = (np.asarray(x, np.float64) for x in jax.jit(algo.collection.forward)(params, mb.obs, mb.legal))
    legal = np.asarray(mb.legal)
    z = np.where(legal, logits, -np.inf)
    log_p = z - z.max(-1, keepdims=True)
    log_p = log_p - np.log(np.exp(log_p).sum(-1, keepdims=True))
    logp = log_p[np.arange(24), np.asarray(mb.action)]
    ratio = np.exp(logp - np.asarray(mb.logp))
    a = np.asarray(adv, np.float64)
    norm = (a - a.mean()) / (a.std() + 1e-8)
    policy = -np.minimum(ratio * norm, np.clip(ratio, 0.9, 1.1) * norm).mean()
    value_loss = ((value - np.asarray(target)) ** 2).mean()
    entropy = -np.where(legal, np.exp(log_p) * np.where(legal, log_p, 0.0), 0.0).sum(-1).mean()
    assert 0 < float(m["train/clip_fraction"]) < 1
    np.testing.assert_allclose(float(m["train/policy_loss"]), policy, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(float(m["train/value_loss"]), value_loss, rtol=1e-5)
    np.testing.assert_allclose(float(m["train/entropy"]), entropy, rtol=1e-5)
    np.testing.assert_allclose(float(m["train/approx_kl"]), np.mean(np.asarray(mb.logp) - logp), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(float(m["train/clip_fraction"]), np.mean(np.abs(ratio - 1) > 0.1))
    np.testing.assert_allclose(float(loss), policy + 0.7 * value_loss - 0.05 * entropy, rtol=1e-4, atol=1e-6)
    assert float(m["train/loss"]) == float(loss)


def test_a_chunk_counts_updates_and_games_and_repeats_exactly():
    algo = _algo()
    state = started(algo)
    a, ma = algo.chunk(state)
    b, mb = algo.chunk(state)
    assert int(a.updates) == 2 * 2 * (16 * 8 // 32)  # collects x epochs x minibatches
    # 2 collections of 16 x 8 plies of tic-tac-toe (5..9 plies a game) finish at least 16 games
    assert int(a.episodes) >= 16 and 5 <= float(ma["selfplay/length"]) <= 9
    for x, y in zip(jax.tree.leaves(a.params), jax.tree.leaves(b.params)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    assert {k: float(v) for k, v in ma.items()} == {k: float(v) for k, v in mb.items()}
    assert not np.allclose(np.asarray(jax.tree.leaves(a.params)[0]), np.asarray(jax.tree.leaves(state.params)[0]))


def test_ppo_learns_tic_tac_toe():
    """120 updates of self-play: the greedy policy does better against a uniformly random player,
    over the protocol's 50 openings in both seats and four match keys, than the same network
    untrained (measured: 0.621 untrained, 0.684 after 120 updates; per key 0.58-0.69 and 0.645-0.72)."""
    algo = _algo(envs=64, steps=16, minibatch_size=256, epochs=4, buffers_per_eval=10, tower_blocks=1,
                 tower_channels=16, learning_rate=1e-3)
    state = algo.init(jax.random.key(1), algo.fresh_params(jax.random.key(0)))
    rnd = agents.load("random").replace(game=TTT)

    def score(params) -> float:
        agent = algo.agent_of(params, "ppo", sampled=False)
        return float(np.mean([evaluation.match(agent, rnd, jax.random.key(k), game=TTT).win_rate for k in range(2, 6)]))

    untrained = score(state.params)
    state, _ = algo.chunk(state)
    trained = score(state.params)
    assert trained >= untrained + 0.04, (untrained, trained)


def test_streams_reinforce_makes_one_update_per_collection_on_the_negamax_returns():
    """REINFORCE on streams: one gradient step per collection, its advantages G - V(s) with G the return of
    GAE(lambda = 1); a chunk repeats exactly."""
    cfg = ReinforceConfig(collect="streams", network="tower", gamma=1.0, envs=8, steps=6, episodes_per_eval=3,
                          tower_blocks=1, tower_channels=8, learning_rate=1e-3)
    algo = Reinforce(cfg, TTT)
    assert isinstance(algo.collection, StreamCollection) and algo.update_step == 1 and algo.eval_updates == 3
    state = started(algo)
    # jitted: one compile each, where eager calls compile every operation (and the plies' scan) anew
    rows, last_value = jax.jit(algo.collection.play)(state.params, state.envs, state.plies, jax.random.key(2))[:2]
    samples = jax.jit(lambda s: algo.collection.collect(s, (jax.random.key(2),), 1.0)[1])(state)
    adv, returns = (x.reshape(rows.value.shape) for x in (samples.advantage, samples.target))
    np.testing.assert_allclose(np.asarray(returns - rows.value), np.asarray(adv), atol=1e-6)
    # a column's last return is its reward plus the sign-flipped bootstrap value unless the game ended there
    last = np.asarray(rows.reward[-1] + np.where(rows.done[-1], 0.0, rows.sign[-1] * last_value))
    np.testing.assert_allclose(np.asarray(returns[-1]), last, atol=1e-6)
    a, ma = algo.chunk(state)
    b, mb = algo.chunk(state)
    assert int(a.updates) == 3 and int(a.episodes) >= 1
    assert {k: float(v) for k, v in ma.items()} == {k: float(v) for k, v in mb.items()}
    assert {"train/loss", "train/advantage", "selfplay/length", "selfplay/episodes"} <= set(ma)


@pytest.mark.slow
def test_ppo_script_trains_checkers_and_saves_an_agent_that_searches(tmp_path, monkeypatch):
    out = tmp_path / "ck"
    args = ("--game", "checkers", "--out", out, "--envs", "4", "--steps", "8", "--minibatch-size", "16",
            "--epochs", "1", "--eval-every", "2", "--total-updates", "2", "--eval-opponents",
            "--select-by", "random", "--tower-blocks", "1", "--tower-channels", "4", "--no-progress")
    done = run_script("ppo.py", *args)  # one collection of 32 plies: 2 updates, one evaluation
    assert done.returncode == 0, done.stderr[-2000:]
    agent = agents.load(str(out))
    assert agents.game_of(agent) == "checkers" and agent.stochastic and agent.num_simulations == 0
    assert agents.load(f"{out}@4:det").num_simulations == 4
    monkeypatch.setenv("C4JAX_CHECKPOINTS", str(tmp_path / "shipped"))
    bad = run_script("ship_checkpoint.py", out, "ppo")
    assert bad.returncode != 0 and "ship it as checkers/<name>" in bad.stderr
    assert run_script("ship_checkpoint.py", out, "checkers/ppo").returncode == 0
    assert (tmp_path / "shipped" / "checkers" / "ppo" / "metrics.jsonl").is_file()
    assert agents.load("checkers/ppo").game is games.make("checkers") and "checkers/ppo" in agents.known_names("checkers")
    refused = run_script("dueling_dqn.py", "--game", "checkers", "--preset", "thesis", "--out", tmp_path / "dd")
    assert refused.returncode == 2 and "--preset thesis" in refused.stderr and "Traceback" not in refused.stderr


# slow: test_ppo_script_trains_checkers_and_saves_an_agent_that_searches runs the same on-policy
# trainer and stream collection on Checkers, and test_third_game's reinforce run trains, saves a
# sampling REINFORCE agent and resumes on another game
@pytest.mark.slow
def test_reinforce_script_trains_checkers(tmp_path):
    out = tmp_path / "ck"
    done = run_script("reinforce.py", "--game", "checkers", "--out", out, "--envs", "4", "--steps", "8", "--eval-every",
                      "1", "--total-updates", "2", "--eval-opponents", "--select-by", "random", "--tower-blocks", "1",
                      "--tower-channels", "4", "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    agent = agents.load(str(out))
    assert agents.game_of(agent) == "checkers" and agent.stochastic and agent.num_simulations == 0


@pytest.mark.parametrize("cli_name", ["ppo", "reinforce"])
def test_another_game_takes_the_smoke_preset_and_refuses_connect_four_s_in_one_line(cli_name, capsys):
    smoke = training.parse(cli_name, ["--game", "checkers", "--preset", "smoke"])
    section = getattr(smoke, cli_name)
    assert section.streams and section.tower == (1, 4) and smoke.run.total_updates == 2
    assert training.defaults(cli_name, "checkers").run.out == f"runs/checkers/{cli_name}"
    for argv, message in [(["--preset", "published"], "--preset published: the thesis' presets"),
                          (["--collect", "games", "--network", "cnet", "--games-per-collect", "10"],
                           "--network cnet: the CNET does not read checkers"),
                          (["--explore", "0.1"] if cli_name == "ppo" else ["--replace-draws"],
                           "the whole-games collection's")]:
        with pytest.raises(SystemExit) as e:
            training.main(cli_name, training.parse(cli_name, ["--game", "checkers", *argv]))
        err = capsys.readouterr().err
        assert e.value.code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_streams_on_connect_four_train_the_cnet_that_init_from_starts():
    """--collect streams with --network cnet on a game whose kit reads CNET boards: the loop makes the CNET
    (--init-from applies) and the evaluations play it as a CNET agent."""
    from c4jax.agents.network import NetworkAgent

    algo = Reinforce(ReinforceConfig(collect="streams", width=8), C4)
    assert algo.fresh_params(jax.random.key(0)) is None and algo.is_cnet and algo.tower == ()
    params = init_params(jax.random.key(0), width=8, heads="two")
    assert isinstance(algo.agent_of(params, "reinforce", sampled=True, width=8), NetworkAgent)
    assert int(algo.init(jax.random.key(1), params).envs.legal_action_mask.shape[-1]) == 7
