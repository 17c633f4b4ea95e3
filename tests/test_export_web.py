"""``c4jax export-web`` without a browser: the value output the page's search reads, the command's
user errors, and the built site's files (built once per process, with npm; see export_web_site.py)."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from export_web_site import NPM, SMALL, built_site  # noqa: E402

from c4jax import agents  # noqa: E402
from c4jax.cli import website  # noqa: E402

onnx_export = pytest.importorskip("c4jax.agents.onnx_export")
pytest.importorskip("jax2onnx")


def test_alphazero_graph_with_its_value_head():
    """``to_model(value=True)``: the same scores as the plain export, and the network's value."""
    import onnxruntime as ort

    from c4jax.agents.network_search import evaluate
    from c4jax.evaluation import random_boards

    agent = onnx_export.exportable(agents.load("alphazero"))
    boards = np.asarray(random_boards(jax.random.key(3), 64), np.int8)
    model = onnx_export.to_model(agent, value=True)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    assert [o.name for o in session.get_outputs()] == ["scores", "value"]
    scores, value = session.run(None, {"boards": boards})
    assert onnx_export.compare(agent.scores(boards), scores).ok
    want = np.asarray(evaluate(agent.params, boards, agent.width, agent.tower)[1])
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
        assert hashlib.sha256((folder / a["file"]).read_bytes()).hexdigest() == a["sha256"]
        assert ("search" in a) == (a["game"] == "checkers")  # every Checkers network plays as AlphaZero
    for name in website.PAGE_FILES:
        text = (folder / name).read_text()
        assert not re.search(r"(?:src|href|import|fetch)\W+(?:https?:)?//", text), name  # nothing outside the folder
    assert all((folder / "ort" / f).is_file() for f in website.RUNTIME_FILES)
    size = website.site_size(folder)
    assert size["models"] < 8 * 2**20 and size["total"] < 30 * 2**20
