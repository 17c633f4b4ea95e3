"""AlphaZero (c4jax.agents.network_search, c4jax.learning.alphazero, experiments/alphazero.py).

Hand-made boards (an immediate win, a block), the environment model's rewards, discounts and
values, self-play targets (outcomes for the player to move, mirrors), the loss, the agent's
names and modes, config errors, and a tiny end-to-end run that resumes exactly.
"""

from __future__ import annotations

import dataclasses
import functools
import json

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from c4jax import agents, games
from c4jax.agents import network_search as az
from c4jax.agents import search
from c4jax.agents.network import agent_from_checkpoint
from c4jax.cli import training
from c4jax.games.connect_four import env
from c4jax.games.connect_four.game import GAME as C4
from c4jax.games.connect_four.board import mirror_boards
from c4jax.io import checkpoint
from c4jax.learning import alphazero as azl
from c4jax.nets import cnet, tower
from c4jax.learning.config import validate
from scripts import ROOT, run_script


def parse(rows: list[str]) -> np.ndarray:
    """'x' = player to move (1), 'o' = opponent (-1), '.' = empty; row 0 on top."""
    return np.array([[{"x": 1, "o": -1, ".": 0}[ch] for ch in row] for row in rows], np.int8)


WIN = parse([".......", ".......", ".......", ".......", "oo.....", "xxx...o"])  # x wins at 3
BLOCK = parse([".......", ".......", ".......", ".......", "xx.....", "ooo...x"])  # x must play 3
PARAMS = cnet.init_params(jax.random.key(0), heads="two")
TINY = azl.AlphaZeroConfig(games=4, num_simulations=4, updates_per_iteration=2, iterations_per_eval=1,
                           buffer_size=400, batch_size=8, eval_simulations=4, width=8)


# The searches and losses below jitted once per module: tests of the same shapes and settings share
# one compiled program, and a jitted program is one compile where an eager call compiles each operation.
_search = jax.jit(functools.partial(az.search, game=C4), static_argnames=("num_simulations", "method", "gumbel_scale"))
_loss = jax.jit(functools.partial(azl.loss_fn, game=C4), static_argnames=("width", "value_weight", "policy_rows"))


_from_boards = jax.jit(jax.vmap(env.from_board))  # one compile a batch size; eager: one an operation


def states_of(*boards):
    return _from_boards(jnp.asarray(np.stack(boards)))


@pytest.mark.parametrize("method", az.METHODS)
@pytest.mark.parametrize("board", [WIN, BLOCK], ids=["win", "block"])
def test_search_takes_the_win_and_blocks_the_loss(board, method):
    # An untrained network: only the environment's exact terminal values can find column 3. PUCT's
    # min-completed Q-values explore unvisited columns slowly: it needs more simulations than Gumbel.
    sims = 64 if method == "gumbel" else 256
    out = _search(PARAMS, states_of(board), jax.random.key(1), num_simulations=sims, method=method, gumbel_scale=0.0)
    assert int(out.action[0]) == 3
    agent = az.AlphaZeroAgent(params=PARAMS, num_simulations=64, game=C4)
    assert int(agent.act(board[None], jax.random.key(2))[0]) == 3


def test_model_rewards_discounts_and_values():
    fn = jax.jit(search.recurrent_fn(az.evaluator(128, (), C4), C4))  # both calls below: one program
    states = states_of(WIN, WIN, BLOCK)
    keys = jax.random.key_data(jax.random.split(jax.random.key(0), 3))
    out, (nxt, _) = fn(PARAMS, jax.random.key(0), jnp.array([3, 4, 3]), (states, keys))
    # Winning move: reward +1 for the mover, terminal (discount 0, value 0).
    assert float(out.reward[0]) == 1.0 and float(out.discount[0]) == 0.0 and float(out.value[0]) == 0.0
    assert bool(nxt.done[0])
    # Ordinary moves: no reward, the next node is the opponent's (discount -1), value from the network.
    assert float(out.reward[1]) == 0.0 and float(out.discount[1]) == -1.0 and -1.0 <= float(out.value[1]) <= 1.0
    assert float(out.reward[2]) == 0.0 and float(out.discount[2]) == -1.0
    # Edges out of a finished node carry nothing.
    out2, _ = fn(PARAMS, jax.random.key(0), jnp.array([0, 0, 0]), (nxt, keys))
    assert float(out2.reward[0]) == 0.0 and float(out2.discount[0]) == 0.0


def test_the_winning_column_has_the_best_searched_value():
    # the program of test_search_takes_the_win_and_blocks_the_loss[win-gumbel], from another key
    out = _search(PARAMS, states_of(WIN), jax.random.key(0), num_simulations=64, method="gumbel", gumbel_scale=0.0)
    q = np.asarray(az.root_values(out))[0]
    assert q[3] == pytest.approx(1.0) and (q[[0, 1, 2, 4, 5, 6]] < 1.0).all()


def test_selfplay_targets_are_outcomes_for_the_player_to_move():
    samples, valid, final, returns = _selfplay(azl.AlphaZeroConfig(num_simulations=4, value_q_weight=0.0), key=3)
    chex.assert_shape(samples.board, (3, 42, 6, 7))
    chex.assert_shape(samples.policy, (3, 42, 7))
    valid, z, boards = np.asarray(valid), np.asarray(samples.value), np.asarray(samples.board)
    for g in range(3):
        n = int(final.num_moves[g])
        assert valid[g, :n].all() and not valid[g, n:].any()  # one row per move, in order
        winner = int(final.winner[g])  # +1 first player, -1 second, 0 draw
        np.testing.assert_array_equal(returns[g], [winner, -winner])  # each player's total reward
        for t in range(n):
            assert z[g, t] == (winner if t % 2 == 0 else -winner)
            assert (boards[g, t] != 0).sum() == t  # the position before move t
        pol = np.asarray(samples.policy[g, :n])
        np.testing.assert_allclose(pol.sum(-1), 1.0, atol=1e-5)
        assert (pol[boards[g, :n, 0, :] != 0] == 0).all()  # nothing on full columns


def test_mirrors_flip_boards_and_policies():
    # test_selfplay_targets_are_outcomes_for_the_player_to_move's program (3 games, 4 simulations), another key
    samples, valid, _, _ = _selfplay(azl.AlphaZeroConfig(num_simulations=4, value_q_weight=0.0), key=4)
    rows, row_valid = azl.with_symmetries(samples, valid, games.kit_of("connect_four").symmetries)
    n = 3 * 42
    chex.assert_shape(rows.board, (2 * n, 6, 7))
    np.testing.assert_array_equal(rows.board[n:], mirror_boards(rows.board[:n]))
    np.testing.assert_array_equal(rows.policy[n:], rows.policy[:n, ::-1])
    np.testing.assert_array_equal(rows.value[n:], rows.value[:n])
    np.testing.assert_array_equal(row_valid[n:], row_valid[:n])


def test_loss_is_lowest_at_the_targets_and_its_gradient_is_finite():
    boards = jnp.asarray(np.stack([WIN, BLOCK]))
    logits, value = az.evaluate(PARAMS, boards, 128, (), C4)
    own = azl.Sample(board=boards, policy=jax.nn.softmax(logits), value=value)
    other = own.replace(policy=jnp.eye(7)[jnp.array([0, 6])], value=-value)
    l_own, aux = _loss(PARAMS, own, width=128, value_weight=1.0)
    l_other, _ = _loss(PARAMS, other, width=128, value_weight=1.0)
    assert float(aux["train/value_loss"]) == pytest.approx(0.0, abs=1e-10) and float(l_own) < float(l_other)
    grads = jax.jit(jax.grad(lambda p: azl.loss_fn(p, other, width=128, game=C4, value_weight=1.0)[0]))(PARAMS)
    assert all(np.isfinite(np.asarray(g)).all() for g in jax.tree.leaves(grads))


def test_raw_policy_and_modes():
    board = WIN[None]
    raw = az.AlphaZeroAgent(params=PARAMS, num_simulations=0, game=C4)
    logits, _ = az.evaluate(PARAMS, jnp.asarray(board), 128, (), C4)
    assert int(raw.act(board, jax.random.key(0))[0]) == int(jnp.argmax(logits[0]))
    scores = np.asarray(raw.scores(board))[0]
    np.testing.assert_allclose(scores.sum(), 1.0, atol=1e-5)
    det = az.AlphaZeroAgent(params=PARAMS, num_simulations=16, game=C4)
    assert det.name == "alphazero@16:det" and not det.stochastic
    s1, s2 = det.scores(board), det.scores(board)
    np.testing.assert_array_equal(s1, s2)  # deterministic per board
    sto = az.AlphaZeroAgent(params=PARAMS, num_simulations=16, deterministic=False, game=C4)
    assert sto.stochastic and sto.name.endswith(":sto")
    with pytest.raises(ValueError, match="simulations"):
        az.AlphaZeroAgent(params=PARAMS, num_simulations=-1, game=C4)
    az.AlphaZeroAgent(params=PARAMS, num_simulations=search.MAX_SIMULATIONS, game=C4)  # the search's limit, as MCTS
    with pytest.raises(ValueError, match=f"0..{search.MAX_SIMULATIONS} simulations"):
        az.AlphaZeroAgent(params=PARAMS, num_simulations=search.MAX_SIMULATIONS + 1, game=C4)


@pytest.mark.slow
def test_solving_agent_proves_the_win_and_blocks_the_loss():
    """``solve``: PUCT with proven values. With an untrained network the win is proven once its
    edge is expanded: the move and all of the visit shares go to it, in either mode, from boards
    and from states alike. The block is found by the values (not proven: PUCT with a flat prior
    widens too slowly to refute each other column within 256 simulations)."""
    agent = az.AlphaZeroAgent(params=PARAMS, num_simulations=64, solve=True, game=C4)
    assert agent.name == "alphazero@64solve:det" and not agent.stochastic
    assert int(agent.act(WIN[None], jax.random.key(0))[0]) == 3
    assert int(agent.act_states(states_of(WIN), jax.random.key(0))[0]) == 3
    scores = np.asarray(agent.scores(WIN[None]))[0]
    assert scores[3] == 1.0 and (scores[[0, 1, 2, 4, 5, 6]] == 0.0).all()
    shares, values = agent.search_stats(WIN[None])
    np.testing.assert_array_equal(np.asarray(shares), scores[None])
    assert float(values[0, 3]) == 1.0 and (np.asarray(values)[0, [0, 1, 2, 4, 5, 6]] < 1.0).all()
    sto = agent.replace(deterministic=False)
    assert sto.name == "alphazero@64solve:sto"
    moves = sto.act(np.repeat(WIN[None], 8, axis=0), jax.random.key(1))
    assert np.asarray(moves).tolist() == [3] * 8  # sampling the shares of the proven move only
    block = agent.replace(num_simulations=256)
    assert int(block.act(BLOCK[None], jax.random.key(0))[0]) == 3
    assert int(np.argmax(np.asarray(block.scores(BLOCK[None]))[0])) == 3
    with pytest.raises(ValueError, match="solve"):
        az.AlphaZeroAgent(params=PARAMS, num_simulations=0, solve=True, game=C4)


@pytest.mark.parametrize("flags, message", [
    ({"method": "alphabeta"}, "--method"),
    ({"games": 0}, "--games"),
    ({"max_considered": 8}, "--max-considered"),
    ({"buffer_size": 10}, "--buffer-size"),
    ({"random_start_frac": 1.5}, "--random-start-frac"),
    ({"tower_blocks": -1}, "--tower-blocks"),
    ({"tower_blocks": 2, "tower_channels": 0}, "--tower-channels"),
])
def test_config_errors(flags, message):
    """Settings that no game accepts fail in the config, those that depend on the game (Connect Four
    here) when the trainer is built for it."""
    with pytest.raises(ValueError, match=message):
        azl.AlphaZero(azl.AlphaZeroConfig(**flags), game=C4)


def test_script_reports_a_bad_setting_in_one_line(tmp_path):
    proc = run_script("alphazero.py", "--max-considered", "8", "--out", tmp_path / "run")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == ["error: --max-considered must be in 1..7, got 8"]
    assert not (tmp_path / "run").exists()


TINY_FLAGS = ("--games", "4", "--num-simulations", "4", "--updates-per-iteration", "2", "--eval-every", "2",
              "--buffer-size", "400", "--batch-size", "8", "--eval-simulations", "4", "--play-simulations", "6", "--width", "8",
              "--eval-opponents", "random", "--select-by", "random", "--no-eval-yardstick",
              "--no-progress")


def _last_metrics(run) -> dict:
    """The metrics saved with a run's last checkpoint, without the wall-clock times."""
    metrics = json.loads((run / "last" / checkpoint.METADATA_FILE).read_text())["metrics"]
    return {k: v for k, v in metrics.items() if not k.startswith("time/")}


@pytest.mark.slow
def test_script_end_to_end_and_exact_resume(tmp_path):
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    proc = run_script("alphazero.py", "--out", straight, "--total-updates", "4", *TINY_FLAGS)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(line) for line in (straight / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [2, 4] and (straight / "curves_wall.png").is_file()
    for key in ("train/policy_loss", "train/value_loss", "selfplay/length", "eval/vs_random", "eval/best_vs_random"):
        assert key in rows[-1]
    agent = agents.load(str(straight))
    assert isinstance(agent, az.AlphaZeroAgent) and agent.num_simulations == 6 and agent.width == 8
    assert agents.load(f"{straight}@0:sto").num_simulations == 0
    # the same run, stopped after its first evaluation and resumed
    assert run_script("alphazero.py", "--out", resumed, "--total-updates", "2", *TINY_FLAGS).returncode == 0
    assert run_script("alphazero.py", "--out", resumed, "--total-updates", "4", "--resume", *TINY_FLAGS).returncode == 0
    assert _last_metrics(straight) == _last_metrics(resumed)


TOWER = (1, 8)


@pytest.mark.parametrize("board", [WIN, BLOCK], ids=["win", "block"])
def test_tower_search_takes_the_win_and_blocks_the_loss(board):
    # a tower with zeroed output layers (uniform prior, value 0): only the exact terminal values find column 3;
    # with a uniform prior Gumbel's first halving round visits each child only a few times: 256 simulations
    params = tower.init_params(jax.random.key(1), C4, tower=TOWER)
    params = {**params, **{k: jax.tree.map(jnp.zeros_like, params[k]) for k in ("policy", "value")}}
    agent = az.AlphaZeroAgent(params=params, tower=TOWER, num_simulations=256, game=C4)
    assert int(agent.act(board[None], jax.random.key(0))[0]) == 3


def test_tower_checkpoint_loads_as_a_search_agent_and_not_as_a_cnet(tmp_path):
    params = tower.init_params(jax.random.key(2), C4, tower=TOWER)
    meta = {"name": "towered", "algorithm": "alphazero", "game": C4.id, "network": {"width": 128, "heads": "two", "tower": list(TOWER)},
            "agent": {"output": "policy", "default_mode": "det", "symmetric": True, "search": {"simulations": 8}}}
    checkpoint.save(tmp_path / "ck", {"params": params}, meta)
    agent = agents.load(str(tmp_path / "ck"))
    assert isinstance(agent, az.AlphaZeroAgent) and agent.tower == TOWER and agent.num_simulations == 8
    chex.assert_trees_all_close(agent.params, params)
    assert int(agent.act(WIN[None], jax.random.key(0))[0]) == 3
    with pytest.raises(checkpoint.CheckpointError, match="residual tower"):
        agent_from_checkpoint(tmp_path / "ck")
    meta["network"]["tower"] = [1]
    checkpoint.save(tmp_path / "bad", {"params": params}, meta)
    with pytest.raises(checkpoint.CheckpointError, match="blocks, channels"):
        agents.load(str(tmp_path / "bad"))


def test_a_checkpoint_says_whether_its_search_proves_values(tmp_path):
    """``agent.search.solve`` in the metadata is the default of ``name`` and ``name@N``; ``@Nsolve`` and
    ``@Nnosolve`` override it, the raw policy has none, and every name loads its agent back."""
    meta = {"name": "proofs", "algorithm": "alphazero", "game": C4.id, "network": {"width": 128, "heads": "two"},
            "agent": {"output": "policy", "default_mode": "det", "symmetric": True,
                      "search": {"simulations": 8, "solve": True}}}
    checkpoint.save(tmp_path / "ck", {"params": PARAMS}, meta)
    ck = str(tmp_path / "ck")
    expected = {"": (8, True, "@8solve"), "@4": (4, True, "@4solve"), "@4nosolve": (4, False, "@4nosolve"),
                "@4solve": (4, True, "@4solve"), "@0": (0, False, "@policy")}
    for suffix, (sims, solve, shown) in expected.items():
        agent = agents.load(ck + suffix)
        assert (agent.num_simulations, agent.solve, agent.name) == (sims, solve, f"{ck}{shown}:det")
        if sims:
            again = agents.load(agent.name)
            assert (again.num_simulations, again.solve) == (sims, solve)
    meta["agent"]["search"] = {"simulations": 8}  # a checkpoint that says nothing: no proofs
    checkpoint.save(tmp_path / "plain", {"params": PARAMS}, meta)
    plain = str(tmp_path / "plain")
    assert [(a.solve, a.name) for a in map(agents.load, [plain, plain + "@4solve", plain + "@4nosolve"])] == [
        (False, f"{plain}@8:det"), (True, f"{plain}@4solve:det"), (False, f"{plain}@4:det")]
    meta["agent"]["search"] = {"simulations": 8, "solve": "yes"}
    checkpoint.save(tmp_path / "bad", {"params": PARAMS}, meta)
    with pytest.raises(checkpoint.CheckpointError, match="solve must be true or false"):
        agents.load(str(tmp_path / "bad"))


def test_the_shipped_agent_searches_with_proven_values_and_new_runs_save_theirs():
    assert (agents.load("alphazero").solve, agents.load("alphazero@0").solve) == (True, False)
    assert agents.load("alphazero@64nosolve").name == "alphazero@64nosolve:det"
    assert agents.load("checkers/alphazero").solve and agents.load("checkers/ppo@8").solve
    assert agents.load("checkers/alphazero@8nosolve").name == "checkers/alphazero@8nosolve:det"
    assert training.defaults("alphazero", "checkers").az.play_solve
    assert azl.AlphaZero(azl.AlphaZeroConfig(), game=C4).agent_meta == {"search": {"simulations": 256, "solve": True}}
    assert azl.AlphaZero(azl.AlphaZeroConfig(play_solve=False), game=C4).agent_meta["search"]["solve"] is False


def test_tower_config():
    cfg = azl.AlphaZeroConfig(tower_blocks=2, tower_channels=16)
    assert cfg.tower == (2, 16) and azl.AlphaZeroConfig().tower == ()
    algo = azl.AlphaZero(cfg, game=C4)
    assert algo.network_meta == {"tower": [2, 16]} and algo.agent_of(PARAMS, "x").tower == (2, 16)
    params = algo.fresh_params(jax.random.key(0))
    assert set(params) >= {"stem", "block0_a", "block1_b", "policy", "value"}
    assert azl.AlphaZero(azl.AlphaZeroConfig(), game=C4).fresh_params(jax.random.key(0)) is None
    with pytest.raises(ValueError, match="--freeze-conv"):
        azl.AlphaZero(cfg, freeze_conv=True, game=C4)


@pytest.mark.slow
def test_script_trains_a_tower_and_resumes_exactly(tmp_path):
    flags = (*TINY_FLAGS, "--tower-blocks", "1", "--tower-channels", "8")
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    assert run_script("alphazero.py", "--out", straight, "--total-updates", "4", *flags).returncode == 0
    agent = agents.load(str(straight))
    assert agent.tower == (1, 8) and agent.num_simulations == 6
    assert run_script("alphazero.py", "--out", resumed, "--total-updates", "2", *flags).returncode == 0
    assert run_script("alphazero.py", "--out", resumed, "--total-updates", "4", "--resume", *flags).returncode == 0
    assert _last_metrics(straight) == _last_metrics(resumed)


def test_script_rejects_bad_flags(tmp_path):
    proc = run_script("alphazero.py", "--out", tmp_path / "x", "--method", "minimax", "--no-progress")
    assert proc.returncode == 2
    proc = run_script("alphazero.py", "--out", tmp_path / "x", "--select-by", "3steplA", "--no-progress")
    assert proc.returncode != 0 and "--select-by" in proc.stderr
    proc = run_script("alphazero.py", "--out", tmp_path / "x", "--tower-blocks", "2", "--init-from",
                      ROOT / "checkpoints" / "supervised", "--no-progress")
    assert proc.returncode != 0 and "--init-from" in proc.stderr and not (tmp_path / "x" / "last").exists()


def _selfplay(cfg, key=5, games=3):
    return jax.jit(azl.selfplay, static_argnums=(3, 4))(PARAMS, jax.random.key(key),
                                                   jax.vmap(lambda _: env.init())(jnp.arange(games)), cfg, C4)


def test_playout_cap_trains_the_policy_only_on_full_searches():
    cfg = azl.AlphaZeroConfig(num_simulations=8, cheap_simulations=2, full_search_frac=0.5, value_q_weight=0.0)
    samples, valid, final, _ = _selfplay(cfg)
    valid, pol, z = np.asarray(valid), np.asarray(samples.policy), np.asarray(samples.value)
    sums = pol.sum(-1)[valid]
    full = np.isclose(sums, 1.0, atol=1e-5)
    assert (full | (sums == 0)).all()  # a policy target from a full search, or none
    assert full.any() and (~full).any()
    # one draw per ply: every game live at a ply has the same kind of search
    ply_full = np.isclose(pol.sum(-1), 1.0, atol=1e-5)
    for t in range(42):
        live = valid[:, t]
        assert len(set(ply_full[live, t])) <= 1
    assert set(np.unique(np.abs(z[valid]))) <= {0.0, 1.0}  # the value target is still the outcome
    # no policy target at all: the policy loss is 0, not NaN
    none, _, _, _ = _selfplay(dataclasses.replace(cfg, full_search_frac=0.0))
    assert not np.asarray(none.policy).any()
    rows = jax.tree.map(lambda x: x[0, :4], none)
    loss, aux = _loss(PARAMS, rows, width=128, value_weight=1.0, policy_rows=True)
    assert float(aux["train/policy_loss"]) == 0.0 and np.isfinite(float(loss))


def test_rows_without_a_policy_target_do_not_dilute_the_policy_loss():
    boards = jnp.asarray(np.stack([WIN, BLOCK]))
    target = jnp.eye(7)[jnp.array([3, 0])]
    both = azl.Sample(board=boards, policy=target.at[1].set(0.0), value=jnp.zeros(2))
    first = jax.tree.map(lambda x: x[:1], both)
    l_both = azl.loss_fn(PARAMS, both, width=128, game=C4, value_weight=0.0, policy_rows=True)[1]["train/policy_loss"]
    l_first = azl.loss_fn(PARAMS, first, width=128, game=C4, value_weight=0.0)[1]["train/policy_loss"]
    assert float(l_both) == pytest.approx(float(l_first), rel=1e-6)


def test_value_target_mixes_the_outcome_with_the_searched_root_value():
    cfg = azl.AlphaZeroConfig(num_simulations=4, value_q_weight=0.0)  # test_selfplay_targets_...'s program
    z_only, valid, _, _ = _selfplay(cfg)
    q_only, _, _, _ = _selfplay(dataclasses.replace(cfg, value_q_weight=1.0))  # same keys, same games
    half, _, _, _ = _selfplay(dataclasses.replace(cfg, value_q_weight=0.5))
    valid = np.asarray(valid)
    z, q, h = (np.asarray(s.value)[valid] for s in (z_only, q_only, half))
    np.testing.assert_array_equal(np.asarray(q_only.board), np.asarray(z_only.board))
    assert (np.abs(q) <= 1.0).all() and not np.array_equal(q, z)
    np.testing.assert_allclose(h, 0.5 * z + 0.5 * q, atol=1e-6)


@pytest.mark.parametrize("flag, value", [("full_search_frac", 1.5), ("value_q_weight", -0.1), ("cheap_simulations", 0),
                                         ("lr_decay_updates", -1), ("lr_final_frac", 1.5), ("reply_weight", -0.5)])
def test_lever_settings_out_of_range_are_refused(flag, value):
    with pytest.raises(ValueError, match=flag.replace("_", "-")):
        validate(azl.AlphaZeroConfig(**{flag: value}))


def test_learning_rate_schedule_decays_over_the_adam_steps_and_then_holds():
    assert azl.AlphaZeroConfig().learning_rate_schedule == 1e-3  # off by default: a constant
    sched = azl.AlphaZeroConfig(lr_decay_updates=100, lr_final_frac=0.1).learning_rate_schedule
    lrs = [float(sched(n)) for n in (0, 50, 100, 1000)]
    assert lrs[0] == pytest.approx(1e-3) and lrs[1] == pytest.approx(0.55e-3, rel=1e-5)
    assert lrs[2] == pytest.approx(1e-4) and lrs[3] == pytest.approx(1e-4)
    # the step count lives in the optimiser state: a decayed schedule's second Adam step moves the weights less
    p0 = cnet.init_params(jax.random.key(1), heads="two", width=8)

    def moved(cfg):
        algo = azl.AlphaZero(cfg, game=C4)
        state = algo.init(jax.random.key(2), p0)
        step = jax.jit(algo._update)
        first, _ = step(state, jax.random.key(3))
        after, _ = step(first, jax.random.key(4))
        after = jax.tree.map(lambda a, b: a - b, after.params, first.params)  # the second step's move
        return sum(float(jnp.abs(a).sum()) for a in jax.tree.leaves(after))

    fast = moved(dataclasses.replace(TINY, lr_decay_updates=1, lr_final_frac=1.0))  # a schedule that stays at 1e-3
    slow = moved(dataclasses.replace(TINY, lr_decay_updates=1, lr_final_frac=0.01))
    assert fast == pytest.approx(moved(TINY), rel=1e-5) and slow < 0.7 * fast


def test_ema_follows_every_adam_step_and_is_what_the_loop_plays():
    algo = azl.AlphaZero(dataclasses.replace(TINY, ema_decay=0.5), game=C4)
    p0 = cnet.init_params(jax.random.key(1), heads="two", width=8)
    state = algo.init(jax.random.key(2), p0)
    after, _ = jax.jit(algo._update)(state, jax.random.key(3))
    chex.assert_trees_all_close(after.ema, jax.tree.map(lambda a, b: 0.5 * a + 0.5 * b, p0, after.params), rtol=1e-6)
    assert algo.playing_params(after) is after.ema
    plain = azl.AlphaZero(TINY, game=C4)
    state = plain.init(jax.random.key(2), p0)
    assert state.ema is None and plain.playing_params(state) is state.params


@pytest.mark.slow
def test_ema_run_resumes_exactly_and_refuses_the_old_network_rule(tmp_path, capsys):
    flags = (*TINY_FLAGS, "--ema-decay", "0.9")
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    training.cli("alphazero", ["--out", str(straight), "--total-updates", "4", *flags])
    training.cli("alphazero", ["--out", str(resumed), "--total-updates", "2", *flags])
    training.cli("alphazero", ["--out", str(resumed), "--total-updates", "4", "--resume", *flags])
    assert _last_metrics(straight) == _last_metrics(resumed)
    assert isinstance(agents.load(str(straight)), az.AlphaZeroAgent)  # best/ holds a plain network
    with pytest.raises(SystemExit) as e:
        training.cli("alphazero", ["--out", str(tmp_path / "bad"), "--total-updates", "4", *flags, "--revert-drop", "0.1"])
    assert e.value.code == 2 and "--ema-decay needs the old-network rule off" in capsys.readouterr().err


def test_reply_target_is_the_next_ply_of_the_other_player():
    # three plies of three games (ply-major): alternating players; a second move by the same player
    # (a Checkers multi-jump) at ply 1; a game that ends after ply 1
    policy = jnp.asarray(np.random.default_rng(0).dirichlet(np.ones(4), (3, 3)), jnp.float32)  # [T, B, A]
    player = jnp.array([[0, 0, 0], [1, 0, 1], [0, 1, 0]])
    live = jnp.array([[True, True, True], [True, True, True], [True, True, False]])
    reply = np.asarray(azl.reply_targets(policy, live, player))
    np.testing.assert_array_equal(reply[0, 0], policy[1, 0])
    np.testing.assert_array_equal(reply[1, 0], policy[2, 0])
    np.testing.assert_array_equal(reply[0, 1], 0.0)  # the same player moves again
    np.testing.assert_array_equal(reply[1, 1], policy[2, 1])
    np.testing.assert_array_equal(reply[1, 2], 0.0)  # the game is over
    np.testing.assert_array_equal(reply[2], 0.0)  # the last ply


def test_selfplay_reply_targets_and_their_mirrors():
    cfg = dataclasses.replace(TINY, num_simulations=2, reply_weight=0.5)
    params = cnet.init_params(jax.random.key(1), width=8, heads="two")
    samples, valid, final, _ = jax.jit(azl.selfplay, static_argnums=(3, 4))(
        params, jax.random.key(3), jax.vmap(lambda _: env.init())(jnp.arange(2)), cfg, C4)
    assert isinstance(samples, azl.ReplySample)
    pol, reply = np.asarray(samples.policy), np.asarray(samples.reply)
    for g in range(2):
        n = int(final.num_moves[g])
        np.testing.assert_array_equal(reply[g, :n - 1], pol[g, 1:n])  # Connect Four alternates
        assert not reply[g, n - 1:].any()
    rows, _ = azl.with_symmetries(samples, valid, games.kit_of("connect_four").symmetries)
    half = rows.reply.shape[0] // 2
    np.testing.assert_array_equal(rows.reply[half:], rows.reply[:half, ::-1])


def test_reply_loss_is_the_mean_over_rows_with_a_target():
    boards = jnp.asarray(np.stack([WIN, BLOCK]))
    params = tower.init_params(jax.random.key(4), C4, width=8, reply_head=True)
    target = jnp.eye(7)[jnp.array([3, 0])]
    both = azl.ReplySample(board=boards, policy=target, value=jnp.zeros(2), reply=target.at[1].set(0.0))
    first = jax.tree.map(lambda x: x[:1], both)
    loss_of = jax.jit(lambda p, batch, w: azl.loss_fn(p, batch, width=8, game=C4, value_weight=1.0, reply_weight=w),
                      static_argnums=2)
    loss, aux = loss_of(params, both, 0.5)
    plain, _ = loss_of(tower.without_reply_head(params), both, 0.0)
    assert float(aux["train/reply_loss"]) == pytest.approx(float(loss_of(params, first, 0.5)[1]["train/reply_loss"]),
                                                           rel=1e-6)
    assert float(loss) == pytest.approx(float(plain) + 0.5 * float(aux["train/reply_loss"]), rel=1e-6)
    grads = jax.grad(lambda p: loss_of(p, both, 0.5)[0])(params)
    assert np.abs(np.asarray(grads[tower.REPLY]["kernel"])).sum() > 0


def test_default_network_has_no_reply_head_and_best_drops_it(tmp_path):
    p0 = cnet.init_params(jax.random.key(1), heads="two", width=8)
    assert tower.REPLY not in azl.AlphaZero(TINY, game=C4).init(jax.random.key(2), p0).params
    assert tower.REPLY not in azl.AlphaZero(dataclasses.replace(TINY, tower_blocks=1, tower_channels=8), game=C4).fresh_params(
        jax.random.key(0))
    algo = azl.AlphaZero(dataclasses.replace(TINY, reply_weight=0.5), game=C4)
    state = algo.init(jax.random.key(2), p0)
    assert set(state.params) == set(p0) | {tower.REPLY} and isinstance(state.buffer.items, azl.ReplySample)
    assert algo.agent_of(state.params, "x").params.keys() == p0.keys()
    # best/ holds what saved_params gives: an ordinary two-headed network that agents.load plays
    meta = {"name": "reply", "algorithm": "alphazero", "game": C4.id, "network": {"width": 8, "heads": "two"},
            "agent": {"output": "policy", "default_mode": "det", "symmetric": True, "search": {"simulations": 4}}}
    checkpoint.save(tmp_path / "ck", {"params": algo.saved_params(state.params)}, meta)
    agent = agents.load(f"{tmp_path / 'ck'}@0")  # its raw policy (the search compiles slowly)
    assert agent.params.keys() == p0.keys() and int(agent.act(WIN[None], jax.random.key(0))[0]) in range(7)


@pytest.mark.slow
def test_script_trains_a_reply_head_and_best_plays_without_it(tmp_path):
    run = tmp_path / "reply"
    proc = run_script("alphazero.py", "--out", run, "--total-updates", "2", *TINY_FLAGS, "--reply-weight", "0.5")
    assert proc.returncode == 0, proc.stderr[-3000:]
    row = json.loads((run / "metrics.jsonl").read_text().splitlines()[-1])
    assert np.isfinite(row["train/reply_loss"]) and row["train/reply_loss"] > 0
    agent = agents.load(str(run))
    assert isinstance(agent, az.AlphaZeroAgent) and tower.REPLY not in agent.params
    board = BLOCK.copy()
    board[:4, 0] = [1, -1, 1, -1]  # column 0 full
    move = int(agent.act(board[None], jax.random.key(0))[0])
    assert 1 <= move <= 6
