"""Search agents in the play UI (pure MCTS ``mcts<N>``, AlphaZero checkpoints): on the menu with the
"search" kind, and every position carries each column's visit share and searched value (on Checkers,
each legal move's). Against the real server in this process (``make_server`` on a free local port)."""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path

import jax
import numpy as np
import pytest

from c4jax.agents import network_search
from c4jax.games.viewbase import number_json
from c4jax.agents.guided import guided
from c4jax.agents.network import NetworkAgent
from c4jax.io import checkpoint
from c4jax.nets.cnet import init_params
from c4jax.play import catalogue as play_catalogue
from c4jax.play import server as play_server
from browser import chromium_page, needs_browser
from playserver import request, serving
from c4jax import games as c4games

C4 = c4games.make(c4games.DEFAULT)

STATIC = Path(play_server.__file__).resolve().parent / "static"
MCTS = "mcts50:det"


def save_tiny_alphazero(directory: Path, simulations: int = 4) -> Path:
    """A width-8 two-headed CNET saved as a search agent, the way the AlphaZero trainer saves one."""
    meta = {"name": "tinyaz", "game": C4.id, "network": {"width": 8, "heads": "two"},
            "agent": {"output": "policy", "default_mode": "det", "symmetric": True,
                      "search": {"simulations": simulations}}}
    return checkpoint.save(directory, {"params": init_params(jax.random.key(0), width=8, heads="two")}, meta)


@pytest.fixture(scope="module")
def az_dir(tmp_path_factory) -> Path:
    return save_tiny_alphazero(tmp_path_factory.mktemp("ckpt") / "alphazero")


@pytest.fixture(scope="module")
def served(az_dir):
    cat = play_server.Catalogue(["random", "mcts50"], paths=[str(az_dir), f"{az_dir}@0"], game_agents={"checkers": []})
    with serving(cat) as port:
        yield cat, port


def post(port: int, agent: str, moves: list[int], human_first: bool, path: str = "/api/move") -> dict:
    status, data = request(port, "POST", path, {"agent": agent, "moves": moves, "human_first": human_first})
    assert status == 200, data
    return data


def check_search_position(pos: dict) -> None:
    """Shares sum to 1 over the free columns, values in [-1, 1] there, both null for full columns."""
    scores, values = pos["scores"], pos["values"]
    assert isinstance(values, list) and len(values) == 7 and len(scores) == 7
    if pos["status"] not in ("human_turn", "agent_turn"):
        assert scores == [None] * 7 and values == [None] * 7
        return
    for c in range(7):
        legal = c in pos["legal"]
        assert (scores[c] is not None) == legal and (values[c] is not None) == legal, (c, pos)
        if legal:
            assert math.isfinite(values[c]) and -1.0 <= values[c] <= 1.0 and 0.0 <= scores[c] <= 1.0
    assert abs(sum(x for x in scores if x is not None) - 1.0) < 1e-5


def test_default_menu_offers_mcts_and_a_shipped_search_checkpoint(monkeypatch, tmp_path):
    save_tiny_alphazero(tmp_path / "alphazero", simulations=6)
    monkeypatch.setenv("C4JAX_CHECKPOINTS", str(tmp_path))
    menu = play_catalogue.default_menu()
    assert {"mcts200", "mcts1000", "alphazero"} <= set(menu) and len(menu) == len(set(menu))
    cat = play_server.Catalogue(None)  # loads (no compile): every name of the default menu
    kinds = {e.name: e.kind for e in cat.entries.values()}
    for name in ("mcts200:sto", "mcts200:det", "mcts1000:sto", "mcts1000:det", "alphazero@6:det", "alphazero@6:sto"):
        assert kinds[name] == "search", (name, kinds)
    assert kinds["1steplA:det"] == "lookahead" and kinds["random"] == "random"
    assert cat.get("alphazero").name == "alphazero@6:det" and cat.get("MCTS200").name == "mcts200:det"
    labels = {e.name: e.scores_label for e in cat.entries.values()}
    assert "visit share" in labels["mcts200:det"] and "200-simulation" in labels["mcts200:det"]
    assert "searched value" in labels["mcts1000:sto"] and "AlphaZero" in labels["alphazero@6:det"]
    other = network_search.AlphaZeroAgent(params=init_params(jax.random.key(0), width=8, heads="two"), width=8, game=C4)
    assert other.describe_scores().kind == "search" and other.describe_scores().values  # a search with values
    q_net = NetworkAgent(params=init_params(jax.random.key(0), width=8, heads="one"), width=8, output="q", game=C4)
    kind, label, _ = guided(q_net, 50).describe_scores()  # a network guiding pure MCTS ("dqn@50")
    assert kind == "search" and "50-simulation search guided by the network's Q-values" in label


def test_agents_endpoint_describes_the_search_kinds(served, az_dir):
    _, port = served
    status, info = request(port, "GET", "/api/agents")
    assert status == 200
    kinds = {a["name"]: a["kind"] for a in info["agents"]}
    assert kinds[MCTS] == "search" and kinds["mcts50:sto"] == "search" and kinds["random"] == "random"
    assert kinds[f"{az_dir}@4:det"] == "search" and kinds[f"{az_dir}@policy:det"] == "policy"


def test_history_values_are_the_search_stats_and_null_for_full_columns(served):
    cat, port = served
    moves = [3, 3, 3, 3, 3, 3, 2]  # column 3 full from move 6 on
    view = post(port, MCTS, moves, human_first=True, path="/api/history")
    assert len(view["positions"]) == 8 and view["values"] == view["positions"][-1]["values"]
    agent = cat.get(MCTS).agent
    for pos in view["positions"]:
        check_search_position(pos)
        board = np.asarray(pos["board"]) * (1 if pos["to_move"] == "human" else -1)  # player-to-move view
        shares, values = (np.asarray(x)[0] for x in agent.search_stats(board[None].astype(np.int8)))
        assert pos["scores"] == number_json(shares) == number_json(agent.scores(board[None])[0])
        assert pos["values"] == number_json(values)
    assert view["positions"][6]["values"][3] is None and view["positions"][5]["values"][3] is not None


def test_a_winning_column_is_worth_plus_one_and_is_played(served):
    _, port = served
    view = post(port, MCTS, [3, 0, 3, 0, 3, 0], human_first=False)  # the agent (first) completes column 3
    before = view["positions"][0]
    assert before["to_move"] == "agent" and before["values"][3] == 1.0
    assert before["scores"][3] == max(x for x in before["scores"] if x is not None)
    assert view["agent_move"] == 3 and view["status"] == "agent_won" and view["values"] == [None] * 7


def test_a_whole_game_against_mcts50_det(served):
    _, port = served
    answers = [post(port, MCTS, [], human_first=True)]
    while answers[-1]["status"] == "human_turn":
        last = answers[-1]
        answers.append(post(port, MCTS, last["moves"] + [min(last["legal"])], human_first=True))
    for a in answers:
        for pos in a["positions"]:
            check_search_position(pos)
    final = answers[-1]
    assert final["status"] == "agent_won", final["moves"]  # the always-leftmost human loses
    again = [post(port, MCTS, a["moves"][:-1], human_first=True)["moves"] for a in answers[1:]]
    assert again == [a["moves"] for a in answers[1:]]  # :det answers the same game the same way


def test_alphazero_checkpoint_shows_its_values_and_its_raw_policy_none(served, az_dir):
    cat, port = served
    name = f"{az_dir}@4:det"
    view = post(port, name, [], human_first=False)
    assert view["agent_move"] is not None and len(view["positions"]) == 2
    for pos in view["positions"]:
        check_search_position(pos)
    first = view["positions"][0]
    shares, values = cat.get(name).agent.search_stats(np.zeros((1, 6, 7), np.int8))
    assert first["scores"] == number_json(shares[0]) and first["values"] == number_json(values[0])
    raw = post(port, f"{az_dir}@policy:det", [], human_first=False)
    assert all(p["values"] is None for p in raw["positions"]) and raw["values"] is None
    assert abs(sum(raw["positions"][0]["scores"]) - 1.0) < 1e-5


def test_other_agents_have_no_values(served):
    _, port = served
    view = post(port, "random", [3, 4], human_first=True, path="/api/history")
    assert all(p["values"] is None for p in view["positions"])


def test_a_search_agent_of_another_game_answers_with_its_values():
    """``/api/move`` for pure MCTS on Checkers: every position, the one before the agent's move and the
    one after it, carries a visit share and a searched value per legal move (the view lists legal moves
    only), a move no simulation visited worth 0; the answer's own ``values`` are its last position's."""
    name = "checkers/mcts2:det"  # two simulations: the cheapest search there is
    cat = play_server.Catalogue(["random"], game_agents={"checkers": [name]}, log=lambda *a: None)
    with serving(cat) as port:
        status, view = request(port, "POST", "/api/move", {"game": "checkers", "agent": name, "moves": [],
                                                           "human_first": False})
    assert status == 200, view
    assert view["agent"] == name and view["agent_move"] is not None and view["status"] == "human_turn"
    positions = view["positions"]
    assert [p["to_move"] for p in positions] == ["agent", "human"] and len(positions[0]["legal"]) == 7
    for pos in positions:
        shares, values = pos["scores"], pos["values"]
        assert isinstance(values, list) and len(values) == len(shares) == len(pos["legal"]) > 0, pos
        assert all(v is not None and math.isfinite(v) and -1.0 <= v <= 1.0 for v in values), values
        assert all(v == 0.0 for s, v in zip(shares, values) if s == 0.0), (shares, values)
        assert abs(sum(shares) - 1.0) < 1e-5 and sum(s > 0 for s in shares) <= 2  # two simulations
    assert view["values"] == positions[-1]["values"] and view["scores"] == positions[-1]["scores"]


def test_search_agents_compile_in_the_background(served):
    cat, _ = served  # the programs of these agents are compiled by now: this checks the bookkeeping
    fresh = play_server.Catalogue(["random", "mcts50"], game_agents={"checkers": []})  # Connect Four's menu only
    logged: list[str] = []
    fresh.warm_up(log=logged.append, workers=1)
    assert fresh.get("random").ready and fresh.background is not None
    fresh.background.join(timeout=120)
    assert fresh.get(MCTS).ready and fresh.get("mcts50:sto").ready
    assert any("in the background" in line for line in logged), logged
    assert fresh.get(MCTS).compile() is False  # once only
    now = play_server.Catalogue(["random"], game_agents={"checkers": []})
    now.warm_up(log=logged.append, search="now")
    assert now.background is None and now.get("random").ready
    with pytest.raises(ValueError, match="'now' or 'background'"):
        now.warm_up(search="lazy")


def test_the_page_renders_values_under_the_shares():
    js = "".join(p.read_text() for p in sorted(STATIC.glob("*.js")))
    css = (STATIC / "style.css").read_text()
    assert "value-${c}" in js and "pos.values" in js and 'kind === "search"' in js and ".value" in css


@pytest.mark.slow
def test_search_stats_batch_jit_and_full_columns(served, az_dir):
    """AlphaZero's search_stats: a batch gives each board its own answer, the same under a user's jit;
    shares are its scores; full columns -inf / NaN; no statistics without a search."""
    cat, _ = served
    agent = cat.get(f"{az_dir}@4:det").agent
    boards = np.zeros((3, 6, 7), np.int8)
    boards[1, 5, 3] = -1  # the first player's stone in column 3, seen by the second player
    boards[2, :, 3] = [-1, 1, -1, 1, -1, 1]  # column 3 full
    shares, values = (np.asarray(x) for x in agent.search_stats(boards))
    for b in range(3):
        one = [np.asarray(x)[0] for x in agent.search_stats(boards[b:b + 1])]
        np.testing.assert_allclose(one[0], shares[b], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(one[1], values[b], rtol=1e-5, atol=1e-6)
    jitted = [np.asarray(x) for x in jax.jit(agent.search_stats)(boards)]
    np.testing.assert_allclose(jitted[0], shares, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jitted[1], values, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(shares, np.asarray(agent.scores(boards)), rtol=1e-5, atol=1e-6)
    assert shares[2, 3] == -np.inf and np.isnan(values[2, 3])
    assert np.isfinite(values[[0, 1]]).all() and np.isfinite(np.delete(values[2], 3)).all()
    with pytest.raises(ValueError, match="no search statistics"):
        cat.get(f"{az_dir}@policy:det").agent.search_stats(boards)
    with pytest.raises(ValueError):
        agent.search_stats(np.zeros((6, 7), np.int8))  # not a batch


@pytest.mark.slow
@needs_browser()
def test_the_browser_shows_shares_and_values_for_search_agents_only(served, tmp_path):
    _, port = served
    with chromium_page(viewport={"width": 600, "height": 960}) as (pg, problems):
        pg.goto(f"http://127.0.0.1:{port}/")
        idle = '[data-testid=board][data-busy="false"]'
        pg.wait_for_selector(idle)
        pg.select_option("[data-testid=first-select]", "human")
        pg.wait_for_selector(idle)
        pg.select_option("[data-testid=agent-select]", MCTS)
        pg.wait_for_selector(idle)
        pg.keyboard.press("4")  # the human drops a piece in column 4; mcts50:det answers
        pg.wait_for_selector(idle)
        pg.wait_for_timeout(600)  # let the pieces land
        shares = [pg.text_content(f"[data-testid=score-{c}]") for c in range(7)]
        values = [pg.get_attribute(f"[data-testid=value-{c}]", "data-value") for c in range(7)]
        texts = [pg.text_content(f"[data-testid=value-{c}]") for c in range(7)]
        assert all(s.endswith("%") for s in shares), shares
        assert all(v and -1 <= float(v) <= 1 for v in values), values
        assert all(t == ("+" if float(v) > 0.005 else "") + f"{float(v):.2f}" for t, v in zip(texts, values))
        assert "searched value" in pg.inner_text("[data-testid=legend]")
        pg.screenshot(path=str(tmp_path / "search.png"))
        if os.environ.get("C4JAX_PLAY_SEARCH_SCREENSHOT"):  # a copy of the picture, to look at
            shutil.copy(tmp_path / "search.png", os.environ["C4JAX_PLAY_SEARCH_SCREENSHOT"])
        pg.select_option("[data-testid=agent-select]", "random")  # no values for other agents
        pg.wait_for_selector(idle)
        assert all(pg.text_content(f"[data-testid=value-{c}]") == "" for c in range(7))
        assert pg.get_attribute("[data-testid=score-0]", "y") == "58"
        assert not problems, problems
