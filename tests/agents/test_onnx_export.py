"""ONNX export of network agents (c4jax.agents.onnx_export, experiments/export_onnx.py): every shipped
network agent, of Connect Four and of Checkers, a Checkers run directory and tiny networks reproduce the
JAX agent's scores under onnxruntime (max |Δ| <= 1e-4 on finite entries, the same -inf entries, the same
argmax), at any batch size, with inputs and output shaped by the agent's game and its settings in the
metadata; the comparison itself fails on hand-made mismatches; bad input exits 2 with one line."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import jax
import numpy as np
import onnx
from onnx import numpy_helper
import pytest

import c4jax
from c4jax import agents, games
from c4jax.agents import onnx_export
from c4jax.agents.guided import guided
from c4jax.agents.network_search import AlphaZeroAgent
from c4jax.agents.network import NetworkAgent
from c4jax.evaluation import random_boards
from c4jax.io import checkpoint
from c4jax.nets import cnet, tower
from scripts import run_script
from command import error_of
from params import num_params

C4 = games.make(games.DEFAULT)

SHIPPED = ["supervised", "dqn", "dueling_dqn", "ppo", "reinforce"]
KEYS = {"agent", "label", "kind", "heads", "output", "symmetric", "width", "c4jax_version"}


def _assert_matches(reference, got):
    reference, got = np.asarray(reference), np.asarray(got)
    assert got.dtype == np.float32 and got.shape == reference.shape
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(reference))
    finite = np.isfinite(reference)
    assert np.isfinite(got[finite]).all()
    assert np.abs(got[finite] - reference[finite]).max() <= 1e-4
    # the same best column, up to near-ties (a column within 1e-4 of the best may win in ONNX)
    best_in_onnx = np.take_along_axis(reference, got.argmax(-1)[:, None], axis=-1)[:, 0]
    assert (best_in_onnx >= reference.max(-1) - 1e-4).all()


def _check_graph_io(model):
    (inp,), (out,) = model.graph.input, model.graph.output
    assert inp.name == "boards" and inp.type.tensor_type.elem_type == onnx.TensorProto.INT8
    dims = inp.type.tensor_type.shape.dim
    assert dims[0].dim_param and [d.dim_value for d in dims[1:]] == [6, 7]  # dynamic batch
    assert out.name == "scores" and out.type.tensor_type.elem_type == onnx.TensorProto.FLOAT


# the default run exports two of them (a Q network and a policy network); -m slow exports every one
@pytest.mark.parametrize("name", [pytest.param(n, marks=[pytest.mark.slow] if n in ("supervised", "dueling_dqn", "reinforce") else [])
                                  for n in SHIPPED])
def test_shipped_agent_exports_and_matches(name, tmp_path):
    path = tmp_path / f"{name}.onnx"
    r = run_script("export_onnx.py", name, "--out", path)
    assert r.returncode == 0, r.stderr
    assert "check passed" in r.stdout and "1000 boards" in r.stdout and "0 -inf mismatches" in r.stdout
    agent = agents.load(name)
    model = onnx.load(str(path))
    _check_graph_io(model)
    # every weight stored once (the mirrored pass of a symmetric agent refers to the same tensors)
    tensors = [numpy_helper.to_array(t) for t in model.graph.initializer]
    assert len({(a.dtype.str, a.shape, a.tobytes()) for a in tensors}) == len(tensors)
    assert sum(a.size for a in tensors) < 1.05 * num_params(agent.params)
    meta = onnx_export.read_metadata(path)
    assert KEYS <= meta.keys()
    assert meta["agent"] == agent.name and meta["kind"] == "network" and meta["c4jax_version"] == c4jax.__version__
    assert (meta["heads"], meta["output"], meta["symmetric"], meta["width"]) == (
        agent.heads, agent.output, str(agent.symmetric).lower(), str(agent.width))
    # Independent of the script's own check: other boards, in batches of 1 and 37 (dynamic batch).
    for batch, seed in ((1, 11), (37, 12)):
        boards = np.asarray(random_boards(jax.random.key(seed), batch, C4))
        got = onnx_export.onnx_scores(path, boards)
        _assert_matches(agent.scores(boards), got)
    legal = ~np.isneginf(got)
    assert legal.any(axis=-1).all() and (legal == (boards[:, 0, :] == 0)).all()
    if agent.output == "policy":  # probabilities; DQN agents' Q-values are no distribution
        assert np.allclose(np.where(legal, got, 0.0).sum(-1), 1.0, atol=1e-5) and (got[legal] >= 0).all()


@pytest.mark.parametrize("heads,output,symmetric", [
    ("one", "policy", False), ("two", "policy", True), ("one", "q", True), ("dueling", "q", False)])
def test_tiny_network_agents_every_setting(heads, output, symmetric):
    params = cnet.init_params(jax.random.key(1), width=8, heads=heads)
    agent = NetworkAgent(params=params, label="tiny", width=8, heads=heads, output=output, symmetric=symmetric, game=C4)
    model = onnx_export.to_model(agent)
    meta = {p.key: p.value for p in model.metadata_props}
    assert (meta["heads"], meta["output"], meta["symmetric"], meta["width"]) == (heads, output, str(symmetric).lower(), "8")
    result = onnx_export.check(agent, model, random_boards(jax.random.key(2), 1000, C4))
    assert result.boards == 1000
    assert result.ok, result.summary()


def test_tiny_alphazero_network_exports_its_raw_policy():
    params = cnet.init_params(jax.random.key(4), width=8, heads="two")
    agent = AlphaZeroAgent(params=params, label="tinyaz", width=8, num_simulations=0, game=C4)
    model = onnx_export.to_model(agent)
    _check_graph_io(model)
    meta = {p.key: p.value for p in model.metadata_props}
    assert meta["kind"] == "alphazero" and meta["output"] == "policy" and "raw network's policy" in meta["note"]
    for batch in (1, 37, 1000):
        boards = np.asarray(random_boards(jax.random.key(batch), batch, C4))
        _assert_matches(agent.scores(boards), onnx_export.onnx_scores(model, boards))
    # An agent that searches exports the same graph: its network without the search.
    searching = AlphaZeroAgent(params=params, label="tinyaz", width=8, num_simulations=8, game=C4)
    assert onnx_export.exportable(searching).num_simulations == 0
    network = NetworkAgent(params=params, label="tiny", width=8, heads="two", game=C4)
    assert onnx_export.exportable(guided(network, 8)) is network  # "tiny@8" exports "tiny"


def test_a_searching_agent_with_proven_values_exports_its_network():
    params = cnet.init_params(jax.random.key(4), width=8, heads="two")
    solving = AlphaZeroAgent(params=params, label="tinyaz", width=8, num_simulations=8, solve=True, game=C4)
    raw = onnx_export.exportable(solving)
    assert (raw.num_simulations, raw.solve) == (0, False)
    boards = np.asarray(random_boards(jax.random.key(3), 37, C4))
    _assert_matches(raw.scores(boards), onnx_export.onnx_scores(onnx_export.to_model(solving), boards))


def test_residual_tower_exports_its_raw_policy():
    params = tower.init_params(jax.random.key(5), C4, tower=(1, 8))
    agent = AlphaZeroAgent(params=params, label="tinytower", tower=(1, 8), num_simulations=0, game=C4)
    model = onnx_export.to_model(agent)
    assert {p.key: p.value for p in model.metadata_props}["tower"] == "1x8"
    boards = np.asarray(random_boards(jax.random.key(6), 37, C4))
    _assert_matches(agent.scores(boards), onnx_export.onnx_scores(model, boards))


def test_alphazero_checkpoint_through_the_script(tmp_path):
    params = cnet.init_params(jax.random.key(5), width=8, heads="two")
    ckpt = checkpoint.save(tmp_path / "az", {"params": params}, {
        "name": "tinyaz", "algorithm": "alphazero", "game": "connect_four", "network": {"width": 8, "heads": "two"},
        "agent": {"output": "policy", "default_mode": "det", "symmetric": True, "search": {"simulations": 4}}})
    path = tmp_path / "out" / "az.onnx"  # the directory is created
    r = run_script("export_onnx.py", ckpt, "--out", path, "--seed", 1)
    assert r.returncode == 0, r.stderr
    assert "check passed" in r.stdout
    meta = onnx_export.read_metadata(path)
    assert meta["kind"] == "alphazero" and meta["agent"].endswith("@policy:det")
    raw = agents.load(f"{ckpt}@0")
    boards = np.asarray(random_boards(jax.random.key(6), 37, C4))
    _assert_matches(raw.scores(boards), onnx_export.onnx_scores(path, boards))


CHECKERS = games.make("checkers")


def _check_checkers_graph_io(model):
    (obs, legal), (out,) = model.graph.input, model.graph.output
    dims = lambda t: [d.dim_value for d in t.type.tensor_type.shape.dim[1:]]  # noqa: E731
    assert obs.name == "observations" and obs.type.tensor_type.elem_type == onnx.TensorProto.INT8
    assert dims(obs) == list(CHECKERS.observation_shape) == [8, 8, 2]
    assert legal.name == "legal_action_mask" and legal.type.tensor_type.elem_type == onnx.TensorProto.BOOL
    assert dims(legal) == [CHECKERS.num_actions] == [256]
    assert out.name == "scores" and dims(out) == [256] and out.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    assert all(t.type.tensor_type.shape.dim[0].dim_param for t in (obs, legal, out))  # dynamic batch


def _tiny_checkers_agent(seed: int = 7) -> AlphaZeroAgent:
    params = tower.init_params(jax.random.key(seed), CHECKERS, tower=(1, 8))
    return AlphaZeroAgent(params=params, label="tinyck", tower=(1, 8), num_simulations=0, game=CHECKERS)


def test_random_checkers_positions_are_legal_unfinished_and_varied():
    states = onnx_export.random_positions(CHECKERS, jax.random.key(0), 64)
    assert not np.asarray(states.terminated | states.truncated).any()
    assert np.asarray(states.legal_action_mask).any(axis=-1).all()
    observations = np.asarray(jax.vmap(CHECKERS.observe)(states))
    assert len({o.tobytes() for o in observations}) > 32  # not 64 copies of the start position


def test_tiny_checkers_tower_exports_on_the_games_inputs():
    agent = _tiny_checkers_agent()
    model = onnx_export.to_model(agent)
    _check_checkers_graph_io(model)
    meta = {p.key: p.value for p in model.metadata_props}
    assert meta["game"] == "checkers" and meta["tower"] == "1x8" and "legal_action_mask: bool[B, 256]" in meta["input"]
    assert onnx_export.describe(agent) == ("observations int8[B, 8, 8, 2], legal_action_mask bool[B, 256] -> "
                                           "scores float32[B, 256]")
    for batch in (1, 37):
        states = onnx_export.random_positions(CHECKERS, jax.random.key(batch), batch)
        got = onnx_export.onnx_scores(model, onnx_export.feeds(agent, states))
        assert got.shape == (batch, 256)
        _assert_matches(agent.scores_states(states), got)
        np.testing.assert_array_equal(~np.isneginf(got), np.asarray(states.legal_action_mask))
    assert onnx_export.check(agent, model, onnx_export.random_positions(CHECKERS, jax.random.key(9), 200)).ok


def test_a_checkers_run_directory_through_the_script(tmp_path):
    agent = _tiny_checkers_agent(8)
    checkpoint.save(tmp_path / "run" / "best", {"params": agent.params}, {
        "name": "tinyck", "algorithm": "ppo", "game": "checkers", "network": {"width": 8, "heads": "two", "tower": [1, 8]},
        "agent": {"output": "policy", "default_mode": "sto", "symmetric": False, "search": {"simulations": 0}}})
    path = tmp_path / "ck.onnx"
    r = run_script("export_onnx.py", tmp_path / "run", "--out", path, "--boards", 100)
    assert r.returncode == 0, r.stderr
    assert "check passed" in r.stdout and "100 boards" in r.stdout and "-> scores float32[B, 256]" in r.stdout
    _check_checkers_graph_io(onnx.load(str(path)))
    loaded = agents.load(str(tmp_path / "run"))
    states = onnx_export.random_positions(CHECKERS, jax.random.key(5), 37)
    _assert_matches(loaded.scores_states(states), onnx_export.onnx_scores(path, onnx_export.feeds(loaded, states)))


@pytest.mark.parametrize("name", ["checkers/alphazero", "checkers/ppo", "checkers/dqn"])
def test_shipped_checkers_agent_exports_its_network(name, tmp_path):
    path = tmp_path / "ck.onnx"
    r = run_script("export_onnx.py", name, "--out", path, "--boards", 100)
    assert r.returncode == 0, r.stderr
    assert "check passed" in r.stdout and "0 -inf mismatches" in r.stdout
    _check_checkers_graph_io(onnx.load(str(path)))
    meta = onnx_export.read_metadata(path)
    assert meta["game"] == "checkers" and meta["tower"] == "2x32"
    # a network trained without search is named as it is; a DQN's scores are its Q-values
    raw = {"checkers/alphazero": "checkers/alphazero@policy:det", "checkers/ppo": "checkers/ppo:sto",
           "checkers/dqn": "checkers/dqn:det"}[name]
    assert meta["agent"] == raw and agents.load(raw).name == raw
    q = name == "checkers/dqn"
    assert (meta["kind"], meta["output"]) == (("network", "q") if q else ("alphazero", "policy"))
    assert ("Q-values per action" in meta["output_description"]) == q


def test_compare_fails_on_each_kind_of_mismatch():
    inf = -np.inf
    ref = np.array([[0.2, 0.3, inf, 0.1, 0.1, 0.2, 0.1], [0.5, 0.50005, 0.0, 0.0, 0.0, 0.0, inf]], np.float32)
    same = onnx_export.compare(ref, ref.copy())
    assert same.ok and same.max_abs_diff == 0.0 and same.boards == 2
    close = ref + np.float32(5e-5)
    assert onnx_export.compare(ref, close).ok
    far = ref.copy()
    far[0, 0] += 2e-4
    assert not onnx_export.compare(ref, far).ok and onnx_export.compare(ref, far).max_abs_diff > 1e-4
    lost_inf = ref.copy()
    lost_inf[0, 2] = -1e30
    assert onnx_export.compare(ref, lost_inf).inf_mismatches == 1 and not onnx_export.compare(ref, lost_inf).ok
    swapped = ref.copy()
    swapped[1, :2] = ref[1, 1::-1]  # a near-tie (within the tolerance) swapped: the same play
    c = onnx_export.compare(ref, swapped)
    assert c.max_abs_diff <= 1e-4 and c.argmax_mismatches == 0 and c.ok
    flipped = ref.copy()
    flipped[0, 3] = 0.35  # a column 0.2 worse becomes the best
    c = onnx_export.compare(ref, flipped)
    assert c.argmax_mismatches == 1 and not c.ok
    nan = ref.copy()
    nan[1, 3] = np.nan
    assert onnx_export.compare(ref, nan).inf_mismatches == 1
    with pytest.raises(ValueError, match="shapes"):
        onnx_export.compare(ref, ref[:1])


def test_script_fails_with_exit_1_when_the_graph_differs(tmp_path, monkeypatch):
    real = onnx_export.onnx_scores
    monkeypatch.setattr(onnx_export, "onnx_scores", lambda m, b: real(m, b) + np.float32(1e-3))
    path = tmp_path / "dqn.onnx"
    r = run_script("export_onnx.py", "dqn", "--out", path, "--boards", 37)
    assert r.returncode == 1 and "37 boards" in r.stderr
    assert error_of(r.stderr).startswith("error: the ONNX graph does not reproduce")
    assert not path.exists()


@pytest.mark.parametrize("args,message", [
    (["nosuchagent", "--out", "{tmp}/a.onnx"], "unknown agent"),
    (["1steplA", "--out", "{tmp}/a.onnx"], "not a network agent"),
    (["mcts100", "--out", "{tmp}/a.onnx"], "not a network agent"),
    (["random", "--out", "{tmp}/a.onnx"], "not a network agent"),
    (["checkers/mcts100", "--out", "{tmp}/a.onnx"], "not a network agent"),
    (["checkers/nosuch", "--out", "{tmp}/a.onnx"], "unknown checkers agent"),
    (["{tmp}/missing_run", "--out", "{tmp}/a.onnx"], "does not exist"),
    (["dqn:foo", "--out", "{tmp}/a.onnx"], "suffix"),
    (["dqn", "--out", "{tmp}/file.txt/a.onnx"], "is not a directory"),
    (["dqn", "--out", "{tmp}"], "is a directory"),
    (["dqn", "--out", "{tmp}/a.onnx", "--boards", "0"], "--boards"),
    (["dqn", "--out", "{tmp}/a.onnx", "--opset", "9"], "--opset"),
])
def test_bad_input_exits_2_with_one_line(args, message, tmp_path):
    (tmp_path / "file.txt").write_text("x")
    r = run_script("export_onnx.py", *[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert message in error_of(r.stderr), r.stderr
    assert not (tmp_path / "a.onnx").exists()


def test_missing_extra_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "jax2onnx", None)  # import jax2onnx now raises ImportError
    r = run_script("export_onnx.py", "dqn", "--out", tmp_path / "a.onnx")
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "'onnx' extra" in r.stderr and "pip install" in r.stderr


def test_onnx_packages_are_never_imported_at_module_level():
    """``import c4jax`` (and importing the export module) never imports jax2onnx, onnx or onnxruntime."""
    tree = ast.parse(Path(onnx_export.__file__).read_text())
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    names = {a.name.split(".")[0] for n in top if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module.split(".")[0] for n in top if isinstance(n, ast.ImportFrom) and n.module}
    assert not names & {"jax2onnx", "onnx", "onnxruntime", "onnx_ir"}
