"""The play UI's solver hint (``POST /api/hint``) and the perfect player in the menu, against the real
server in this process (``make_server`` on a free local port), with and without the solver extra."""

from __future__ import annotations

from pathlib import Path

import pytest

from c4jax.games.connect_four import perfect
from c4jax.play import server as play_server
from playserver import request, serving

STATIC = Path(play_server.__file__).resolve().parent / "static"
needs_solver = pytest.mark.skipif(not perfect.solver_available(), reason="needs the solver extra")


@pytest.fixture(scope="module")
def port():
    with serving(play_server.Catalogue(["random", "perfect"] if perfect.solver_available() else ["random"])) as p:
        yield p


@needs_solver
def test_hint_on_the_empty_board_and_an_immediate_win(port):
    status, info = request(port, "GET", "/api/agents")
    assert status == 200 and info["hint"]["available"] is True
    status, h = request(port, "POST", "/api/hint", {"moves": []})
    assert status == 200, h
    assert h["scores"] == [-2, -1, 0, 1, 0, -1, -2] and h["best"] == [3] and h["ply"] == 0
    assert h["outcomes"] == ["loss", "loss", "draw", "win", "draw", "loss", "loss"]
    status, h = request(port, "POST", "/api/hint", {"moves": [0, 0, 1, 1, 2, 2]})  # column 3 wins at once
    assert status == 200 and h["scores"][3] == 18 and h["best"] == [3] and h["ply"] == 6
    status, h = request(port, "POST", "/api/hint", {"moves": [3] * 6})  # column 3 full
    assert status == 200 and h["scores"][3] is None and h["outcomes"][3] is None and len(h["best"]) >= 1


@needs_solver
@pytest.mark.parametrize("body, message", [
    ({"moves": [0, 0, 1, 1, 2, 2, 3]}, "the game is over"),
    ({"moves": [9]}, "outside 0..6"),
    ({"moves": [3] * 7}, "column 3 is full"),
    ({"moves": "33"}, "'moves' must be a list"),
    ({"moves": [], "agent": "random"}, "unknown field"),
    ([1, 2], "must be a JSON object"),
])
def test_bad_hint_requests_get_400(port, body, message):
    status, data = request(port, "POST", "/api/hint", body)
    assert status == 400 and message in data["error"], data


@needs_solver
def test_the_perfect_player_is_on_the_menu_and_plays(port):
    status, info = request(port, "GET", "/api/agents")
    kinds = {a["name"]: a["kind"] for a in info["agents"]}
    assert kinds.get("perfect") == "perfect"
    status, g = request(port, "POST", "/api/move", {"agent": "perfect", "moves": [], "human_first": False})
    assert status == 200 and g["agent_move"] == 3 and g["positions"][0]["scores"] == [-2, -1, 0, 1, 0, -1, -2]
    assert "perfect" in play_server.Catalogue(["perfect"]).names()


def test_without_the_solver_the_ui_says_so_and_the_api_answers_409(port, monkeypatch):
    monkeypatch.setattr(perfect, "solver_available", lambda: False)
    status, info = request(port, "GET", "/api/agents")
    assert status == 200 and info["hint"] == {"available": False, "game": "connect_four",
                                         "message": f"no hint: {perfect.MISSING_SOLVER}"}
    status, data = request(port, "POST", "/api/hint", {"moves": []})
    assert status == 409 and data == {"error": perfect.MISSING_SOLVER}


def test_the_page_offers_the_hint_toggle_and_its_note():
    html = (STATIC / "index.html").read_text()
    js = "".join(p.read_text() for p in sorted(STATIC.glob("*.js")))
    assert 'data-testid="hint-toggle"' in html and 'data-testid="hint-note"' in html
    assert '"/api/hint"' in js and "info.hint" in js and "hint-${c}" in js
