"""Links to a position in the play UI (``/?agent=dqn&moves=3,3,4``, :mod:`c4jax.play.links`): the
links written for both games, the server's handling of them (the page for any query, the replay
of the link's moves by ``/api/history``, a clear 400 for a bad one), and in Chromium when it is
installed: good links open at their position, bad ones say why in the status line and start a
new game."""

from __future__ import annotations

import http.client
from urllib.parse import parse_qs, urlsplit

import jax
import numpy as np
import pytest

from c4jax.games.checkers import notation
from c4jax.games.checkers.game import GAME as CHECKERS
from c4jax.games.connect_four import env
from c4jax.play import links
from c4jax.play import server as play_server
from browser import chromium_page, needs_browser
from playserver import request, serving


@pytest.fixture(scope="module")
def port():
    with serving(play_server.Catalogue(["random", "1steplA"])) as p:
        yield p


def link_body(link: str) -> dict:
    """The ``/api/history`` body that the page sends for ``link`` (first=human|agent given)."""
    q = {k: v[0] for k, v in parse_qs(urlsplit(link).query, keep_blank_values=True).items()}
    body = {"agent": q["agent"], "moves": [int(m) for m in q["moves"].split(",") if m],
            "human_first": q["first"] == "human"}
    return {"game": q["game"], **body} if "game" in q else body


def test_links_for_both_games():
    assert links.play_link([3, 3, 4], "dqn") == "http://127.0.0.1:8000/?agent=dqn&moves=3,3,4"
    assert links.play_link([], "1steplA:det", human_first=False, url="http://host:9/") == \
        "http://host:9/?agent=1steplA:det&moves=&first=agent"
    assert links.play_link(np.array([168, 185]), "mcts200", game="checkers", human_first=True) == \
        "http://127.0.0.1:8000/?game=checkers&agent=mcts200&moves=168,185&first=human"
    assert "agent=runs/my%20ppo:sto" in links.play_link([0], "runs/my ppo:sto")
    with pytest.raises(ValueError, match="no page for the game"):
        links.play_link([0], "random", game="chess")
    with pytest.raises(ValueError, match="agent"):
        links.play_link([0], " ")


def test_the_page_is_served_whatever_the_query(port):
    for query in ("?agent=dqn&moves=3,3,4", "?game=checkers&agent=random&moves=168,185&first=human", "?moves=x,y"):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request("GET", "/" + query)
            res = conn.getresponse()
            assert res.status == 200 and b'id="share"' in res.read(), query
        finally:
            conn.close()


def test_the_moves_of_a_link_replay_to_its_position(port):
    moves = [3, 3, 4, 2]
    link = links.play_link(moves, "1steplA", human_first=True)
    status, answer = request(port, "POST", "/api/history", link_body(link))
    assert status == 200 and answer["agent"] == "1steplA:det" and answer["moves"] == moves
    state = env.init()
    for m in moves:
        state = env.step(state, m)
    assert answer["board"] == np.asarray(env.observe(state)).tolist()  # the human (first) is to move: +1
    assert [p["ply"] for p in answer["positions"]] == list(range(len(moves) + 1))
    # Checkers: action indices (the server's replay of them: tests/play/test_play_checkers.py)
    actions = [notation.pdn_to_action(jax.device_get(CHECKERS.init()), "11-15"), 185]
    assert link_body(links.play_link(actions, "random", game="checkers", human_first=False)) == {
        "game": "checkers", "agent": "random", "moves": actions, "human_first": False}


@pytest.mark.parametrize("link, message", [
    (links.play_link([3], "nobody", human_first=True), "unknown agent 'nobody'"),
    (links.play_link([3] * 7, "random", human_first=True), "illegal move 6: column 3 is full"),
    (links.play_link([9], "random", human_first=True), "column 9 is outside 0..6"),
    (links.play_link([300], "random", game="checkers", human_first=True), "action 300 is outside 0..255"),
    (links.play_link([0], "1steplA", game="checkers", human_first=True), "unknown agent '1steplA'"),
])
def test_a_bad_link_gets_a_400_that_says_why(port, link, message):
    status, answer = request(port, "POST", "/api/history", link_body(link))
    assert status == 400 and message in answer["error"], answer


@needs_browser()
def test_links_in_the_browser(port):
    from playwright.sync_api import expect  # a `test` extra dependency

    base = f"http://127.0.0.1:{port}/"
    with chromium_page(viewport={"width": 600, "height": 1000}, ignore="status of 400") as (pg, problems):
        status = pg.locator("[data-testid=status]")
        board = "[data-testid=board]"

        def open_c4(query: str) -> None:
            pg.goto(base + query)
            pg.wait_for_selector(f'{board}[data-busy="false"][data-ply]')

        # three moves: the second player is to move, so you play second, against 1StepLA (an alias)
        open_c4("?agent=1steplA&moves=3,3,4")
        assert pg.get_attribute(board, "data-ply") == "3" and pg.locator("#pieces circle").count() == 3
        assert pg.input_value("[data-testid=agent-select]") == "1steplA:det"
        assert pg.input_value("[data-testid=first-select]") == "agent"
        expect(status).to_have_text("Your turn — click a column.")
        share = pg.get_attribute("[data-testid=share-link]", "href")
        assert parse_qs(urlsplit(share).query) == {"agent": ["1steplA:det"], "moves": ["3,3,4"],
                                                   "first": ["agent"]}
        pg.keyboard.press("ArrowLeft")  # its history is there
        assert pg.get_attribute(board, "data-ply") == "2"
        # first=human with the agent to move there: it answers at once
        open_c4("?agent=1steplA&moves=3,3,4&first=human")
        pg.wait_for_selector(f'{board}[data-ply="4"][data-busy="false"]')
        expect(status).to_have_text("Your turn — click a column.")
        # bad links: the status line says why, and a new game starts from the empty board
        for query, why in (("?agent=1steplA&moves=3,x", "moves=3,x is not a comma-separated list of columns"),
                           ("?agent=1steplA&moves=3,3,3,3,3,3,3", "illegal move 6: column 3 is full"),
                           ("?agent=nobody&moves=3", "unknown agent 'nobody'"),
                           ("?agent=random&first=second", "first=second: it must be 'human' or 'agent'"),
                           ("?game=chess&agent=random", "this server plays no game 'chess'")):
            open_c4(query)
            expect(status).to_contain_text(f"This link cannot be opened: {why}")
            assert pg.get_attribute("[data-testid=status]", "data-notice") == "true", query
            assert pg.get_attribute(board, "data-ply") in ("0", "1"), query  # who starts: random
        assert pg.input_value("[data-testid=agent-select]") == "1steplA:det"  # the default opponent
        pg.goto(base + "?agent=random&moves=3,3,3,3,3,3,3&first=human")  # a known agent stays chosen
        pg.wait_for_selector(f'{board}[data-busy="false"][data-ply="0"]')
        assert pg.input_value("[data-testid=agent-select]") == "random"
        expect(status).to_have_text("This link cannot be opened: illegal move 6: column 3 is full. "
                                    "A new game instead: Your turn — click a column.")
        pg.locator("[data-testid=col-3]").click()  # the next move clears the notice
        pg.wait_for_selector(f'{board}[data-busy="false"][data-ply="2"]')
        expect(status).to_have_text("Your turn — click a column.")
        # Checkers: action indices; you take the side to move (white, after black's 11-15)
        action = notation.pdn_to_action(jax.device_get(CHECKERS.init()), "11-15")
        pg.goto(base + f"?game=checkers&agent=random&moves={action}")
        pg.wait_for_selector('[data-testid=board][data-game=checkers][data-busy="false"][data-ply="1"]')
        expect(status).to_have_text("Your turn (white) — click a piece, then where it goes.")
        assert pg.locator("[data-testid=move-list] .move").all_inner_texts() == ["11-15"]
        assert not problems, problems
