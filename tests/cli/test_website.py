"""``c4jax export-web`` without a browser: the value output the page's search reads, the command's
user errors, and the built site's files (built once per test session, with npm; see export_web_site.py)."""

from __future__ import annotations

import hashlib
import json
import re
import sys

import jax
import numpy as np
import pytest

from export_web_site import NPM, SMALL, built_site, tiny_agent
from guide_games import registered  # the guide's example games

from c4jax import agents
from c4jax.cli import website
from c4jax import games as c4games

C4 = c4games.make(c4games.DEFAULT)

onnx_export = pytest.importorskip("c4jax.agents.onnx_export")
pytest.importorskip("jax2onnx")


def test_alphazero_graph_with_its_value_head():
    """``to_model(value=True)``: the same scores as the plain export, and the network's value."""
    import onnxruntime as ort

    from c4jax.agents.network_search import evaluate
    from c4jax.evaluation import random_boards

    agent = onnx_export.exportable(agents.load("alphazero"))
    boards = np.asarray(random_boards(jax.random.key(3), 64, C4), np.int8)
    model = onnx_export.to_model(agent, value=True)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    assert [o.name for o in session.get_outputs()] == ["scores", "value"]
    scores, value = session.run(None, {"boards": boards})
    assert onnx_export.compare(agent.scores(boards), scores).ok
    want = np.asarray(evaluate(agent.params, boards, agent.width, agent.tower, agent.game)[1])
    np.testing.assert_allclose(value, want, atol=1e-5)
    assert "value_output" in {p.key for p in model.metadata_props}


def test_only_alphazero_networks_export_a_value():
    with pytest.raises(ValueError, match="no value head"):
        onnx_export.to_model(agents.load("dqn"), value=True)


def test_shipped_agents_of_both_games():
    names = website.shipped_agents()
    assert {"supervised", "dqn", "alphazero", "checkers/alphazero"} <= set(names)
    assert names.index("alphazero") < names.index("checkers/alphazero")
    assert website.file_name("checkers/alphazero") == "models/checkers_alphazero.onnx"


def test_runtime_is_pinned_by_the_lockfile():
    package = json.loads((website.page_folder() / "package.json").read_text())
    assert package["dependencies"][website.RUNTIME_PACKAGE] == website.runtime_version()


@pytest.mark.parametrize("args,message", [
    (["--check-positions", "0"], "--check-positions must be positive"),
    (["--agents", "random"], "cannot export agent 'random'"),
    (["--agents", "nosuchagent"], "cannot export agent 'nosuchagent'"),
    (["--agents", "dqn", "dqn"], "names an agent twice"),
])
def test_bad_input_exits_2_with_one_line(args, message, tmp_path, capsys):
    from c4jax.cli import export_web

    with pytest.raises(SystemExit) as e:
        export_web.cli(["--out", str(tmp_path / "site"), *args])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and message in err[0], err
    assert not (tmp_path / "site").exists()


@pytest.fixture(scope="module")
def tic_tac_toe(tmp_path_factory):
    with registered(tmp_path_factory.mktemp("third_game"), "tictactoe", "tic_tac_toe") as game:
        yield game


def test_an_agent_of_a_game_the_page_cannot_draw_exits_2_with_one_line(tic_tac_toe, tmp_path, capsys, monkeypatch):
    """A game that rules.js does not write and whose view is no grid (here tic-tac-toe given Connect
    Four's view module): refused before anything is fetched or written."""
    from c4jax import games
    from c4jax.cli import export_web

    agent = tiny_agent(tmp_path / "ttt", tic_tac_toe)
    connect_four_view = games.view("connect_four")
    monkeypatch.setattr(games, "view", lambda g: connect_four_view if g == "tic_tac_toe" else None)
    with pytest.raises(SystemExit) as e:
        export_web.cli(["--out", str(tmp_path / "site"), "--agents", "dqn", str(agent)])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: the page cannot draw tic_tac_toe: it draws "), err
    assert not (tmp_path / "site").exists()


def test_a_grid_game_s_drawing(tic_tac_toe):
    assert website.grid_game("tic_tac_toe") == {"title": "Tic-tac-toe", "sides": ["X", "O"], "rows": 3, "cols": 3,
                                                "click": "cell", "planes": True}


def test_out_that_is_a_file_exits_2(tmp_path, capsys):
    from c4jax.cli import export_web

    (tmp_path / "f").write_text("x")
    with pytest.raises(SystemExit) as e:
        export_web.cli(["--out", str(tmp_path / "f")])
    assert e.value.code == 2 and "is a file" in capsys.readouterr().err


@pytest.mark.skipif(NPM is None, reason="building the site needs npm")
def test_built_site_is_self_contained():
    folder = built_site(SMALL)
    manifest = json.loads((folder / "agents.json").read_text())
    assert [a["name"] for a in manifest["agents"]] == list(SMALL)
    for a in manifest["agents"]:
        for f in [a, *a.get("data", [])]:
            assert hashlib.sha256((folder / f["file"]).read_bytes()).hexdigest() == f["sha256"]
        # every Checkers network plays as AlphaZero, and of Connect Four's the AlphaZero network
        assert ("search" in a) == (a["game"] == "checkers" or a["name"] == "alphazero")
    for name in website.PAGE_FILES:
        text = (folder / name).read_text()
        assert not re.search(r"(?:src|href|import|fetch)\W+(?:https?:)?//", text), name  # nothing outside the folder
    assert all((folder / "ort" / f).is_file() for f in website.RUNTIME_FILES)
    size = website.site_size(folder)
    assert size["models"] < 8 * 2**20 and size["total"] < 30 * 2**20


@pytest.mark.slow
def test_site_converts_each_model_in_a_fresh_process():
    """One worker converting the same agent twice gives the same bytes, its im2col slices ``Slice``
    nodes: each conversion is the first of its process (jax2onnx 0.17 may lower them to ``GatherND``
    index arithmetic in a process's later conversions)."""
    agent = onnx_export.exportable(agents.load("supervised"))
    first, second = website.export_models([("supervised", agent)] * 2, workers=1)
    assert first.SerializeToString() == second.SerializeToString()
    ops = {n.op_type for n in second.graph.node}
    assert "Slice" in ops and "GatherND" not in ops, ops


def test_export_models_without_jax2onnx_is_one_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "jax2onnx", None)  # import jax2onnx now raises ImportError
    with pytest.raises(onnx_export.OnnxUnavailable, match="onnx' extra"):
        website.export_models([("supervised", onnx_export.exportable(agents.load("supervised")))])


def _tiny_model(weight: np.ndarray, bias: np.ndarray):
    import onnx
    from onnx import helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["y"])], "tiny",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [None, weight.shape[0]])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [None, weight.shape[1]])],
        [numpy_helper.from_array(weight, "w"), numpy_helper.from_array(bias, "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_share_initializers_stores_a_common_tensor_once(tmp_path):
    """Two models with the same weight matrix and different biases: the matrix goes once into the
    shared block (external data), the biases stay inside; onnxruntime computes what it did before."""
    import onnxruntime as ort

    rng = np.random.default_rng(0)
    w = rng.standard_normal((32, 16)).astype(np.float32)  # 2 KiB, shared
    other = rng.standard_normal((32, 16)).astype(np.float32)  # 2 KiB, in one model only
    models = [_tiny_model(w, np.full(16, i, np.float32)) for i in range(2)] + [_tiny_model(other, np.zeros(16, np.float32))]
    x = rng.standard_normal((3, 32)).astype(np.float32)
    want = [x @ m_w + b for m_w, b in [(w, 0.0), (w, 1.0), (other, 0.0)]]
    block = onnx_export.share_initializers(models, "shared.bin")
    assert block == w.tobytes()
    (tmp_path / "shared.bin").write_bytes(block)
    for i, m in enumerate(models):
        external = [t.name for t in m.graph.initializer if t.data_location == t.EXTERNAL]
        assert external == (["w"] if i < 2 else [])
        onnx_export.save(m, tmp_path / f"m{i}.onnx")
        got = ort.InferenceSession(str(tmp_path / f"m{i}.onnx"), providers=["CPUExecutionProvider"]).run(
            None, {"x": x})[0]
        np.testing.assert_allclose(got, want[i], rtol=1e-5, atol=1e-5)
    assert onnx_export.share_initializers([_tiny_model(w, w[0, :16]), _tiny_model(other, w[0, :16])], "s") == b""


@pytest.mark.skipif(NPM is None, reason="building the site needs npm")
def test_site_stores_the_frozen_convolutions_once():
    """``supervised`` and ``dqn`` (fine-tuned from it with frozen convolutions) refer to one shared
    weights file of Connect Four; the Checkers agent, alone in its game, keeps its weights inside."""
    folder = built_site(SMALL)
    entries = {a["name"]: a for a in json.loads((folder / "agents.json").read_text())["agents"]}
    shared = [d["file"] for d in entries["dqn"]["data"]]
    assert shared == [website.shared_file("connect_four")] and entries["supervised"]["data"] == entries["dqn"]["data"]
    assert "data" not in entries["checkers/dqn"]
    assert (folder / shared[0]).stat().st_size >= 256 * 2**10  # the two convolutions' kernels, 272 KiB


@pytest.mark.slow
@pytest.mark.skipif(NPM is None, reason="building the site needs npm")
def test_site_models_of_every_shipped_agent_total_at_most_5_mb():
    folder = built_site()
    assert website.site_size(folder)["models"] <= 5_000_000


def test_a_search_without_proven_values_is_refused_and_its_raw_network_offers_no_search(tmp_path):
    """The page's search is PUCT with proven values: a Gumbel MuZero search (``@Nnosolve``, or a checkpoint saved
    without ``solve``) is refused with one line naming what the page can play, and the raw network of a checkpoint
    saved without ``solve`` is offered without a search (``@N`` of it is a Gumbel search in JAX)."""
    game = c4games.make("connect_four")
    with_proofs, without = tiny_agent(tmp_path / "solve", game), tiny_agent(tmp_path / "nosolve", game, solve=False)
    for name in (f"{with_proofs}@8nosolve", f"{without}@8"):
        with pytest.raises(website.SiteError, match=r"Gumbel MuZero.*@8solve .*@0"):
            website.load_agent(name)
    entries = {}
    for path, name in ((with_proofs, f"{with_proofs}@8"), (with_proofs, str(with_proofs)), (without, str(without))):
        agent, exported = website.load_agent(name)
        entries[name] = website.entry(name, agent, exported, "models/x.onnx", "0" * 64).get("search")
    assert entries[f"{with_proofs}@8"]["simulations"] == 8 and entries[f"{with_proofs}@8"]["solve"] is True
    assert entries[str(with_proofs)]["simulations"] == 0  # the slider offers the search that agents.load plays
    assert entries[str(without)] is None
