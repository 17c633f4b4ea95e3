"""ONNX export of a game's rules (design.md, "The rules as ONNX"), checked against the JAX kit.

Two graphs, jax2onnx tracing the kit's functions under ``jax.vmap`` (``B`` dynamic): ``init`` (``key``
``uint32[B, K]``, raw key data) and ``step`` (``state.<leaf>`` tensors and ``action`` ``int32[B]``; no
key: chance is not exported faithfully). Both return ``next.<leaf>`` (:func:`layout`, recorded as
JSON in ``metadata_props["state"]``), then the :data:`VIEWS` (``legal_action_mask`` ``bool[B, A]``,
``observation``, ``done`` ``bool[B]``, ``rewards`` ``float32[B, 2]``, ``current_player`` ``int32[B]``).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from c4jax import games
from c4jax._version import __version__
from c4jax.agents.onnx_export import DEFAULT_OPSET, Tensor, import_extra
from c4jax.games import base as game_base
from c4jax.io import atomic

KEY_NAME, ACTION_NAME = "key", "action"
STATE_PREFIX, NEXT_PREFIX = "state.", "next."
VIEWS = ("legal_action_mask", "observation", "done", "rewards", "current_player")
MODELS = ("init", "step")

# (operation, element type) without an onnxruntime CPU kernel -> the element type widen_types runs it in
# (exact: these operations select or order their inputs, and the wider type holds every value).
WIDEN = {("Where", "BOOL"): "UINT8", ("Where", "INT16"): "INT32", ("Where", "UINT16"): "INT32",
         ("ReduceMax", "UINT32"): "INT64", ("ReduceMin", "UINT32"): "INT64",
         ("ReduceMax", "UINT16"): "INT32", ("ReduceMin", "UINT16"): "INT32",
         ("ReduceMax", "INT16"): "INT32", ("ReduceMin", "INT16"): "INT32",
         ("Max", "INT16"): "INT32", ("Min", "INT16"): "INT32", ("Max", "UINT16"): "INT32", ("Min", "UINT16"): "INT32",
         ("Range", "UINT32"): "INT64", ("Range", "UINT16"): "INT32", ("Range", "UINT8"): "INT32",
         ("Range", "INT8"): "INT32"}
# onnxruntime-web's WebAssembly build has fewer element types per kernel than the Python package:
# what a page's rules are widened with (Where only on 32- and 64-bit values)
WEB_WIDEN = {**WIDEN, ("Where", "BOOL"): "INT32", ("Where", "INT8"): "INT32", ("Where", "UINT8"): "INT32"}
_DATA_INPUTS = {"Where": (1, 2)}  # the inputs that carry the values (Where's condition stays bool)


def _leaf_name(path) -> str:
    parts = []
    for k in path:
        if isinstance(k, jax.tree_util.GetAttrKey):
            parts.append(k.name)
        elif isinstance(k, jax.tree_util.DictKey):
            parts.append(str(k.key))
        elif isinstance(k, jax.tree_util.SequenceKey):
            parts.append(str(k.idx))
        else:
            parts.append(str(getattr(k, "key", k)))
    return ".".join(parts) or "state"


def layout(game) -> tuple[tuple[Tensor, ...], Any]:
    """The state's tensors (one :class:`~c4jax.agents.onnx_export.Tensor` per leaf of ``game.init()``,
    in ``jax.tree_util`` order, named by its path, shape after the batch axis) and the pytree's treedef."""
    state = jax.eval_shape(game.init)
    paths, treedef = jax.tree_util.tree_flatten_with_path(state)
    tensors = tuple(Tensor(_leaf_name(p), str(leaf.dtype), tuple(leaf.shape)) for p, leaf in paths)
    names = [t.name for t in tensors]
    if len(set(names)) != len(names):
        raise ValueError(f"{game.id}: the state's leaves have clashing names {names}")
    return tensors, treedef


def key_shape() -> tuple[int, ...]:
    """The shape of one key's raw data (``uint32[2]`` for JAX's default threefry keys)."""
    return tuple(jax.random.key_data(jax.random.key(0)).shape)


def views(game, state) -> dict[str, jax.Array]:
    """The :data:`VIEWS` of a batch of states ``[B, ...]`` (what both graphs return after the state)."""
    return {
        "legal_action_mask": state.legal_action_mask.astype(jnp.bool_),
        "observation": jax.vmap(game.observe)(state),
        "done": game_base.done(state),
        "rewards": state.rewards.astype(jnp.float32),
        "current_player": state.current_player.astype(jnp.int32),
    }


def flatten(game, state) -> dict[str, np.ndarray]:
    """``{"<leaf>": array}`` of a batch of states (the :func:`layout`'s names and order)."""
    tensors, _ = layout(game)
    return {t.name: np.asarray(leaf) for t, leaf in zip(tensors, jax.tree_util.tree_leaves(state), strict=True)}


def unflatten(game, arrays) -> Any:
    """The batch of states of ``arrays``: a mapping ``{"<leaf>": array}`` or a sequence in layout order."""
    tensors, treedef = layout(game)
    leaves = [arrays[t.name] for t in tensors] if isinstance(arrays, dict) else list(arrays)
    return jax.tree_util.tree_unflatten(treedef, [jnp.asarray(x, t.dtype) for x, t in zip(leaves, tensors,
                                                                                          strict=True)])


def output_names(game) -> list[str]:
    """Both graphs' outputs, in order: ``next.<leaf>`` per state leaf, then the :data:`VIEWS`."""
    tensors, _ = layout(game)
    return [NEXT_PREFIX + t.name for t in tensors] + list(VIEWS)


def metadata(game, which: str) -> dict[str, str]:
    """The ``metadata_props`` of the ``which`` graph (``init`` or ``step``): the game, its sizes and the state layout."""
    tensors, _ = layout(game)
    observation = jax.eval_shape(lambda: game.observe(game.init()))
    return {
        "game": game.id,
        "rules": which,
        "num_actions": str(game.num_actions),
        "num_players": str(game.num_players),
        "max_steps": str(game.max_steps),
        "observation": json.dumps({"dtype": str(observation.dtype), "shape": list(observation.shape)}),
        "state": json.dumps([{"name": t.name, "dtype": t.dtype, "shape": list(t.shape)} for t in tensors]),
        "views": json.dumps(list(VIEWS)),
        "c4jax_version": __version__,
    }


def widen_types(model, table: dict | None = None) -> int:
    """Rewrite in place every node whose operation and value type ``table`` (default :data:`WIDEN`) lists
    to run in the wider type and cast back (exact). Returns how many nodes were rewritten."""
    onnx = import_extra("onnx")
    TP = onnx.TensorProto
    inferred = onnx.shape_inference.infer_shapes(model)
    types = {v.name: v.type.tensor_type.elem_type
             for v in [*inferred.graph.value_info, *inferred.graph.input, *inferred.graph.output]}
    for t in model.graph.initializer:
        types[t.name] = t.data_type
    graph = model.graph
    nodes, count = [], 0
    for i, node in enumerate(graph.node):
        data = [j for j in _DATA_INPUTS.get(node.op_type, range(len(node.input))) if j < len(node.input)]
        narrow = next((types.get(node.input[j]) for j in data if types.get(node.input[j])), None)
        wide = (WIDEN if table is None else table).get((node.op_type, TP.DataType.Name(narrow))) if narrow else None
        if wide is None:
            nodes.append(node)
            continue
        count += 1
        wide = getattr(TP, wide)
        for j in data:
            if types.get(node.input[j]) == narrow:
                x = node.input[j]
                nodes.append(onnx.helper.make_node("Cast", [x], [f"{x}__wide_{i}_{j}"], to=wide, name=f"widen_{i}_in{j}"))
                node.input[j] = f"{x}__wide_{i}_{j}"
        casts = []
        for j, y in enumerate(node.output):  # each operation here returns its value inputs' type
            node.output[j] = f"{y}__wide"
            casts.append(onnx.helper.make_node("Cast", [f"{y}__wide"], [y], to=narrow, name=f"widen_{i}_out{j}"))
        nodes.extend([node, *casts])
    del graph.node[:]
    graph.node.extend(nodes)
    return count


def _name_outputs(model, names: list[str]) -> None:
    """Give the graph's outputs ``names`` (in place): an ``Identity`` for a value that is several outputs,
    an input or a constant; else renamed where it is made and read."""
    onnx = import_extra("onnx")
    graph = model.graph
    fixed = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    renamed: dict[str, str] = {}
    extra = []
    for out, name in zip(graph.output, names, strict=True):
        source = out.name
        if source in renamed or source in fixed:
            extra.append(onnx.helper.make_node("Identity", [renamed.get(source, source)], [name], name=f"as_{name}"))
        else:
            renamed[source] = name
            for node in graph.node:
                node.output[:] = [renamed.get(x, x) if x == source else x for x in node.output]
                node.input[:] = [name if x == source else x for x in node.input]
        out.name = name
    graph.node.extend(extra)


def to_model(game, which: str, *, opset: int = DEFAULT_OPSET, widen: dict | None = None):
    """The checked ``onnx.ModelProto`` of ``game``'s (object or id) ``init`` or ``step``, with :func:`metadata`;
    ``widen``: the table of :func:`widen_types`. ``ValueError`` for another ``which``."""
    if isinstance(game, str):
        game = games.make(game)
    if which not in MODELS:
        raise ValueError(f"which must be one of {MODELS}, got {which!r}")
    jax2onnx = import_extra("jax2onnx")
    onnx = import_extra("onnx")
    logging.getLogger("onnx_ir.serde").setLevel(logging.ERROR)
    tensors, treedef = layout(game)
    batch = jax.export.symbolic_shape("B")[0]

    def outputs(state):
        return (*jax.tree_util.tree_leaves(state), *views(game, state).values())

    if which == "init":
        def fn(key):
            return outputs(jax.vmap(lambda k: game.init(jax.random.wrap_key_data(k)))(key))
        specs = [jax.ShapeDtypeStruct((batch, *key_shape()), jnp.uint32)]
        inputs = [KEY_NAME]
    else:
        def fn(*args):
            *leaves, action = args
            state = jax.tree_util.tree_unflatten(treedef, leaves)
            return outputs(jax.vmap(game.step)(state, action))
        specs = [jax.ShapeDtypeStruct((batch, *t.shape), jnp.dtype(t.dtype)) for t in tensors]
        specs.append(jax.ShapeDtypeStruct((batch,), jnp.int32))
        inputs = [STATE_PREFIX + t.name for t in tensors] + [ACTION_NAME]
    model = jax2onnx.to_onnx(fn, inputs=specs, model_name=f"{game.id}_{which}", opset=opset, input_names=inputs)
    _name_outputs(model, output_names(game))
    widen_types(model, widen)
    del model.graph.value_info[:]  # onnxruntime infers the intermediate shapes again
    model.doc_string = (f"c4jax {game.id} rules: {which} ("
                        + (f"{KEY_NAME} uint32[B, {', '.join(map(str, key_shape()))}]" if which == "init"
                           else f"the state tensors, {ACTION_NAME} int32[B]")
                        + ") -> the new state's tensors and " + ", ".join(VIEWS))
    model.producer_name = "c4jax"
    model.producer_version = __version__
    onnx.helper.set_model_props(model, metadata(game, which))
    onnx.checker.check_model(model)
    return model


def export(game, out_dir: str | Path, *, opset: int = DEFAULT_OPSET) -> dict[str, Path]:
    """Write ``rules_init.onnx`` and ``rules_step.onnx`` of ``game`` into ``out_dir`` (atomically);
    returns ``{"init": path, "step": path}``."""
    onnx = import_extra("onnx")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for which in MODELS:
        model = to_model(game, which, opset=opset)
        paths[which] = atomic.write_atomic(out_dir / f"rules_{which}.onnx", lambda f, m=model: onnx.save_model(m, f))
    return paths


@dataclasses.dataclass
class Runtime:
    """The exported rules under onnxruntime (CPU): ``init(B)`` and ``step(state, actions)`` return
    ``(state, views)``, ``state`` a dict ``{"<leaf>": array [B, ...]}`` to pass back to ``step``,
    ``views`` a dict of the :data:`VIEWS`."""

    game: Any
    init_session: Any
    step_session: Any
    state_names: tuple[str, ...] = ()

    @classmethod
    def load(cls, game, init_model, step_model, threads: int = 1) -> "Runtime":
        """Sessions of two models (``onnx.ModelProto``, serialized bytes or paths); ``threads``: intra-op threads."""
        ort = import_extra("onnxruntime")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1

        def session(m):
            src = str(m) if isinstance(m, (str, Path)) else m if isinstance(m, bytes) else m.SerializeToString()
            return ort.InferenceSession(src, options, providers=["CPUExecutionProvider"])

        game = games.make(game) if isinstance(game, str) else game
        return cls(game, session(init_model), session(step_model), tuple(t.name for t in layout(game)[0]))

    def _split(self, outputs) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        n = len(self.state_names)
        return dict(zip(self.state_names, outputs[:n], strict=True)), dict(zip(VIEWS, outputs[n:], strict=True))

    def init(self, batch: int, keys: np.ndarray | None = None):
        """The start positions of ``batch`` games (``keys``: ``uint32[batch, K]``, zeros by default)."""
        keys = np.zeros((batch, *key_shape()), np.uint32) if keys is None else np.asarray(keys, np.uint32)
        return self._split(self.init_session.run(None, {KEY_NAME: keys}))

    def step(self, state: dict[str, np.ndarray], actions) -> tuple[dict, dict]:
        """The states after ``actions`` (``int32[B]``) in ``state``."""
        feeds = {STATE_PREFIX + k: v for k, v in state.items()}
        feeds[ACTION_NAME] = np.asarray(actions, np.int32)
        return self._split(self.step_session.run(None, feeds))
