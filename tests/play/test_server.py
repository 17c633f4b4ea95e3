"""The play UI's HTTP API, against the real server (``python -m c4jax.play``) on a free local port.

Whole games against Random, 1StepLA and the supervised network through HTTP; every kind of bad
input gets a 4xx JSON error while the server keeps serving and other games are unaffected.
"""

from __future__ import annotations

import http.client
import json
import random
import re
import socket
import statistics
import subprocess
import sys
import tomllib

import numpy as np
import pytest

from playprocess import PlayServer
from scripts import ROOT

SERVED_AGENTS = "random,1steplA,supervised"


# --------------------------------------------------------------------------- the server

@pytest.fixture(scope="module")
def server():
    srv = PlayServer("--agents", SERVED_AGENTS)
    yield srv
    srv.stop()


def request(server, method: str, path: str, body=None, raw: bytes | None = None, headers=None):
    """(status, parsed JSON or None, response headers) of one request on a fresh connection."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        hdrs = {"Content-Type": "application/json"} if data is not None else {}
        hdrs.update(headers or {})
        conn.request(method, path, body=data, headers=hdrs)
        res = conn.getresponse()
        payload = res.read()
        ctype = res.getheader("Content-Type", "")
        parsed = json.loads(payload) if ctype.startswith("application/json") else payload
        return res.status, parsed, dict(res.getheaders())
    finally:
        conn.close()


def raw_exchange(server, data: bytes) -> str:
    """Send raw bytes on a socket; everything the server answers until it closes."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as conn:
        conn.sendall(data)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks).decode()


def move(server, agent, moves, human_first, path="/api/move"):
    status, data, _ = request(server, "POST", path, {"agent": agent, "moves": moves, "human_first": human_first})
    assert status == 200, data
    return data


def play_game(server, agent, human_first, pick):
    """Play one game through HTTP; ``pick(answer)`` chooses the human's column. Returns all answers."""
    answers = [move(server, agent, [], human_first)]
    while answers[-1]["status"] == "human_turn":
        last = answers[-1]
        answers.append(move(server, agent, last["moves"] + [pick(last)], human_first))
    return answers


# --------------------------------------------------------------------------- the agents on offer

def test_agents_endpoint_lists_the_served_agents_with_their_modes(server):
    status, data, headers = request(server, "GET", "/api/agents")
    assert status == 200 and headers["Content-Type"].startswith("application/json")
    names = [a["name"] for a in data["agents"]]
    assert names == ["random", "1steplA:det", "1steplA:sto", "supervised:det", "supervised:sto"]
    assert data["default"] == "1steplA:det"
    kinds = {a["name"]: a["kind"] for a in data["agents"]}
    assert kinds == {"random": "random", "1steplA:det": "lookahead", "1steplA:sto": "lookahead",
                     "supervised:det": "policy", "supervised:sto": "policy"}
    stochastic = {a["name"]: a["stochastic"] for a in data["agents"]}
    assert stochastic["random"] and stochastic["supervised:sto"] and not stochastic["1steplA:det"]
    assert all(a["scores_label"] for a in data["agents"])


def test_the_menu_holds_every_agent_that_agents_load_knows_and_checkpoint_paths():
    from c4jax import agents
    from c4jax.play.server import Catalogue

    cat = Catalogue(paths=[str(ROOT / "checkpoints" / "supervised")])
    names = cat.names()
    for n in range(1, 5):
        assert f"{n}steplA:det" in names and f"{n}steplA:sto" in names
    assert names.count("random") == 1 and not any(n.startswith("random:") for n in names)
    for shipped in agents.known_names():  # the trained agents as they land in checkpoints/
        assert any(n.split(":")[0].split("@")[0] == shipped for n in names), shipped  # search agents: name@N
    assert "supervised:det" in names and "supervised:sto" in names
    path = str(ROOT / "checkpoints" / "supervised")
    assert f"{path}:det" in names and f"{path}:sto" in names
    assert cat.get("SUPERVISED").name == "supervised:det"  # default mode, case-insensitive
    assert cat.get(path).name == f"{path}:det"


# --------------------------------------------------------------------------- whole games

@pytest.mark.parametrize("agent", ["random", "1steplA:det", "supervised:sto"])
@pytest.mark.parametrize("human_first", [True, False])
def test_whole_games_through_http(server, agent, human_first):
    rng = random.Random(f"{agent}/{human_first}")
    answers = play_game(server, agent, human_first, lambda a: rng.choice(a["legal"]))
    final = answers[-1]
    assert final["status"] in ("human_won", "agent_won", "draw")
    assert final["legal"] == [] and final["to_move"] is None and final["scores"] == [None] * 7
    moves = final["moves"]
    # the history endpoint rebuilds the same positions the game went through
    hist = move(server, agent, moves, human_first, path="/api/history")
    assert [p["ply"] for p in hist["positions"]] == list(range(len(moves) + 1))
    assert hist["moves"] == moves and hist["agent_move"] is None and hist["status"] == final["status"]
    seen = {p["ply"]: p for a in answers for p in a["positions"]}
    assert sorted(seen) == list(range(len(moves) + 1))
    for p in hist["positions"]:
        q = seen[p["ply"]]
        assert p["board"] == q["board"] and p["status"] == q["status"] and p["legal"] == q["legal"]
        np.testing.assert_allclose(np.array(p["scores"], float), np.array(q["scores"], float), rtol=1e-6)
    # boards are in a fixed colour view: 1 = human, -1 = agent; whoever moves at ply k
    board = np.zeros((6, 7), int)
    for k, col in enumerate(moves):
        human = (k % 2 == 0) == human_first
        row = max(r for r in range(6) if board[r, col] == 0)
        board[row, col] = 1 if human else -1
        pos = seen[k + 1]
        assert pos["board"] == board.tolist() and pos["last_move"] == col
        assert pos["to_move"] in (None, "agent" if human else "human")
    # each answer: the human's position, then the agent's reply (or the end)
    for a in answers:
        assert a["positions"][-1]["board"] == a["board"] and a["positions"][-1]["status"] == a["status"]
        if a["agent_move"] is not None:
            assert a["positions"][-2]["status"] == "agent_turn"
            assert a["positions"][-1]["last_move"] == a["agent_move"]
            assert 0 <= a["agent_ms"] < 5_000
    if final["status"] != "draw":
        assert len(final["winning_cells"]) >= 4
        winner = 1 if final["status"] == "human_won" else -1
        assert all(final["board"][r][c] == winner for r, c in final["winning_cells"])


def test_1steplA_beats_random_play_and_answers_like_the_agent_itself(server):
    import jax

    from c4jax import agents
    from c4jax.games.connect_four import env

    rng = random.Random(7)
    answers = play_game(server, "1steplA", True, lambda a: rng.choice(a["legal"]))
    assert answers[-1]["status"] == "agent_won"  # 1StepLA beats a random player ~99%
    a1 = agents.load("1steplA:det")
    for a in answers[1:]:
        if a["agent_move"] is None:
            continue
        state = env.init()
        for m in a["moves"][:-1]:
            state = env.step(state, m)
        board = np.asarray(env.observe(state))[None]
        assert a["agent_move"] == int(a1.act(board, jax.random.key(0))[0])
        scores = np.asarray(a1.scores(board))[0]
        got = np.array([np.nan if s is None else s for s in a["positions"][-2]["scores"]])
        np.testing.assert_allclose(got[np.isfinite(scores)], scores[np.isfinite(scores)], rtol=1e-6)
        assert np.isnan(got[~np.isfinite(scores)]).all()
        break  # one position is enough: the rest is the same code path


def test_scores_are_shown_on_the_humans_turn_too(server):
    a = move(server, "supervised:det", [], False)
    assert a["agent_move"] is not None and a["status"] == "human_turn"
    human_pos = a["positions"][-1]
    assert human_pos["to_move"] == "human"
    probs = np.array(human_pos["scores"], float)
    assert np.isfinite(probs).all() and abs(probs.sum() - 1) < 1e-4  # policy probabilities
    full = move(server, "1steplA:det", [0, 0, 0, 0, 0, 1, 0], True, path="/api/history")  # column 0 full
    last = full["positions"][-1]
    assert last["scores"][0] is None and all(s is not None for s in last["scores"][1:])
    assert 0 not in last["legal"]


def test_network_agent_answers_within_100_ms(server):
    times = []
    rng = random.Random(3)
    for human_first in (True, False):
        for a in play_game(server, "supervised:det", human_first, lambda a: rng.choice(a["legal"])):
            if a["agent_ms"] is not None:
                times.append(a["agent_ms"])
    assert len(times) >= 6
    assert statistics.median(times) <= 100, times


# --------------------------------------------------------------------------- bad input

BAD_BODIES = [
    ({"agent": "1steplA", "moves": [7], "human_first": True}, "outside 0..6"),
    ({"agent": "1steplA", "moves": [-1], "human_first": True}, "outside 0..6"),
    ({"agent": "1steplA", "moves": [2] * 7, "human_first": True}, "column 2 is full"),
    ({"agent": "1steplA", "moves": [0, 1, 0, 1, 0, 1, 0, 1], "human_first": True}, "already over"),
    ({"agent": "1steplA", "moves": "3", "human_first": True}, "must be a list"),
    ({"agent": "1steplA", "moves": {"0": 3}, "human_first": True}, "must be a list"),
    ({"agent": "1steplA", "moves": ["3"], "human_first": True}, "integers"),
    ({"agent": "1steplA", "moves": [3.0], "human_first": True}, "integers"),
    ({"agent": "1steplA", "moves": [True], "human_first": True}, "integers"),
    ({"agent": "1steplA", "moves": [None], "human_first": True}, "integers"),
    ({"agent": "1steplA", "moves": [[3]], "human_first": True}, "integers"),
    ({"agent": "1steplA", "moves": [10**30], "human_first": True}, "outside 0..6"),
    ({"agent": "1steplA", "moves": [3] * 43, "human_first": True}, "at most 42"),
    ({"agent": "1steplA", "moves": []}, "human_first"),
    ({"agent": "1steplA", "moves": [], "human_first": "yes"}, "human_first"),
    ({"agent": "nobody", "moves": [], "human_first": True}, "unknown agent 'nobody'; known agents: random, 1steplA:det"),
    ({"agent": "4steplA", "moves": [], "human_first": True}, "unknown agent"),  # not served here
    ({"agent": 3, "moves": [], "human_first": True}, "'agent' must be"),
    ({"moves": [], "human_first": True}, "missing field 'agent'"),
    ({"agent": "random", "moves": [], "human_first": True, "board": []}, "unknown field"),
    ([1, 2, 3], "JSON object"),
    ("hello", "JSON object"),
    (None, "JSON object"),
]


@pytest.mark.parametrize("path", ["/api/move", "/api/history"])
@pytest.mark.parametrize("body,message", BAD_BODIES, ids=[str(i) for i in range(len(BAD_BODIES))])
def test_bad_game_requests_get_400_with_a_json_error(server, path, body, message):
    status, data, headers = request(server, "POST", path, raw=json.dumps(body).encode())
    assert status == 400, data
    assert headers["Content-Type"].startswith("application/json")
    assert set(data) == {"error"} and message in data["error"], data["error"]


@pytest.mark.parametrize("raw,message", [
    (b"{bad json", "not valid JSON"),
    (b"", "not valid JSON"),
    (b'{"agent": "random", "moves": [NaN], "human_first": true}', "not valid JSON"),
    (b'{"agent": "random", "moves": [Infinity], "human_first": true}', "not valid JSON"),
    (b"\xff\xfe\x00garbage", "not valid JSON"),
    (b"agent=random&moves=3", "not valid JSON"),
])
def test_non_json_bodies_get_400(server, raw, message):
    status, data, _ = request(server, "POST", "/api/move", raw=raw)
    assert status == 400 and message in data["error"], data


def test_oversized_body_gets_413(server):
    body = json.dumps({"agent": "random", "moves": [], "human_first": True, "pad": "x" * 9000}).encode()
    status, data, _ = request(server, "POST", "/api/move", raw=body)
    assert status == 413 and "limit" in data["error"]
    # a lying Content-Length is refused before anything is read
    reply = raw_exchange(server, b"POST /api/move HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: 1000000000\r\n\r\n{")
    assert reply.startswith("HTTP/1.1 413") and '"error"' in reply


@pytest.mark.parametrize("head,status", [
    (b"POST /api/move HTTP/1.1\r\nHost: x\r\n\r\n", 411),  # no Content-Length
    (b"POST /api/move HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 411),
    (b"POST /api/move HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n", 400),
    (b"POST /api/move HTTP/1.1\r\nHost: x\r\nContent-Length: many\r\n\r\n", 400),
])
def test_bad_content_length_gets_4xx(server, head, status):
    reply = raw_exchange(server, head)
    assert reply.startswith(f"HTTP/1.1 {status}") and '"error"' in reply, reply


@pytest.mark.parametrize("method,path,status", [
    ("GET", "/api/nothing", 404),
    ("POST", "/api/nothing", 404),
    ("GET", "/static/../server.py", 404),
    ("GET", "/static/nope.js", 404),
    ("GET", "/api/move", 404),
    ("PUT", "/api/move", 405),
    ("DELETE", "/api/agents", 405),
])
def test_unknown_paths_and_methods(server, method, path, status):
    got, data, _ = request(server, method, path, body={"agent": "random"} if method != "GET" else None)
    assert got == status and "error" in data


def test_the_server_survives_bad_input_and_other_games_are_unaffected(server):
    # a game in progress ...
    game = move(server, "1steplA:det", [3], True)
    before = game["moves"]
    # ... a burst of bad requests from another client, some on one kept-alive connection ...
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    for body, _ in BAD_BODIES[:8]:
        conn.request("POST", "/api/move", body=json.dumps(body), headers={"Content-Type": "application/json"})
        res = conn.getresponse()
        assert res.status == 400 and "error" in json.loads(res.read())
        if res.getheader("Connection", "").lower() == "close":
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.close()
    for _ in range(3):
        request(server, "POST", "/api/move", raw=b"x" * 10_000)
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
        s.sendall(b"POST /api/move HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{\"agent\"")  # hangs up early
    # ... and the game goes on exactly as before (1steplA:det is deterministic)
    again = move(server, "1steplA:det", [3], True)
    assert again["moves"] == before and again["positions"] == game["positions"]
    nxt = move(server, "1steplA:det", before + [next(c for c in game["legal"])], True)
    assert nxt["status"] in ("human_turn", "human_won", "agent_won", "draw")
    assert server.alive()
    assert request(server, "GET", "/api/agents")[0] == 200


def test_concurrent_games_do_not_interfere(server):
    from concurrent.futures import ThreadPoolExecutor

    def game(seed):  # deterministic: 1steplA:det against a seeded random player
        rng = random.Random(seed)
        return play_game(server, "1steplA:det", seed % 2 == 0, lambda a: rng.choice(a["legal"]))[-1]["moves"]

    seeds = list(range(8))
    alone = [game(s) for s in seeds]
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(game, seeds))
    assert together == alone


# --------------------------------------------------------------------------- page and CLI

def test_the_page_and_its_assets_are_served_without_external_resources(server):
    status, html, headers = request(server, "GET", "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    html = html.decode()
    for testid in ("agent-select", "first-select", "restart", "status", "board", "back", "forward", "legend"):
        assert f'data-testid="{testid}"' in html
    found = re.findall(r'(?:src|href)="([^"]+)"', html)
    # the page's own files, relative (the static site puts the same page at its root) or none (data:)
    assets = [a for a in found if a != "data:,"]
    assert assets and all(a.startswith("static/") for a in assets), found
    for asset in assets:
        got, body, hdrs = request(server, "GET", "/" + asset)
        assert got == 200 and len(body) > 100
        text = body.decode()
        external = {u for u in re.findall(r"https?://[^\s\"'`)]+", text)  # the SVG namespace, and the
                    if u != "http://www.w3.org/2000/svg" and not u.startswith("http://localhost:")}  # advice to serve it
        assert not external, (asset, external)
    assert "default-src 'self'" in headers["Content-Security-Policy"]


def test_cli_help_port_check_and_console_script(capsys):
    """``python -m c4jax.play --help`` in its own process; the refusals (exit 2 before any port is bound)
    from the same ``main`` in this process (test_a_busy_port_is_reported runs one in its own process)."""
    from c4jax.play import __main__ as play_main

    res = subprocess.run([sys.executable, "-m", "c4jax.play", "--help"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0 and all(flag in res.stdout for flag in ("--port", "--open", "--agent", "--warm", "--keep"))
    for argv, says in ((["--port", "70000"], "--port"),
                       (["--port", "0", "--agents", "random,nobody"], "unknown agent 'nobody'"),
                       (["--port", "0", "--agents", "random", "nobody2"], "unknown agent 'nobody2'"),
                       (["--port", "0", "--agents", "random", "--agent", str(ROOT / "no" / "such" / "checkpoint")],
                        "cannot load the agents"),
                       (["--port", "0", "--agents", "random", "--warm", "random,nobody"], "cannot warm up 'nobody'"),
                       (["--port", "0", "--warm", "all", "random"], "--warm takes 'default', 'all' or agent names"),
                       (["--port", "0", "--keep", "-1"], "--keep must be >= 0")):
        with pytest.raises(SystemExit) as e:
            play_main.main(argv)
        assert e.value.code == 2 and says in capsys.readouterr().err, argv
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["c4jax-play"] == "c4jax.play.__main__:main"


def test_a_busy_port_is_reported(server):
    res = subprocess.run([sys.executable, "-m", "c4jax.play", "--port", str(server.port), "--agents", "random"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and f"cannot listen on 127.0.0.1:{server.port}" in res.stderr
