"""ONNX export of a network agent's ``scores`` (design.md §8), checked against the JAX agent.

The exported graph maps public boards ``int8[B, 6, 7]`` (row 0 on top, 1 = the player to
move, -1 = the opponent, 0 = empty; ``B`` dynamic) to ``float32[B, 7]``: exactly what the
agent's ``scores(boards)`` returns, i.e. probabilities for policy agents, Q-values for DQN
agents, the mirror averaging of design.md §7 when the agent uses it, and ``-inf`` on full
columns. An AlphaZero agent exports its raw network's policy (what ``agents.load("<az>@0")``
scores); the search is not part of the graph. Like ``scores``, the graph assumes legal,
unfinished positions and does not check them.

The conversion is jax2onnx tracing the agent's own jitted ``_scores`` (no second copy of the
network); onnxruntime runs the check. Both come with the ``onnx`` extra and are imported only
inside the functions that need them, never by ``import c4jax``.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from c4jax._version import __version__
from c4jax.agents.guided import GuidedSearchAgent
from c4jax.agents.network import NetworkAgent
from c4jax.agents.network_search import AlphaZeroAgent
from c4jax.io import atomic

INSTALL_HINT = "pip install -e '.[onnx]'"
TOLERANCE = 1e-4  # largest |ONNX - JAX| allowed on finite scores
DEFAULT_OPSET = 21
INPUT_NAME, OUTPUT_NAME = "boards", "scores"


class OnnxUnavailable(ImportError):
    """jax2onnx / onnx / onnxruntime is not installed."""


def _require(module: str):
    """Import one of the ``onnx`` extra's modules, or raise a one-line :class:`OnnxUnavailable`."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise OnnxUnavailable(f"ONNX export needs the 'onnx' extra ({module} is missing: {e}); "
                              f"install it with: {INSTALL_HINT}") from None


def exportable(agent: Any) -> NetworkAgent | AlphaZeroAgent:
    """The agent whose ``scores`` the ONNX graph computes: a network agent as it is, an
    AlphaZero agent without its search (its raw policy, ``num_simulations = 0``), the network that
    guides a search at play time (``ppo@200`` exports ``ppo``).

    Raises ``ValueError`` for any other agent (baselines, pure MCTS, the perfect player).
    """
    if isinstance(agent, NetworkAgent):
        return agent
    if isinstance(agent, AlphaZeroAgent):
        return dataclasses.replace(agent, num_simulations=0)
    if isinstance(agent, GuidedSearchAgent) and isinstance(agent.network, NetworkAgent):
        return agent.network
    name = getattr(agent, "name", type(agent).__name__)
    raise ValueError(f"agent {name!r} is not a network agent: only trained networks (supervised, DQN, Dueling DQN, "
                     "REINFORCE, PPO, AlphaZero) can be exported to ONNX")


def metadata(agent: NetworkAgent | AlphaZeroAgent) -> dict[str, str]:
    """The model's ``metadata_props``: the agent's name and settings (all strings)."""
    if isinstance(agent, AlphaZeroAgent):
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
    return {
        "agent": agent.name,
        "label": agent.label,
        **settings,
        "width": str(agent.width),
        **({"tower": "x".join(map(str, agent.tower))} if getattr(agent, "tower", ()) else {}),
        "c4jax_version": __version__,
        "input": (f"{INPUT_NAME}: int8[B, 6, 7], row 0 on top, 1 = player to move, -1 = opponent, 0 = empty; "
                  "legal unfinished positions"),
        "output_description": f"{OUTPUT_NAME}: float32[B, 7], the agent's {out} per column, -inf on full columns",
    }


def _load_plugins() -> None:
    """Register only jax2onnx's JAX and Flax plugins, the ones CNET needs.

    By default jax2onnx imports every plugin on its first conversion, examples included (several
    build and run Equinox models at import time): 17 s of a 19 s first export on a busy 2-core CPU,
    against 1.7 s for the JAX and Flax plugins alone.
    This reaches into jax2onnx's plugin discovery (``_import_tree``, ``_already_imported_plugins``,
    stable within the pinned range); if those are gone the default discovery runs instead. Later
    jax2onnx conversions in the same process see the same two plugin trees. Every export is
    checked against the JAX agent anyway (:func:`check`).
    """
    try:
        from jax2onnx.plugins import plugin_system as ps
    except ImportError:
        return
    import_tree = getattr(ps, "_import_tree", None)
    if import_tree is None or getattr(ps, "_already_imported_plugins", None) is not False:
        return
    root = Path(ps.__file__).parent
    for tree in ("jax", "flax"):
        import_tree(root / tree, f"jax2onnx.plugins.{tree}")
    ps._already_imported_plugins = True


def _dedupe_initializers(model) -> None:
    """Keep one copy of identical constant tensors (in place).

    Tracing the mirrored pass of a symmetric agent constant-folds the reshaped convolution kernels a
    second time, which would store them twice (~27% of the file at width 128)."""
    numpy_helper = _require("onnx.numpy_helper")
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


def to_model(agent: Any, *, opset: int = DEFAULT_OPSET):
    """The ``onnx.ModelProto`` of ``exportable(agent).scores``: input ``boards`` int8[B, 6, 7],
    output ``scores`` float32[B, 7], the :func:`metadata` in ``metadata_props``."""
    agent = exportable(agent)
    jax2onnx = _require("jax2onnx")
    onnx = _require("onnx")
    # jax2onnx's serializer logs a warning per shape constant it leaves untyped; the graph is valid.
    logging.getLogger("onnx_ir.serde").setLevel(logging.ERROR)
    _load_plugins()
    batch = jax.export.symbolic_shape("B")[0]
    spec = jax.ShapeDtypeStruct((batch, 6, 7), jnp.int8)
    model = jax2onnx.to_onnx(lambda boards: agent._scores(boards), inputs=[spec], model_name=agent.label,
                             opset=opset, input_names=[INPUT_NAME], output_names=[OUTPUT_NAME])
    _dedupe_initializers(model)
    model.doc_string = f"c4jax {agent.name}: scores of int8[B, 6, 7] boards -> float32[B, 7]"
    model.producer_name = "c4jax"
    model.producer_version = __version__
    onnx.helper.set_model_props(model, metadata(agent))
    onnx.checker.check_model(model)
    return model


def save(model, path: str | Path) -> Path:
    """Write ``model`` to ``path`` atomically (:func:`c4jax.io.atomic.write_atomic`)."""
    onnx = _require("onnx")
    return atomic.write_atomic(path, lambda f: onnx.save_model(model, f))


def read_metadata(path: str | Path) -> dict[str, str]:
    """The ``metadata_props`` of an ONNX file."""
    onnx = _require("onnx")
    return {p.key: p.value for p in onnx.load(str(path)).metadata_props}


def onnx_scores(model_or_path, boards) -> np.ndarray:
    """Run the exported graph with onnxruntime on CPU: ``float32[B, 7]`` for ``int8[B, 6, 7]`` boards."""
    ort = _require("onnxruntime")
    src = str(model_or_path) if isinstance(model_or_path, (str, Path)) else model_or_path.SerializeToString()
    session = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    return session.run([OUTPUT_NAME], {INPUT_NAME: np.asarray(boards, np.int8)})[0]


@dataclasses.dataclass(frozen=True)
class Comparison:
    """The ONNX graph's scores against the JAX agent's on the same boards."""

    boards: int
    """How many boards were compared."""
    max_abs_diff: float
    """Largest |ONNX - JAX| over the entries finite in both (0.0 when there are none)."""
    inf_mismatches: int
    """Entries that are -inf in one and not in the other, or non-finite other than -inf in either."""
    argmax_mismatches: int
    """Boards whose ONNX best column scores more than ``tolerance`` below the JAX best column (near-ties,
    e.g. two saturated probabilities, are not mismatches)."""
    tolerance: float = TOLERANCE
    """The largest max_abs_diff that passes."""

    @property
    def ok(self) -> bool:
        return self.max_abs_diff <= self.tolerance and self.inf_mismatches == 0 and self.argmax_mismatches == 0

    def summary(self) -> str:
        return (f"{self.boards} boards: max |ONNX - JAX| on finite scores {self.max_abs_diff:.3g} "
                f"(tolerance {self.tolerance:g}), {self.inf_mismatches} -inf mismatches, "
                f"{self.argmax_mismatches} argmax mismatches")


def compare(reference, got, tolerance: float = TOLERANCE) -> Comparison:
    """Compare ``got`` (ONNX) with ``reference`` (the JAX agent's ``scores``), both ``[B, 7]``."""
    ref, out = np.asarray(reference, np.float32), np.asarray(got, np.float32)
    if ref.shape != out.shape or ref.ndim != 2:
        raise ValueError(f"score shapes differ or are not [B, 7]: JAX {ref.shape}, ONNX {out.shape}")
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


def check(agent: Any, model_or_path, boards) -> Comparison:
    """Compare the ONNX graph with ``exportable(agent).scores`` on ``boards`` (legal, unfinished)."""
    reference = np.asarray(exportable(agent).scores(boards))
    return compare(reference, onnx_scores(model_or_path, boards))
