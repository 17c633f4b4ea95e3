"""PPO and REINFORCE trainers: chunks, frozen conv, scripts end to end, resume."""

import json

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from c4jax import agents, games
from c4jax.io import checkpoint
from c4jax.learning import loop, onpolicy_games, stacked, training_eval
from c4jax.learning.placement import ONE_DEVICE
from c4jax.learning.ppo import PPO, PPOConfig
from c4jax.learning.reinforce import Reinforce, ReinforceConfig
from c4jax.learning.config import validate
from scripts import run_script

SMALL_PPO = dict(buffer_size=256, games_per_collect=16, epochs=2, minibatch_size=32)
SMALL_REI = dict(games_per_collect=5, episodes_per_eval=10)
C4 = games.make(games.DEFAULT)


def _params(heads="two"):
    return loop.initial_params(loop.LoopConfig(game="connect_four"), heads, 128, jax.random.key(0))


@pytest.mark.parametrize("make", [lambda: PPO(PPOConfig(**SMALL_PPO), C4),
                                  lambda: Reinforce(ReinforceConfig(**SMALL_REI), C4)])
def test_a_chunk_trains_the_dense_layers_and_never_the_frozen_conv(make):
    algo = make()
    params = _params()
    state = algo.init(jax.random.key(1), params)
    new, metrics = algo.chunk(state)
    assert int(new.updates) > 0
    chex.assert_trees_all_equal(new.params["conv"], params["conv"])
    assert not np.array_equal(new.params["value"]["out"]["kernel"], params["value"]["out"]["kernel"])
    for k, v in metrics.items():
        assert np.isfinite(np.asarray(v)).all(), k
    assert 1 <= float(metrics["selfplay/length"]) <= 42


def test_a_vmapped_chunk_stops_every_seed_at_the_budget():
    """Seeds of a whole-games PPO run differ in updates; the chunk of a vmapped run caps each at the budget."""
    algo = PPO(PPOConfig(**SMALL_PPO), C4)
    params = _params()
    state = stacked.stack_seeds([algo.init(jax.random.key(s), params) for s in (1, 2)])
    state = state.replace(updates=jnp.array([0, algo.eval_updates - 2], jnp.int32))  # seed 1 ahead
    budget = algo.eval_updates
    chunk = stacked.make_chunk(algo, 2, ONE_DEVICE, state, budget=budget)[0]
    new, _ = chunk(state)
    assert int(new.updates[0]) > 0 and int(new.updates[1]) == budget
    assert stacked.make_chunk(algo, 2, ONE_DEVICE, state, budget=budget)[0] is chunk
    assert stacked.make_chunk(algo, 2, ONE_DEVICE, state)[0] is not chunk  # no budget: the plain chunk
    assert stacked.make_chunk(algo, 1, ONE_DEVICE, state, budget=budget)[0] is stacked.make_chunk(
        algo, 1, ONE_DEVICE, state)[0]  # one seed never drifts: its chunk has no budget
    streams = PPO(PPOConfig(collect="streams", network="tower", minibatch_size=512), games.make("checkers"))
    assert streams.capped(budget) is None  # every buffer makes the same updates


def test_initial_params_copy_the_supervised_network_and_add_a_fresh_value_head():
    sup = agents.load("supervised").params
    params = _params()
    for name in ("conv", "dense", "head"):
        chex.assert_trees_all_equal(params[name], sup[name])
    assert "value" in params


def test_bad_configuration_is_refused():
    with pytest.raises(ValueError, match="minibatch"):
        validate(PPOConfig(buffer_size=16, minibatch_size=32))
    validate(ReinforceConfig(games_per_collect=30, episodes_per_eval=100))  # any interval: the last collection is cut
    with pytest.raises(ValueError, match="games-per-collect"):
        validate(PPOConfig(games_per_collect=-1))


def test_the_default_collection_fills_the_thesis_buffer_of_2000_transitions():
    """--games-per-collect 0 (auto) plays enough self-play games (with mirrors) to fill every buffer."""
    cfg = PPOConfig()
    assert cfg.games_per_collect == 0 and cfg.games == 160
    assert PPOConfig(buffer_size=256).games == 21 and PPOConfig(games_per_collect=7).games == 7
    params = _params()
    algo = PPO(cfg, C4)
    state = algo.init(jax.random.key(0), params)
    collect = jax.jit(lambda keys: algo.collection.collect(state, keys)[1])
    for seed in range(3):
        batch = jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), collect(jax.random.split(jax.random.key(seed))))
        assert int(batch.valid.sum()) >= cfg.buffer_size
        assert int(onpolicy_games.take_first(batch, cfg.buffer_size).valid.sum()) == cfg.buffer_size


def _run(script, out, *extra):
    cmd = [script, "--out", str(out), "--no-progress", *extra]
    proc = run_script(*cmd)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


PPO_FLAGS = ("--buffer-size", "256", "--games-per-collect", "16", "--epochs", "2", "--eval-every", "16")
REI_FLAGS = ("--games-per-collect", "5", "--eval-every", "10")


@pytest.fixture(scope="module")
def ppo_run(tmp_path_factory):
    """One finished 32-update ppo.py run (two buffers of at most 16 updates; read, never changed, by the
    tests below): its output folder."""
    out = tmp_path_factory.mktemp("ppo_run") / "ppo"
    _run("ppo.py", out, "--total-updates", "32", *PPO_FLAGS)
    return out


@pytest.mark.parametrize("script, name, flags, total", [
    ("ppo.py", "ppo", PPO_FLAGS, "32"),
    ("reinforce.py", "reinforce", REI_FLAGS, "20"),
])
def test_script_end_to_end(tmp_path, script, name, flags, total, request):
    if script == "ppo.py":
        out = request.getfixturevalue("ppo_run")
    else:
        out = tmp_path / name
        _run(script, out, "--total-updates", total, *flags)
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert len(rows) >= 2 and rows[-1]["step"] <= int(total)  # the budget is not passed
    for key in ("train/loss", "eval/vs_1steplA", "eval/vs_random", "eval/vs_old", "selfplay/length"):
        assert key in rows[-1], key
    for f in ("metrics.csv", "curves.png", "summary.json", "best/metadata.json", "last/metadata.json"):
        assert (out / f).is_file(), f
    meta = checkpoint.read_metadata(out / "best")
    assert meta["algorithm"] == name and meta["network"]["heads"] == "two"
    sto, det = agents.load(str(out)), agents.load(str(out) + ":det")
    assert sto.stochastic and not det.stochastic


def test_ppo_resume_continues_exactly(tmp_path, ppo_run):
    straight, resumed = ppo_run, tmp_path / "resumed"
    first = json.loads((straight / "metrics.jsonl").read_text().splitlines()[0])["step"]
    _run("ppo.py", resumed, "--total-updates", str(first), *PPO_FLAGS)
    _run("ppo.py", resumed, "--total-updates", "32", "--resume", *PPO_FLAGS)
    a = json.loads((straight / "last" / "metadata.json").read_text())["metrics"]
    b = json.loads((resumed / "last" / "metadata.json").read_text())["metrics"]
    for k in ("train/loss", "eval/vs_1steplA", "eval/vs_old", "selfplay/episodes"):
        assert a[k] == b[k], k
    pa, pb = agents.load(str(straight / "best")).params, agents.load(str(resumed / "best")).params
    chex.assert_trees_all_equal(pa, pb)


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("script, name, flags, total", [
    ("ppo.py", "ppo", PPO_FLAGS, "32"),  # two buffers of at most 16 updates
    ("reinforce.py", "reinforce", REI_FLAGS, "20"),
])
@pytest.mark.slow
def test_vmap_seeds_trains_two_different_finite_seeds(tmp_path, script, name, flags, total):
    out = tmp_path / name
    proc = _run(script, out, "--total-updates", total, "--vmap-seeds", "2", "--seed", "3", *flags)
    assert "2 seeds [3, 4]" in proc.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seeds"] == [3, 4] and summary["algorithm"] == name
    rows = {s: _rows(out / f"seed_{s}" / "metrics.jsonl") for s in (3, 4)}
    for s, rs in rows.items():
        assert len(rs) >= 2 and rs[-1]["step"] <= int(total)  # the budget is not passed
        for r in rs:
            for k, v in r.items():
                assert np.isfinite(v), (s, k)
        for f in ("metrics.csv", "curves.png", "summary.json", "best/metadata.json"):
            assert (out / f"seed_{s}" / f).is_file(), (s, f)
        assert checkpoint.read_metadata(out / f"seed_{s}" / "best")["config"]["seed"] == s
    # two different runs: different self-play, losses and weights
    assert [r["train/loss"] for r in rows[3]] != [r["train/loss"] for r in rows[4]]
    p3, p4 = (agents.load(str(out / f"seed_{s}")).params for s in (3, 4))
    assert not np.array_equal(p3["dense"]["kernel"], p4["dense"]["kernel"])
    finals = [rows[s][-1]["eval/vs_1steplA"] for s in (3, 4)]
    assert summary["final_vs_1steplA"]["values"] == finals
    assert summary["final_vs_1steplA"]["mean"] == pytest.approx(np.mean(finals))
    assert summary["final_vs_1steplA"]["std"] == pytest.approx(np.std(finals, ddof=1))
    for f in ("seeds.md", "curves.png", "last/metadata.json"):
        assert (out / f).is_file(), f


@pytest.mark.slow  # four script runs; test_vmap_seeds_trains_two_different_finite_seeds keeps --vmap-seeds in the default run
def test_vmap_seeds_match_single_seed_runs_and_resume_exactly(tmp_path):
    """Seed s of a vmapped run is the run ``--seed s`` would make (up to batched rounding), and a
    vmapped run stopped after its first evaluation and resumed ends where a straight one does."""
    single, straight, resumed = tmp_path / "single", tmp_path / "straight", tmp_path / "resumed"
    _run("ppo.py", single, "--total-updates", "20", "--seed", "1", *PPO_FLAGS)
    _run("ppo.py", straight, "--total-updates", "20", "--vmap-seeds", "2", *PPO_FLAGS)
    a, b = _rows(single / "metrics.jsonl"), _rows(straight / "seed_1" / "metrics.jsonl")
    assert [r["step"] for r in a] == [r["step"] for r in b]
    np.testing.assert_allclose([r["train/loss"] for r in a], [r["train/loss"] for r in b], rtol=1e-4)
    assert [r["selfplay/length"] for r in a] == [r["selfplay/length"] for r in b]

    first = _rows(straight / "seed_0" / "metrics.jsonl")[0]["step"]
    _run("ppo.py", resumed, "--total-updates", str(first), "--vmap-seeds", "2", *PPO_FLAGS)
    _run("ppo.py", resumed, "--total-updates", "20", "--vmap-seeds", "2", "--resume", *PPO_FLAGS)
    for s in (0, 1):
        ra, rb = (_rows(d / f"seed_{s}" / "metrics.jsonl") for d in (straight, resumed))
        drop = lambda rows: [{k: v for k, v in r.items() if not k.startswith("time/")} for r in rows]  # noqa: E731
        assert drop(ra) == drop(rb), s
    chex.assert_trees_all_equal(agents.load(str(straight / "seed_1")).params, agents.load(str(resumed / "seed_1")).params)
    # resuming with other seeds is refused with a clear message
    bad = run_script("ppo.py", "--out", str(resumed), "--resume",
                          "--vmap-seeds", "3", "--no-progress", *PPO_FLAGS)
    assert bad.returncode == 2 and "other settings (--vmap-seeds 2)" in bad.stderr, bad.stderr


def test_eval_greedy_makes_the_evaluated_policy_deterministic():
    ppo = PPO(PPOConfig(**SMALL_PPO), C4)
    params = _params()
    sampled = training_eval.evaluated_agent(ppo, loop.LoopConfig(game="connect_four"), 128)(params, "ppo")
    greedy = training_eval.evaluated_agent(ppo, loop.LoopConfig(game="connect_four", eval_greedy=True), 128)(params, "ppo")
    assert sampled.stochastic and not greedy.stochastic
    boards = np.zeros((4, 6, 7), np.int8)
    acts = {int(greedy.act(boards, jax.random.key(k))[0]) for k in range(5)}
    assert len(acts) == 1


def test_evaluation_plays_with_symmetric_averaging_unless_told_not_to():
    ppo = PPO(PPOConfig(**SMALL_PPO), C4)
    params = _params()
    assert training_eval.evaluated_agent(ppo, loop.LoopConfig(game="connect_four"), 128)(params, "ppo").symmetric
    plain = training_eval.evaluated_agent(ppo, loop.LoopConfig(game="connect_four", eval_symmetric=False), 128)(params, "ppo")
    assert not plain.symmetric
    board = np.zeros((1, 6, 7), np.int8)
    board[0, 5, 0] = -1  # the opponent's first stone in the corner: not its own mirror image
    sym = training_eval.evaluated_agent(ppo, loop.LoopConfig(game="connect_four"), 128)(params, "ppo")
    assert not np.allclose(np.asarray(sym.scores(board)), np.asarray(plain.scores(board)))
