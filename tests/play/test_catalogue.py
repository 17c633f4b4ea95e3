"""The play server answers before its agents are loaded and compiled (``Catalogue.start``): ``GET
/api/agents`` says what is still loading and warming up, a request for an agent still loading waits
for it, and the page shows the agents still warming up until they are ready (in Chromium when it
is installed)."""

from __future__ import annotations

import os

import jax
import pytest

from c4jax import games
from c4jax.play import server as play_server
from browser import chromium_page, needs_browser
from playserver import request, serving


def _others(**menus) -> dict[str, list[str]]:
    """Every registered game but the default one with no agents, except the ``menus`` given."""
    return {**{g: [] for g in games.GAMES if g != games.DEFAULT}, **menus}


def test_the_server_answers_while_its_agents_load_and_compile():
    cat = play_server.Catalogue(["random", "1steplA:det"], game_agents=_others(), load=False)
    logged: list[str] = []
    with serving(cat) as port:
        status, info = request(port, "GET", "/api/agents")
        assert status == 200 and info["loading"] and info["agents"] == [] and info["default"] is None
        cat.start(log=logged.append)
        status, answer = request(port, "POST", "/api/move", {"agent": "1steplA:DET", "moves": [], "human_first": False})
        assert status == 200 and answer["agent"] == "1steplA:det" and answer["agent_move"] is not None
        cat.background.join(timeout=300)
        status, info = request(port, "GET", "/api/agents")
        assert not info["loading"] and info["warming_up"] == [] and all(a["ready"] for a in info["agents"])
        assert [g["id"] for g in info["games"]] == ["connect_four"]  # no other game's opponent asked for
    assert logged[-1].startswith("c4jax play: ready in "), logged


def test_warming_up_lists_the_agents_not_compiled_yet():
    cat = play_server.Catalogue(["random", "1steplA:det"], game_agents=_others(checkers=["random"]))
    info = play_server.agents_answer(cat)
    assert info["warming_up"] == ["random", "1steplA:det", "checkers/random"] and not info["loading"]
    assert [g["warming_up"] for g in info["games"]] == [["random", "1steplA:det"], ["checkers/random"]]
    cat.get("random").compile()
    info = play_server.agents_answer(cat)
    assert info["warming_up"] == ["1steplA:det", "checkers/random"] and info["agents"][0]["ready"]


@pytest.mark.slow
def test_a_bounded_catalogue_warms_its_warm_set_and_compiles_the_others_on_first_use():
    """``warm=DEFAULTS, keep=1`` (what ``c4jax play --warm default --keep 1`` builds): the warm-up compiles
    the default opponent only; an agent outside the warm set answers (compiled on first use), and
    one more releases the least recently used, whose programs are then freed, and which compiles
    again when asked for and answers as before."""
    import gc
    import weakref

    from c4jax.play import programs

    logged: list[str] = []
    cat = play_server.Catalogue(["random", "1steplA:det", "2steplA:sto"], game_agents={"checkers": []}, load=False,
                                warm=play_server.DEFAULTS, keep=1)
    with serving(cat) as port:
        cat.start(log=logged.append)
        cat.background.join(timeout=300)
        status, info = request(port, "GET", "/api/agents")
        assert status == 200 and cat.warm_set() == ["1steplA:det"] == [a["name"] for a in info["agents"] if a["ready"]]
        assert info["warming_up"] == []  # the page lists the warm set's agents only: the others compile on first use
        move = {"agent": "2steplA:sto", "moves": [3], "human_first": True}
        status, first = request(port, "POST", "/api/move", move)
        assert status == 200 and first["agent_move"] is not None
        ready = lambda: [a["name"] for a in request(port, "GET", "/api/agents")[1]["agents"] if a["ready"]]  # noqa: E731
        assert ready() == ["1steplA:det", "2steplA:sto"]
        entry = cat.get("2steplA:sto")
        act = weakref.ref(entry._programs.act_program)
        status, _ = request(port, "POST", "/api/move", {"agent": "random", "moves": [3], "human_first": True})
        assert status == 200 and not entry.ready and cat.bound.compiled() == ["random"] and cat.bound.released == 1
        assert ready() == ["random", "1steplA:det"]  # 2steplA:sto released; 1steplA:det stays
        gc.collect()
        assert act() is None or ("act", jax.tree.structure(entry.agent)) in programs._KEPT  # freed (unless kept by an unbounded catalogue of this process)
        status, again = request(port, "POST", "/api/move", move)
        assert status == 200 and again["positions"][0]["scores"] == first["positions"][0]["scores"] and entry.ready
    assert any("compile when first asked for; at most 1 of them stay compiled" in line for line in logged), logged
    assert logged[-1].startswith("c4jax play: ready in ") and not any("fail" in line for line in logged), logged


@needs_browser()
def test_the_page_says_which_agents_are_warming_up():
    from playwright.sync_api import expect  # a `test` extra dependency

    cat = play_server.Catalogue(["1steplA:det", "2steplA:det"], game_agents={"checkers": []})
    with serving(cat) as port, chromium_page(timeout=120_000) as (pg, problems):
        pg.goto(f"http://127.0.0.1:{port}/")
        warming = pg.locator("[data-testid=warming]")
        expect(warming).to_contain_text("Still warming up: ")
        expect(warming).to_contain_text("2steplA:det")  # nothing compiles it but the warm-up
        pg.wait_for_selector('[data-testid=board][data-busy="false"]')  # the first game is played meanwhile
        cat.warm_up(log=lambda m: None, search="now")
        expect(warming).to_be_hidden()
        assert not problems, problems


def test_ctrl_c_during_the_warm_up_stops_the_server_at_once():
    """SIGINT while every agent is still loading or compiling: the process is gone within seconds,
    before the warm-up ends (it would take minutes), with one line and Ctrl-C's exit status, 130."""
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-m", "c4jax.play", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "C4JAX_COMPILE_CACHE": "off"})
    try:
        line = proc.stdout.readline()
        assert "serving on" in line, line + proc.stderr.read()
        port = int(line.split("127.0.0.1:")[1].split("/")[0])
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # until the agents are loaded and their compiles under way
            status, info = request(port, "GET", "/api/agents")
            if not info["loading"] and info["warming_up"] and any(a["ready"] for a in info["agents"]):
                break
            time.sleep(0.5)
        assert info["warming_up"], info
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert out.strip().splitlines()[-1] == "c4jax play: stopped" and "c4jax play: ready" not in out, out
    assert took < 10 and "Traceback" not in err, (took, err)


def test_a_client_that_hangs_up_is_not_an_internal_error(capsys):
    handler = object.__new__(play_server.Handler)
    handler.command, handler.path = "GET", "/api/agents"

    def hung_up():
        raise BrokenPipeError(32, "Broken pipe")

    handler._guard(hung_up)
    assert handler.close_connection and capsys.readouterr().err == ""
