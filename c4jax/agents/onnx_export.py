"""ONNX export of a network agent's scores, checked against the JAX agent (docs/guide/export.md).

The graph (:func:`signature`, ``B`` dynamic) returns ``scores`` ``float32[B, num_actions]``: from
``boards`` alone on an :func:`on_boards` game (exactly ``agent.scores``), else from ``observations``
and ``legal_action_mask`` (``scores_states`` without search); an AlphaZero agent exports its raw
network, with ``value=True`` also its value head ``value`` ``float32[B]``. It assumes legal, unfinished
positions. jax2onnx traces the agent's own ``_scores``; onnxruntime runs the check; both are the
``onnx`` extra, imported only when needed. Only a process's first conversion is guaranteed the
smallest graph (later ones may use ``GatherND``, with the same scores).
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from c4jax import games
from c4jax._version import __version__
from c4jax.agents.guided import GuidedSearchAgent
from c4jax.agents.network import NetworkAgent
from c4jax.agents.network_search import AlphaZeroAgent, evaluate
from c4jax.agents.onnx_opsets import DEFAULT_OPSET
from c4jax.agents.policy import ILLEGAL_SCORE, masked_logits
from c4jax.games import base as game_base
from c4jax.io import atomic

INSTALL_HINT = "pip install -e '.[onnx]'"
TOLERANCE = 1e-4  # largest |ONNX - JAX| allowed on finite scores
SHARE_MIN_BYTES = 1024  # the smallest tensor share_initializers stores once for several models
INPUT_NAME, OUTPUT_NAME = "boards", "scores"  # the input of an on_boards game's graph; every game's output
VALUE_NAME = "value"  # the second output of an AlphaZero graph exported with value=True
OBSERVATIONS_NAME, LEGAL_NAME = "observations", "legal_action_mask"  # the inputs of the other games' graphs


class OnnxUnavailable(ImportError):
    """jax2onnx / onnx / onnxruntime is not installed."""


def import_extra(module: str):
    """Import one of the ``onnx`` extra's modules, or raise a one-line :class:`OnnxUnavailable`."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise OnnxUnavailable(f"ONNX export needs the 'onnx' extra ({module} is missing: {e}); "
                              f"install it with: {INSTALL_HINT}") from None


def require() -> None:
    """Raise a one-line :class:`OnnxUnavailable` unless jax2onnx, onnx and onnxruntime import."""
    for module in ("jax2onnx", "onnx", "onnxruntime"):
        import_extra(module)


def exportable(agent: Any) -> NetworkAgent | AlphaZeroAgent:
    """The agent whose ``scores`` the graph computes: a network agent as it is, an AlphaZero agent's
    raw network, a guided search's network (``ppo@200`` exports ``ppo``); ``ValueError`` for any other."""
    if isinstance(agent, NetworkAgent):
        return agent
    if isinstance(agent, AlphaZeroAgent):  # a Q network has no sampled mode of its own
        return dataclasses.replace(agent, num_simulations=0, solve=False,
                                   deterministic=agent.deterministic or agent.output == "q")
    if isinstance(agent, GuidedSearchAgent) and isinstance(agent.network, NetworkAgent):
        return agent.network
    name = getattr(agent, "name", type(agent).__name__)
    raise ValueError(f"agent {name!r} is not a network agent: only trained networks (supervised, DQN, Dueling DQN, "
                     "REINFORCE, PPO, AlphaZero) can be exported to ONNX")


@dataclasses.dataclass(frozen=True)
class Tensor:
    """One input or output of the graph: its name, element type and shape after the batch axis."""

    name: str
    dtype: str
    shape: tuple[int, ...]

    def describe(self) -> str:
        return f"{self.name} {self.dtype}{_dims(self)}"


def on_boards(game) -> bool:
    """Whether the graph of ``game``'s agents takes observations alone (the kit has ``playable`` and
    ``observation_legal``)."""
    kit = games.kit_of(game)
    return kit.playable is not None and kit.observation_legal is not None


def check_positions(game, key: Array, n: int):
    """``n`` legal, unfinished positions of ``game`` as :func:`feeds` takes them: observations (of the
    kit's random starts where it has them) for an :func:`on_boards` game, else states of random play."""
    start = games.kit_of(game).random_start
    if not on_boards(game) or start is None:
        states = random_positions(game, key, n)
        return jax.vmap(game.observe)(states) if on_boards(game) else states
    return jax.jit(lambda k: jax.vmap(game.observe)(jax.vmap(start)(jax.random.split(k, n))))(key)


def signature(agent: Any) -> tuple[tuple[Tensor, ...], Tensor]:
    """The graph's inputs and output for ``exportable(agent)`` (module docstring), from its game."""
    game = exportable(agent).game
    scores = Tensor(OUTPUT_NAME, "float32", (game.num_actions,))
    observation = jax.eval_shape(lambda: game.observe(game.init()))
    if on_boards(game):
        return (Tensor(INPUT_NAME, str(observation.dtype), tuple(game.observation_shape)),), scores
    return (Tensor(OBSERVATIONS_NAME, str(observation.dtype), tuple(game.observation_shape)),
            Tensor(LEGAL_NAME, "bool", (game.num_actions,))), scores


def describe(agent: Any) -> str:
    """The graph's signature in words: ``boards int8[B, 6, 7] -> scores float32[B, 7]``."""
    inputs, output = signature(agent)
    return f"{', '.join(t.describe() for t in inputs)} -> {output.describe()}"


def metadata(agent: NetworkAgent | AlphaZeroAgent) -> dict[str, str]:
    """The model's ``metadata_props``: the agent's name and settings (all strings)."""
    if isinstance(agent, AlphaZeroAgent) and agent.output == "q":
        settings = {
            "kind": "network",
            "heads": "two",
            "output": "q",
            "symmetric": "false",
            "note": (f"the raw network's Q-values, what agents.load('{agent.label}') scores; a search with it "
                     f"({agent.label}@<N>, softmax(Q) as its prior) is not part of the graph"),
        }
    elif isinstance(agent, AlphaZeroAgent):
        settings = {
            "kind": "alphazero",
            "heads": "two",
            "output": "policy",
            "symmetric": "false",
            "note": (f"the raw network's policy, what agents.load('{agent.label}@0') scores; the search of the "
                     "AlphaZero agent is not part of the graph"),
        }
    elif isinstance(agent, NetworkAgent):
        settings = {"kind": "network", "heads": agent.heads, "output": agent.output,
                    "symmetric": str(agent.symmetric).lower()}
    else:
        raise ValueError(f"not an exportable agent: {agent!r}")
    out = "probabilities" if settings["output"] == "policy" else "Q-values"
    game = agent.game
    (first, *more), scores = signature(agent)
    if on_boards(game):
        io = {"input": (f"{first.name}: {first.dtype}{_dims(first)}, row 0 on top, 1 = player to move, -1 = opponent, "
                        "0 = empty; legal unfinished positions"),
              "output_description": (f"{scores.name}: {scores.dtype}{_dims(scores)}, the agent's {out} per column, "
                                     "-inf on full columns")}
    else:
        io = {"game": game.id,
              "input": (f"{first.name}: {first.dtype}{_dims(first)}, the {game.id} observation of the player to move "
                        f"(c4jax.games.make({game.id!r}).observe); {more[0].name}: {more[0].dtype}{_dims(more[0])}, "
                        "the actions legal there; legal unfinished positions"),
              "output_description": (f"{scores.name}: {scores.dtype}{_dims(scores)}, the agent's {out} per action, "
                                     "-inf on illegal actions")}
    return {
        "agent": agent.name,
        "label": agent.label,
        **settings,
        "width": str(agent.width),
        **({"tower": "x".join(map(str, agent.tower))} if getattr(agent, "tower", ()) else {}),
        "c4jax_version": __version__,
        **io,
    }


def _dims(t: Tensor) -> str:
    return "[" + ", ".join(["B", *map(str, t.shape)]) + "]"


def _dedupe_initializers(model) -> None:
    """Keep one copy of identical constant tensors (in place): a symmetric agent's mirrored pass
    constant-folds its convolution kernels a second time."""
    numpy_helper = import_extra("onnx.numpy_helper")
    graph = model.graph
    outputs = {o.name for o in graph.output}
    if any(a.type in (a.GRAPH, a.GRAPHS) for n in graph.node for a in n.attribute):
        return  # subgraphs may refer to outer names; leave such graphs alone
    first: dict[tuple, str] = {}
    rename: dict[str, str] = {}
    keep = []
    for t in graph.initializer:
        key = (t.data_type, tuple(t.dims), numpy_helper.to_array(t).tobytes())
        if key in first and t.name not in outputs:
            rename[t.name] = first[key]
        else:
            first[key] = t.name
            keep.append(t)
    if not rename:
        return
    del graph.initializer[:]
    graph.initializer.extend(keep)
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name in rename:
                node.input[i] = rename[name]
    kept_info = [v for v in graph.value_info if v.name not in rename]
    del graph.value_info[:]
    graph.value_info.extend(kept_info)


def share_initializers(models: list, location: str, min_bytes: int = SHARE_MIN_BYTES) -> bytes:
    """Store once the parameter tensors that several of ``models`` hold alike (in place).

    An initializer of at least ``min_bytes`` equal (type, shape, bytes) to one of another model becomes
    ONNX external data in the file ``location`` (relative to the model's folder): returns that file's
    bytes, each tensor at a multiple of 64 bytes, or ``b""`` (models unchanged) when none is shared."""
    def key(t) -> tuple | None:
        if t.data_location == t.EXTERNAL or len(t.raw_data) < min_bytes:
            return None
        return (t.data_type, tuple(t.dims), t.raw_data)

    holders: dict[tuple, set[int]] = {}
    for i, model in enumerate(models):
        for t in model.graph.initializer:
            if (k := key(t)) is not None:
                holders.setdefault(k, set()).add(i)
    block = bytearray()
    where: dict[tuple, tuple[int, int]] = {}
    for k, held_by in holders.items():
        if len(held_by) > 1:
            block.extend(bytes(-len(block) % 64))
            where[k] = (len(block), len(k[2]))
            block.extend(k[2])
    external = import_extra("onnx.external_data_helper")
    for model in models:
        for t in model.graph.initializer:
            if (k := key(t)) in where:
                offset, length = where[k]
                external.set_external_data(t, location, offset, length)
                t.ClearField("raw_data")
    return bytes(block)


def strip_shape_info(model) -> None:
    """Drop the graph's ``value_info`` (intermediate shapes, inferred again by onnxruntime), in place."""
    del model.graph.value_info[:]


def _game_scores(agent: AlphaZeroAgent, observations: Array, legal: Array) -> Array:
    """float32[B, A]: the raw policy's probabilities (a Q network's Q-values), illegal ``-inf``."""
    return _game_scores_value(agent, observations, legal)[0]


def _game_scores_value(agent: AlphaZeroAgent, observations: Array, legal: Array) -> tuple[Array, Array]:
    """:func:`_game_scores` and the value head (float32[B]) of the same network pass."""
    logits, value = evaluate(agent.params, observations, agent.width, agent.tower, agent.game)[:2]
    scores = logits if agent.output == "q" else jax.nn.softmax(masked_logits(logits, legal), axis=-1)
    return jnp.where(legal, scores, ILLEGAL_SCORE), value


def _board_scores_value(agent: AlphaZeroAgent, boards: Array) -> tuple[Array, Array]:
    """An :func:`on_boards` game's ``agent._scores`` without search and the value head (float32[B])."""
    logits, value = evaluate(agent.params, boards, agent.width, agent.tower, agent.game)[:2]
    legal = games.kit_of(agent.game).observation_legal(boards)
    scores = logits if agent.output == "q" else jax.nn.softmax(logits, axis=-1)
    return jnp.where(legal, scores, ILLEGAL_SCORE), value


def to_model(agent: Any, *, opset: int = DEFAULT_OPSET, value: bool = False):
    """The ``onnx.ModelProto`` of ``exportable(agent)``'s scores (:func:`signature`, :func:`metadata`).
    ``value``: also return an AlphaZero agent's value head; ``ValueError`` for another agent."""
    agent = exportable(agent)
    if value and not isinstance(agent, AlphaZeroAgent):
        raise ValueError(f"agent {agent.name!r} has no value head to export: only AlphaZero networks do")
    jax2onnx = import_extra("jax2onnx")
    onnx = import_extra("onnx")
    # jax2onnx's serializer logs a warning per shape constant it leaves untyped; the graph is valid.
    logging.getLogger("onnx_ir.serde").setLevel(logging.ERROR)
    batch = jax.export.symbolic_shape("B")[0]
    inputs, output = signature(agent)
    specs = [jax.ShapeDtypeStruct((batch, *t.shape), jnp.dtype(t.dtype)) for t in inputs]
    if on_boards(agent.game):
        def fn(boards):
            return _board_scores_value(agent, boards) if value else agent._scores(boards)
        what = f"scores of {inputs[0].dtype}{_dims(inputs[0])} boards"
    else:
        def fn(observations, legal_action_mask):
            if value:
                return _game_scores_value(agent, observations, legal_action_mask)
            return _game_scores(agent, observations, legal_action_mask)
        what = f"{agent.game.id} scores of {', '.join(t.describe() for t in inputs)}"
    outputs = [output.name, VALUE_NAME] if value else [output.name]
    model = jax2onnx.to_onnx(fn, inputs=specs, model_name=agent.label, opset=opset,
                             input_names=[t.name for t in inputs], output_names=outputs)
    _dedupe_initializers(model)
    model.doc_string = (f"c4jax {agent.name}: {what} -> {output.dtype}{_dims(output)}"
                        + (f", {VALUE_NAME} float32[B] (the value head, in [-1, 1])" if value else ""))
    model.producer_name = "c4jax"
    model.producer_version = __version__
    props = metadata(agent)
    if value:
        props["value_output"] = f"{VALUE_NAME}: float32[B], the value head (tanh) for the player to move"
    onnx.helper.set_model_props(model, props)
    onnx.checker.check_model(model)
    return model


def from_bytes(data: bytes):
    """The ``onnx.ModelProto`` serialized in ``data`` (``model.SerializeToString()``)."""
    onnx = import_extra("onnx")
    return onnx.load_model_from_string(data)


def save(model, path: str | Path) -> Path:
    """Write ``model`` to ``path`` atomically (:func:`c4jax.io.atomic.write_atomic`)."""
    onnx = import_extra("onnx")
    return atomic.write_atomic(path, lambda f: onnx.save_model(model, f))


def read_metadata(path: str | Path) -> dict[str, str]:
    """The ``metadata_props`` of an ONNX file."""
    onnx = import_extra("onnx")
    return {p.key: p.value for p in onnx.load(str(path)).metadata_props}


random_positions = game_base.random_positions  # n random legal, unfinished positions of a game


def feeds(agent: Any, positions) -> dict[str, np.ndarray]:
    """The graph's inputs for ``positions`` of the agent's game (:func:`check_positions`): observations
    of an :func:`on_boards` game, another game's batch of states."""
    inputs, _ = signature(agent)
    game = exportable(agent).game
    if on_boards(game):
        return {inputs[0].name: np.asarray(positions, inputs[0].dtype)}
    observations = jax.jit(jax.vmap(game.observe))(positions)
    return {inputs[0].name: np.asarray(observations, inputs[0].dtype),
            inputs[1].name: np.asarray(positions.legal_action_mask, bool)}


def reference_scores(agent: Any, positions) -> np.ndarray:
    """What the graph must reproduce on ``positions`` (as :func:`feeds` takes them): the JAX agent's scores."""
    agent = exportable(agent)
    if on_boards(agent.game):
        return np.asarray(agent.scores(positions))
    return np.asarray(agent.scores_states(positions))


def onnx_scores(model_or_path, inputs) -> np.ndarray:
    """Run the exported graph with onnxruntime on CPU: ``float32[B, A]`` for its inputs (a dict of
    :func:`feeds`), or for an :func:`on_boards` game's observations given as one int8 array."""
    ort = import_extra("onnxruntime")
    src = str(model_or_path) if isinstance(model_or_path, (str, Path)) else model_or_path.SerializeToString()
    session = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    if not isinstance(inputs, dict):
        inputs = {INPUT_NAME: np.asarray(inputs, np.int8)}
    return session.run([OUTPUT_NAME], inputs)[0]


@dataclasses.dataclass(frozen=True)
class Comparison:
    """The ONNX graph's scores against the JAX agent's on the same boards."""

    boards: int  # how many boards were compared
    max_abs_diff: float  # largest |ONNX - JAX| over the entries finite in both (0.0: none)
    inf_mismatches: int  # entries -inf in one and not the other, or NaN / +inf in either
    argmax_mismatches: int  # boards whose ONNX best column scores more than tolerance below JAX's best
    tolerance: float = TOLERANCE  # the largest max_abs_diff that passes

    @property
    def ok(self) -> bool:
        return self.max_abs_diff <= self.tolerance and self.inf_mismatches == 0 and self.argmax_mismatches == 0

    def summary(self) -> str:
        return (f"{self.boards} boards: max |ONNX - JAX| on finite scores {self.max_abs_diff:.3g} "
                f"(tolerance {self.tolerance:g}), {self.inf_mismatches} -inf mismatches, "
                f"{self.argmax_mismatches} argmax mismatches")


def compare(reference, got, tolerance: float = TOLERANCE) -> Comparison:
    """Compare ``got`` (ONNX) with ``reference`` (the JAX agent's scores), both ``[B, num_actions]``."""
    ref, out = np.asarray(reference, np.float32), np.asarray(got, np.float32)
    if ref.shape != out.shape or ref.ndim != 2:
        raise ValueError(f"score shapes differ or are not [B, A]: JAX {ref.shape}, ONNX {out.shape}")
    ref_inf, out_inf = np.isneginf(ref), np.isneginf(out)
    finite = np.isfinite(ref) & np.isfinite(out)
    odd = np.isnan(ref) | np.isposinf(ref) | np.isnan(out) | np.isposinf(out)
    diff = float(np.abs(ref[finite] - out[finite]).max()) if finite.any() else 0.0
    return Comparison(
        boards=int(ref.shape[0]),
        max_abs_diff=diff,
        inf_mismatches=int(((ref_inf != out_inf) | odd).sum()),
        argmax_mismatches=int((np.take_along_axis(ref, out.argmax(axis=-1)[:, None], axis=-1)[:, 0]
                               < ref.max(axis=-1) - tolerance).sum()),
        tolerance=tolerance,
    )


def check(agent: Any, model_or_path, positions) -> Comparison:
    """Compare the ONNX graph with the JAX agent (:func:`reference_scores`) on legal, unfinished
    ``positions`` of its game (as :func:`feeds` takes them)."""
    return compare(reference_scores(agent, positions), onnx_scores(model_or_path, feeds(agent, positions)))
