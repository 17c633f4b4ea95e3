"""Checkers in the play UI: ``"game": "checkers"`` requests against the real server in
this process (``make_server`` on a free local port). Whole games against Random through HTTP, multi-jumps
as consecutive moves of the same side (the human's and the agent's), every kind of bad request a 400
with a message naming the move in PDN and its ply, the draws' reasons, and Connect Four requests
answered exactly as before. The page itself in Chromium when it is installed."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import jax
import numpy as np
import pytest

from c4jax import agents
from c4jax.agents.baselines import RandomAgent
from c4jax.games.checkers import env as ck_env
from c4jax.games.checkers import notation
from c4jax.games.checkers import view as ck_view
from c4jax.games import DEFAULT, with_views
from c4jax.games.checkers.game import GAME, Checkers
from c4jax.play import server as play_server
from browser import chromium_page, needs_browser
from playserver import request, serving
from c4jax import games as c4games

C4 = c4games.make(c4games.DEFAULT)

STATIC = Path(play_server.__file__).resolve().parent / "static"
_step = jax.jit(GAME.step)

# Random games found with seeded random play (the tests check each premise before using it).
HUMAN_MULTI_JUMP = "9-13 21-17 5-9 23-18 10-14 17x10 7x14 14x23"  # black's 7x14x23 at plies 6-7
AGENT_MULTI_JUMP = "11-16 22-18 7-11 18-15 11x18 23x14 14x7"  # white's forced 23x14x7 at plies 5-6
REPETITION = (  # 72 plies: the last position occurs for the third time
    "9-14 23-19 6-9 21-17 14x21 22-18 1-6 25-22 9-13 22-17 13x22 26x17 5-9 29-25 10-15 19x10 10x1 11-15 "
    "18x11 8x15 24-19 15x24 27x20 3-8 28-24 7-10 30-26 21x30 17-14 10x17 26-23 9-14 31-26 17-21 23-19 30x23 "
    "23x16 20x11 8x15 1-5 4-8 5-1 2-6 1x10 10x17 8-11 17-13 15-18 24-19 11-16 32-28 16x23 13-17 18-22 17x26 "
    "26x19 21-25 19-15 25-29 15-19 12-16 19x12 29-25 28-24 25-21 12-8 21-25 8-12 25-29 12-16 29-25 16-12")


def states_of(actions: list[int]) -> list:
    """The states of a game (position 0 .. len(actions)), host side."""
    states = [jax.device_get(GAME.init())]
    for a in actions:
        states.append(jax.device_get(_step(states[-1], a)))
    return states


def actions_of(pdn: str) -> list[int]:
    """The actions of a game written as single steps and jumps in PDN, replayed from the start."""
    actions, state = [], jax.device_get(GAME.init())
    for name in pdn.split():
        actions.append(notation.pdn_to_action(state, name))
        state = jax.device_get(_step(state, actions[-1]))
    return actions


@pytest.fixture(scope="module")
def port():
    with serving(play_server.Catalogue(["random", "1steplA"])) as p:
        yield p


def post(port: int, moves: list[int], human_first: bool, path: str = "/api/move", agent: str = "random") -> dict:
    status, data = request(port, "POST", path, {"game": "checkers", "agent": agent, "moves": moves,
                                                "human_first": human_first})
    assert status == 200, data
    return data


def render_grid(state, human_player: int) -> list[list[int]]:
    """The board of :func:`notation.render` (square 1 top left, white at the bottom) as the API's
    view: +1 / +2 the human's man / king, -1 / -2 the agent's; turned by 180 degrees for black."""
    values = {"b": (0, 1), "B": (0, 2), "w": (1, 1), "W": (1, 2)}
    grid = []
    for line in notation.render(state).splitlines()[:8]:
        cells = line.ljust(15)[::2]
        grid.append([0 if ch not in values else values[ch][1] * (1 if values[ch][0] == human_player else -1)
                     for ch in cells])
    return grid if human_player == 1 else [row[::-1] for row in grid[::-1]]


# --------------------------------------------------------------------------- the menu

def test_the_agents_endpoint_offers_checkers_with_its_own_menu(port):
    status, info = request(port, "GET", "/api/agents")
    assert status == 200
    assert [a["name"] for a in info["agents"]] == ["random", "1steplA:det", "1steplA:sto"]  # Connect Four, as before
    assert info["default"] == "1steplA:det"
    games = {g["id"]: g for g in info["games"]}
    assert list(games) == list(with_views())  # random plays every game that has a page
    assert games["connect_four"]["agents"] == info["agents"] and games["connect_four"]["max_moves"] == 42
    ck = games["checkers"]
    assert ck["name"] == "Checkers" and ck["default"] == "checkers/random" and ck["max_moves"] == GAME.max_steps
    assert [a["name"] for a in ck["agents"]] == ["checkers/random"]  # 1StepLA reads Connect Four boards only
    assert ck["agents"][0]["kind"] == "random" and "legal move" in ck["agents"][0]["scores_label"]


def test_only_agents_without_learned_parameters_switch_games():
    assert agents.for_game(RandomAgent(game=C4), GAME).game == GAME
    assert agents.for_game(agents.load("1steplA"), GAME) is None
    assert not play_server.Catalogue(["1steplA"]).menu("checkers").entries  # no opponent: Checkers is not offered
    with pytest.raises(ValueError, match="cannot play Checkers"):
        play_server.Catalogue(["random"], game_agents={"checkers": ["2steplA"]})
    cat = play_server.Catalogue(["1steplA"], game_agents={"checkers": ["random"]})
    assert cat.games() == [g for g in with_views() if g in (DEFAULT, "checkers") or cat.menu(g).entries]
    assert cat.get("RANDOM", "checkers").game == "checkers"
    with pytest.raises(play_server.RequestError, match="not served here"):
        play_server.Catalogue(["1steplA"]).get("random", "checkers")


def test_the_menu_names_are_those_agents_load_takes_and_the_old_ones_still_play(port):
    status, info = request(port, "GET", "/api/agents")
    ck = next(g for g in info["games"] if g["id"] == "checkers")
    for a in ck["agents"]:
        assert agents.canonical_name(agents.load(a["name"])) == a["name"]
    for name in ("checkers/random", "random", "Checkers/Random"):
        assert post(port, [], False, agent=name)["agent"] == "checkers/random", name


# --------------------------------------------------------------------------- whole games

@pytest.mark.parametrize("human_first", [True, False])
def test_a_whole_game_against_random_through_http(port, human_first):
    rng = random.Random(f"checkers/{human_first}")
    human = 0 if human_first else 1
    answers = [post(port, [], human_first)]
    while answers[-1]["status"] == "human_turn":
        last = answers[-1]
        answers.append(post(port, last["moves"] + [rng.choice(last["legal"])], human_first))
        assert len(answers) < GAME.max_steps
    final = answers[-1]
    assert final["status"] in ("human_won", "agent_won", "draw")
    assert final["legal"] == [] and final["to_move"] is None and final["scores"] == []
    moves = final["moves"]
    states = states_of(moves)
    end = states[-1]
    assert bool(end.terminated | end.truncated)
    reward = float(end.rewards[human])
    assert final["status"] == ("human_won" if reward > 0 else "agent_won" if reward < 0 else "draw")
    assert final["pdn"] == [notation.action_to_pdn(s, a) for s, a in zip(states, moves)]

    # every answer: the request's last position, then one position per agent move, the agent's
    # moves all by the player to move until the human is to move again (or the game is over)
    for before, a in zip(answers, answers[1:]):
        n = len(before["moves"]) + 1
        assert [p["ply"] for p in a["positions"]] == list(range(n, len(a["moves"]) + 1))
        assert a["moves"][n:] == a["agent_moves"] and a["agent_move"] == (a["agent_moves"] or [None])[0]
        for p in a["positions"][1:]:
            assert p["last_move"]["by"] == "agent"
        assert a["status"] in ("human_turn", "human_won", "agent_won", "draw")

    # /api/history rebuilds every position; they agree with an independent replay
    hist = post(port, moves, human_first, path="/api/history")
    assert [p["ply"] for p in hist["positions"]] == list(range(len(moves) + 1)) and hist["agent_moves"] == []
    seen = {p["ply"]: p for a in answers for p in a["positions"]}
    for p, state in zip(hist["positions"], states):
        assert p["board"] == seen[p["ply"]]["board"] == render_grid(state, human), p["ply"]
        player = int(state.current_player)
        mask = np.asarray(state.legal_action_mask)
        if p["status"] in ("human_turn", "agent_turn"):
            assert p["to_move"] == ("human" if player == human else "agent")
            assert p["side"] == notation.PLAYER_NAMES[player]
            assert p["legal"] == np.flatnonzero(mask).tolist()
            assert [m["pdn"] for m in p["legal_moves"]] == list(notation.legal_moves(state))
            assert p["scores"] == pytest.approx([1 / len(p["legal"])] * len(p["legal"]), rel=1e-6)
        assert p["fen"] == notation.to_fen(state)
    # cells: a move goes from the piece's cell to an empty one in the human's view
    for k, p in enumerate(hist["positions"][1:]):
        before, m = hist["positions"][k]["board"], p["last_move"]
        assert m["action"] == moves[k] and before[m["from"][0]][m["from"][1]] != 0
        assert before[m["to"][0]][m["to"][1]] == 0 and p["board"][m["to"][0]][m["to"][1]] != 0
        if m["captured"]:
            assert p["board"][m["captured"][0]][m["captured"][1]] == 0 != before[m["captured"][0]][m["captured"][1]]
    # the record joins each multi-jump into one move and covers every ply once
    covered = [k for r in final["record"] for k in range(r["plies"][0], r["plies"][1] + 1)]
    assert covered == list(range(len(moves)))
    assert final["record"][0]["number"] == 1 and final["record"][0]["side"] == "black"
    # the human's pieces are at the bottom of the view at the start
    start = hist["positions"][0]["board"]
    assert all(v == -1 for row in start[:3] for v in row if v) and all(v == 1 for row in start[5:] for v in row if v)
    assert sum(v != 0 for row in start for v in row) == 24


def test_a_human_multi_jump_is_two_moves_of_the_same_side(port):
    actions = actions_of(HUMAN_MULTI_JUMP)
    states = states_of(actions)
    assert [int(s.current_player) for s in states[6:9]] == [0, 0, 1]  # premise: black jumps twice in a row
    # the first jump: black (the human) must go on; the agent does not move
    a = post(port, actions[:7], human_first=True)
    assert a["agent_moves"] == [] and a["agent_move"] is None and a["agent_ms"] is None
    assert a["status"] == "human_turn" and a["to_move"] == "human"
    pos = a["positions"][-1]
    assert pos["side"] == "black" and [m["pdn"] for m in pos["legal_moves"]] == ["14x23"]
    assert pos["jumper"] == pos["legal_moves"][0]["from"] == pos["last_move"]["to"]
    assert pos["last_move"]["pdn"] == "7x14" and pos["last_move"]["by"] == "human" and pos["last_move"]["captured"]
    assert a["record"][-1] == {"number": 4, "side": "black", "by": "human", "text": "7x14", "plies": [6, 6]}
    # the second jump ends black's move: now the agent plays white
    b = post(port, actions[:8], human_first=True)
    assert len(b["agent_moves"]) >= 1 and b["positions"][0]["last_move"]["pdn"] == "14x23"
    assert b["record"][6] == {"number": 4, "side": "black", "by": "human", "text": "7x14x23", "plies": [6, 7]}
    assert b["record"][7]["side"] == "white" and b["record"][7]["by"] == "agent"


def test_the_agent_plays_every_jump_of_its_multi_jump_in_one_answer(port):
    actions = actions_of(AGENT_MULTI_JUMP)
    states = states_of(actions)
    assert [int(s.current_player) for s in states[5:8]] == [1, 1, 0]  # premise: white jumps twice in a row,
    assert [int(np.asarray(s.legal_action_mask).sum()) for s in states[5:7]] == [1, 1]  # each the only move
    a = post(port, actions[:5], human_first=True)
    assert a["agent_moves"] == actions[5:7] and a["agent_move"] == actions[5]
    assert [p["status"] for p in a["positions"]] == ["agent_turn", "agent_turn", "human_turn"]
    assert [p["side"] for p in a["positions"]] == ["white", "white", "black"]
    assert a["positions"][1]["jumper"] == a["positions"][1]["last_move"]["to"]
    assert a["record"][-1] == {"number": 3, "side": "white", "by": "agent", "text": "23x14x7", "plies": [5, 6]}
    assert a["pdn"][-2:] == ["23x14", "14x7"]


def test_the_agent_moves_first_when_the_human_plays_white(port):
    a = post(port, [], human_first=False)
    assert a["human_side"] == "white" and len(a["moves"]) == 1 == len(a["agent_moves"])
    assert a["status"] == "human_turn" and a["positions"][-1]["side"] == "white"
    assert a["squares"][7][0] == 29 and a["squares"][0][7] == 4  # white's view: the printed diagram
    assert post(port, [], human_first=True)["squares"][7][0] == 4  # black's: turned around
    assert a["record"] == [{"number": 1, "side": "black", "by": "agent", "text": a["pdn"][0], "plies": [0, 0]}]


# --------------------------------------------------------------------------- draws

def test_a_threefold_repetition_is_a_draw_and_nothing_follows_it(port):
    actions = actions_of(REPETITION)
    end = states_of(actions)[-1]
    assert bool(end.terminated) and float(end.rewards[0]) == 0 and int(end.quiet) < 100  # premise
    h = post(port, actions, True, path="/api/history")
    assert h["status"] == "draw" and h["draw_reason"] == "repetition" and h["positions"][-1]["to_move"] is None
    assert all(p["draw_reason"] is None for p in h["positions"][:-1])
    m = post(port, actions, False)
    assert m["agent_moves"] == [] and m["status"] == "draw"
    status, data = request(port, "POST", "/api/move", {"game": "checkers", "agent": "random",
                                                        "moves": actions + [actions[-2]], "human_first": True})
    assert status == 400 and "ply 72" in data["error"] and "already over after 72 plies" in data["error"]
    assert "threefold repetition" in data["error"], data


def test_the_fifty_move_rule_and_the_cap_are_told_apart():
    kings = notation.from_fen("B:WK29:BK4")
    a = notation.pdn_to_action(kings, "4-8")
    quiet = jax.device_get(_step(kings.replace(quiet=np.int32(99)), a))
    assert bool(quiet.terminated) and int(quiet.quiet) == 100
    assert ck_view.outcome(quiet, 0) == ("draw", "fifty_moves")
    short = Checkers(rules=ck_env.Rules(max_steps=2))
    s = short.init()
    for _ in range(2):
        s = short.step(s, int(np.flatnonzero(np.asarray(s.legal_action_mask))[0]))
    assert bool(s.truncated) and ck_view.outcome(jax.device_get(s), 1) == ("draw", "cap")
    won = notation.from_fen("W:W18:B14")  # white to move must take 18x9 and black has nothing left
    after = jax.device_get(_step(won, notation.pdn_to_action(won, "18x9")))
    assert bool(after.terminated)
    assert ck_view.outcome(after, 1) == ("human_won", None)
    assert ck_view.outcome(after, 0) == ("agent_won", None)


# --------------------------------------------------------------------------- bad requests

START_ILLEGAL = notation.pdn_to_action(GAME.init(), "1-5")

BAD = [
    ({"moves": [256]}, "illegal move at ply 0: action 256 is outside 0..255"),
    ({"moves": [185, -1]}, "illegal move at ply 1: action -1 is outside 0..255"),
    ({"moves": ["11-15"]}, "move at ply 0 is \"11-15\"; Checkers moves must be integers 0..255"),
    ({"moves": [True]}, "integers 0..255"),
    ({"moves": [3.0]}, "integers 0..255"),
    ({"moves": "9-13"}, "'moves' must be a list of Checkers actions"),
    ({"moves": [185] * (GAME.max_steps + 1)}, f"a Checkers game has at most {GAME.max_steps} plies"),
    ({"moves": [START_ILLEGAL]}, f"illegal move at ply 0: 1-5 (action {START_ILLEGAL}) is not legal for black; "
                                 "legal moves: 12-16, 11-16, 11-15, 10-15, 10-14, 9-14, 9-13"),
    ({"moves": [0]}, "illegal move at ply 0: action 0 (off the board) is not legal for black"),
    ({"moves": "human"}, "'moves' must be a list"),
    ({"agent": "1steplA"}, "unknown agent '1steplA'; known Checkers agents: checkers/random"),
    ({"agent": 7}, "'agent' must be a non-empty string; known Checkers agents: checkers/random"),
    ({"agent": "checkers/mcts200"}, "unknown agent 'checkers/mcts200'; known Checkers agents: checkers/random"),
    ({"human_first": None}, "'human_first' must be true or false"),
    ({"game": "chess"}, f"unknown game \"chess\"; games: {', '.join(with_views())}"),  # Random plays them all
    ({"game": 3}, "unknown game 3"),
    ({"game": None}, "unknown game null"),
    ({"variant": "pool"}, "unknown field(s): 'variant'"),
]


@pytest.mark.parametrize("path", ["/api/move", "/api/history"])
@pytest.mark.parametrize("fields,message", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_checkers_requests_get_400_with_a_clear_message(port, path, fields, message):
    body = {"game": "checkers", "agent": "random", "moves": [], "human_first": True, **fields}
    status, data = request(port, "POST", path, body)
    assert status == 400 and set(data) == {"error"}, data
    assert message in data["error"], data["error"]


def test_a_step_when_a_jump_is_mandatory_and_a_stop_in_a_multi_jump_are_refused(port):
    actions = actions_of(HUMAN_MULTI_JUMP)
    state6 = states_of(actions[:6])[-1]
    step = notation.pdn_to_action(state6, "11-15")
    status, data = request(port, "POST", "/api/move", {"game": "checkers", "agent": "random",
                                                        "moves": actions[:6] + [step], "human_first": True})
    assert status == 400 and data["error"].startswith(f"illegal move at ply 6: 11-15 (action {step}) is not legal "
                                                      "for black (a jump is mandatory); legal moves: "), data
    assert "7x14" in data["error"]
    state7 = states_of(actions[:7])[-1]
    other = notation.pdn_to_action(state7, "11-15")
    status, data = request(port, "POST", "/api/move", {"game": "checkers", "agent": "random",
                                                        "moves": actions[:7] + [other], "human_first": True})
    assert status == 400 and data["error"] == (f"illegal move at ply 7: 11-15 (action {other}) is not legal for "
                                               "black (14 must jump on); legal moves: 14x23"), data


# --------------------------------------------------------------------------- Connect Four unchanged

def test_connect_four_requests_are_answered_as_before(port):
    body = {"agent": "1steplA:det", "moves": [3, 3], "human_first": True}
    status, plain = request(port, "POST", "/api/move", body)
    status2, named = request(port, "POST", "/api/move", {**body, "game": "connect_four"})
    assert status == status2 == 200
    plain.pop("server_ms"), named.pop("server_ms")
    assert plain == named
    assert set(plain) == {"agent", "human_first", "moves", "agent_move", "agent_ms", "status", "to_move", "board",
                          "legal", "scores", "values", "winning_cells", "positions"}
    # a Connect Four column list is not a Checkers game, and the reverse
    status, data = request(port, "POST", "/api/move", {**body, "moves": [185]})
    assert status == 400 and "outside 0..6" in data["error"]


# --------------------------------------------------------------------------- the page

def test_the_page_has_a_game_menu_and_draws_every_game_from_its_description():
    html = (STATIC / "index.html").read_text()
    js = "".join(p.read_text() for p in sorted(STATIC.glob("*.js")))
    for testid in ("game-select", "board", "move-list"):
        assert f'data-testid="{testid}"' in html
    assert "current_player" not in js  # turns come from the server's positions
    for name in ("checkers", "connect_four", "Checkers", "Connect Four", "PDN"):  # the page names no game
        assert name not in js and name not in html, name
    assert "legal_moves" in js and "draw_reason" in js
    assert {"fifty_moves", "repetition", "cap"} <= set(ck_view.PAGE["texts"]["draw"])  # Checkers' draws: its view's


@needs_browser()
def test_checkers_in_the_browser(port, tmp_path):
    from playwright.sync_api import expect  # a `test` extra dependency

    with chromium_page(viewport={"width": 600, "height": 1100}) as (pg, problems):
        pg.goto(f"http://127.0.0.1:{port}/")
        pg.wait_for_selector('[data-testid=board][data-busy="false"]')  # Connect Four first, as before
        assert pg.get_attribute("[data-testid=board]", "data-game") == "connect_four"
        idle = '[data-testid=board][data-game=checkers][data-busy="false"]'
        pg.select_option("[data-testid=first-select]", "human")
        pg.wait_for_selector('[data-testid=board][data-busy="false"]')
        pg.select_option("[data-testid=game-select]", "checkers")
        pg.wait_for_selector(idle)
        assert pg.locator("[data-testid=col-0]").count() == 0  # the Connect Four board is gone
        status = pg.locator("[data-testid=status]")
        expect(status).to_have_text("Your turn (black) — click a piece, then where it goes.")
        assert pg.locator("[data-testid^=piece-]").count() == 24
        assert pg.locator(".piece.movable").count() == 4  # 9, 10, 11, 12 can move
        for _ in range(6):  # click the first movable piece, then its first target
            if pg.get_attribute("[data-testid=board]", "data-status") != "human_turn":
                break
            cell = pg.locator(".piece.movable").first.get_attribute("data-testid").split("-")[1:]
            pg.click(f"[data-testid=cell-{cell[0]}-{cell[1]}]")
            target = pg.locator("[data-testid^=target-]").first
            assert target.get_attribute("data-pdn")
            r, c = target.get_attribute("data-testid").split("-")[1:]
            pg.click(f"[data-testid=cell-{r}-{c}]")
            pg.wait_for_selector(idle)
        moves = pg.locator("[data-testid=move-list] .move").all_inner_texts()
        assert len(moves) >= 2 and all("-" in m or "x" in m for m in moves), moves
        assert "probability of each legal move" in pg.inner_text("[data-testid=legend]")
        pg.screenshot(path=str(tmp_path / "checkers.png"), full_page=True)
        if os.environ.get("C4JAX_PLAY_CHECKERS_SCREENSHOT"):
            shutil.copy(tmp_path / "checkers.png", os.environ["C4JAX_PLAY_CHECKERS_SCREENSHOT"])
        pg.keyboard.press("ArrowLeft")  # history works as in Connect Four
        assert pg.get_attribute("[data-testid=board]", "data-live") == "false"
        expect(status).to_contain_text("(history, read-only")
        pg.select_option("[data-testid=game-select]", "connect_four")  # and back
        pg.wait_for_selector('[data-testid=board][data-game=connect_four][data-busy="false"]')
        expect(status).to_have_text("Your turn — click a column.")
        assert not problems, problems
