"""A game's rules as ONNX (c4jax.agents.rules_export): for Connect Four, Checkers and the guide's
tic-tac-toe registered from a temporary folder, the exported ``init`` and ``step`` under onnxruntime
play batches of random games (a few illegal actions among them) in lockstep with the JAX kit, and
every state tensor, legal mask, observation, reward, done flag and player to move is identical at
every ply; the layout in the metadata is the state's."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("jax2onnx")
pytest.importorskip("onnxruntime")

from c4jax import games  # noqa: E402
from c4jax.agents import rules_export  # noqa: E402
from c4jax.games import base as game_base  # noqa: E402

from guide_games import registered  # noqa: E402  (the guide's example games, registered from a temporary folder)

BATCH = 8
ILLEGAL_RATE = 0.03  # the share of moves drawn among all actions, legal or not


def _actions(rng, mask: np.ndarray) -> np.ndarray:
    """int32[B]: a random legal action per game (0 where none is legal), now and then any action."""
    picks = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in mask], np.int32)
    wild = rng.random(len(mask)) < ILLEGAL_RATE
    return np.where(wild, rng.integers(0, mask.shape[-1], len(mask)), picks).astype(np.int32)


def _assert_same(game, jax_state, state, views):
    for name, want in rules_export.flatten(game, jax_state).items():
        assert state[name].dtype == want.dtype and np.array_equal(state[name], want), name
    for name, want in rules_export.views(game, jax_state).items():
        want = np.asarray(want)
        assert views[name].dtype == want.dtype and np.array_equal(views[name], want), name


def _play_in_lockstep(game, runtime, seed: int, batch: int = BATCH) -> int:
    """Random games through ONNX and JAX side by side until all are over (and one ply more: finished
    states stay as they are); returns the plies played."""
    rng = np.random.default_rng(seed)
    state, views = runtime.init(batch)
    jax_state = jax.vmap(game.init)(jax.random.split(jax.random.key(0), batch))
    _assert_same(game, jax_state, state, views)
    step = jax.jit(jax.vmap(game.step))
    for ply in range(game.max_steps + 1):
        actions = _actions(rng, views["legal_action_mask"])
        state, views = runtime.step(state, actions)
        jax_state = step(jax_state, jnp.asarray(actions))
        _assert_same(game, jax_state, state, views)
        if bool(np.asarray(game_base.done(jax_state)).all()):
            state, views = runtime.step(state, actions)
            jax_state = step(jax_state, jnp.asarray(actions))
            _assert_same(game, jax_state, state, views)
            return ply + 1
    raise AssertionError(f"{game.id}: games still running after max_steps")


def _runtime(game):
    return rules_export.Runtime.load(game, rules_export.to_model(game, "init"), rules_export.to_model(game, "step"))


@pytest.fixture(scope="module")
def tic_tac_toe(tmp_path_factory):
    with registered(tmp_path_factory.mktemp("third_game"), "tictactoe", "tic_tac_toe") as game:
        yield game


def test_a_third_game_s_rules_play_like_its_kit(tic_tac_toe):
    runtime = _runtime(tic_tac_toe)
    for seed in range(3):
        assert _play_in_lockstep(tic_tac_toe, runtime, seed) >= 5
    state, _ = runtime.init(1)
    assert set(state) == {"board", "current_player", "legal_action_mask", "rewards", "terminated", "truncated"}


def test_the_metadata_records_the_state_layout(tic_tac_toe):
    model = rules_export.to_model(tic_tac_toe, "step")
    props = {p.key: p.value for p in model.metadata_props}
    assert props["game"] == "tic_tac_toe" and props["rules"] == "step" and props["num_actions"] == "9"
    assert json.loads(props["state"])[0] == {"name": "board", "dtype": "int8", "shape": [9]}
    assert json.loads(props["observation"]) == {"dtype": "int8", "shape": [3, 3, 2]}
    names = [i.name for i in model.graph.input]
    assert names == [f"state.{t['name']}" for t in json.loads(props["state"])] + ["action"]
    outputs = [o.name for o in model.graph.output]
    assert outputs == rules_export.output_names(tic_tac_toe)
    assert all(i.type.tensor_type.shape.dim[0].dim_param for i in model.graph.input)  # dynamic batch


@pytest.mark.slow
@pytest.mark.parametrize("game_id", ["connect_four", "checkers"])
def test_the_built_in_games_rules_play_like_their_kits(game_id):
    game = games.make(game_id)
    runtime = _runtime(game)
    for seed in range(2):
        _play_in_lockstep(game, runtime, seed)
    _play_in_lockstep(game, runtime, 7, batch=1)


def test_nodes_without_an_onnxruntime_kernel_are_widened_exactly():
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    h, TP = onnx.helper, onnx.TensorProto
    graph = h.make_graph(
        [h.make_node("Where", ["c", "a", "b"], ["w"]), h.make_node("ReduceMax", ["u", "axes"], ["m"], keepdims=0)],
        "g",
        [h.make_tensor_value_info("c", TP.BOOL, ["B"]), h.make_tensor_value_info("a", TP.BOOL, ["B"]),
         h.make_tensor_value_info("b", TP.BOOL, ["B"]), h.make_tensor_value_info("u", TP.UINT32, ["B", 2])],
        [h.make_tensor_value_info("w", TP.BOOL, ["B"]), h.make_tensor_value_info("m", TP.UINT32, ["B"])],
        initializer=[onnx.numpy_helper.from_array(np.array([1], np.int64), "axes")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 21)])
    with pytest.raises(Exception, match="NOT_IMPLEMENTED"):  # what the rewrite is for
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    assert rules_export.widen_types(model) == 2
    onnx.checker.check_model(model)
    c, a, b = np.array([True, False, True]), np.array([True, True, False]), np.array([False, False, True])
    u = np.array([[0, 0xFFFFFFFF], [0x80000000, 1], [7, 7]], np.uint32)
    w, m = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"a": a, "b": b, "c": c, "u": u})
    assert w.dtype == np.bool_ and np.array_equal(w, np.where(c, a, b))
    assert m.dtype == np.uint32 and np.array_equal(m, u.max(-1))
