"""End to end in a real browser: headless Chromium (Debian's ``chromium``) driven by Playwright.

Opens the page served by ``python -m c4jax.play``, picks an opponent, clicks columns until the
game ends, checks the status line, steps through the history with ← / → (keys and buttons),
restarts, lets the opponent move first, and saves a screenshot. Needs ``/usr/bin/chromium``
(``apt-get install -y chromium``) and the ``playwright`` Python package; Playwright's own browser
download is not used. Skipped, loudly, only when no Chromium is installed.
"""

from __future__ import annotations

import os
import shutil
import warnings

import pytest

from browser import CHROMIUM, chromium, watch
from playprocess import PlayServer  # the same subprocess server as the API tests (test_server.py)

if CHROMIUM is None:
    reason = ("NO CHROMIUM: the real-browser end-to-end test of the play UI did NOT run. "
              "Install it with `apt-get install -y chromium` (CI's .ci/run does).")
    warnings.warn(reason)
    pytest.skip(reason, allow_module_level=True)

from playwright.sync_api import expect  # noqa: E402  (a `test` extra dependency)

IDLE = '[data-testid=board][data-busy="false"]'


@pytest.fixture(scope="module")
def server():
    srv = PlayServer("--agents", "random,1steplA")
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport={"width": 600, "height": 960})
    pg = context.new_page()
    # (a 4xx answer is logged by Chromium as "Failed to load resource"; the test that provokes one checks it)
    problems, foreign = watch(pg, ignore="status of 400", timeout=30_000), []
    pg.on("request", lambda r: None if r.url.startswith(server.url) else foreign.append(r.url))
    pg.goto(server.url)
    pg.wait_for_selector(IDLE)
    yield pg
    context.close()
    assert not problems, problems
    assert not foreign, f"the page fetched something outside the server: {foreign}"


def board_attr(pg, name: str) -> str:
    return pg.get_attribute("[data-testid=board]", f"data-{name}")


def pieces(pg) -> int:
    return pg.locator("#pieces circle").count()


def wait_idle(pg):
    pg.wait_for_selector(IDLE)


def test_play_a_whole_game_history_and_restart(page, tmp_path):
    pg = page
    options = pg.locator("[data-testid=agent-select] option").all_inner_texts()
    assert options == ["random", "1steplA:det", "1steplA:sto"]
    pg.select_option("[data-testid=agent-select]", "1steplA:det")
    wait_idle(pg)
    pg.select_option("[data-testid=first-select]", "human")  # changing an option starts a new game
    wait_idle(pg)
    status = pg.locator("[data-testid=status]")
    expect(status).to_have_text("Your turn — click a column.")
    assert board_attr(pg, "ply") == "0" and pieces(pg) == 0
    # the opponent's scores are shown above every column on the human's turn too
    for c in range(7):
        assert pg.get_attribute(f"[data-testid=score-{c}]", "data-value") != ""
    assert "1steplA:det would score" in pg.inner_text("[data-testid=legend]")

    # click columns (the leftmost playable one, which loses to 1StepLA) until the game ends
    clicks = 0
    while board_attr(pg, "status") == "human_turn":
        col = pg.locator("[data-testid^=col-]:not(.disabled)").first
        before = int(board_attr(pg, "ply"))
        col.click()
        wait_idle(pg)
        clicks += 1
        assert int(board_attr(pg, "ply")) in (before + 1, before + 2)
        assert pieces(pg) == int(board_attr(pg, "ply"))
        if clicks == 3:
            pg.mouse.move(5, 5)
            pg.wait_for_timeout(600)  # let the falling piece land
            pg.screenshot(path=str(tmp_path / "in-progress.png"))
        assert clicks < 22
    final = board_attr(pg, "status")
    assert final == "agent_won"
    expect(status).to_have_text("1steplA:det won.")
    assert pg.locator("[data-testid=win-mark]").count() >= 4
    # no score on a finished board, and clicks do nothing
    assert all(pg.get_attribute(f"[data-testid=score-{c}]", "data-value") == "" for c in range(7))
    n = int(board_attr(pg, "ply"))
    pg.locator("[data-testid=col-6]").click(force=True)
    pg.wait_for_timeout(200)
    assert int(board_attr(pg, "ply")) == n and pieces(pg) == n

    # history: ← (key and button) goes back with that position's scores; it is read-only
    pg.keyboard.press("ArrowLeft")
    assert board_attr(pg, "live") == "false" and int(board_attr(pg, "ply")) == n - 1
    assert pieces(pg) == n - 1
    expect(status).to_contain_text(f"Move {n - 1} of {n} (history, read-only")
    assert any(pg.get_attribute(f"[data-testid=score-{c}]", "data-value") != "" for c in range(7))
    pg.click("[data-testid=back]")
    assert int(board_attr(pg, "ply")) == n - 2 and pieces(pg) == n - 2
    hist_board = pg.inner_html("#pieces")
    pg.locator("[data-testid=col-3]").click(force=True)  # read-only: nothing happens
    pg.wait_for_timeout(200)
    assert int(board_attr(pg, "ply")) == n - 2 and pg.inner_html("#pieces") == hist_board
    for _ in range(n + 3):
        pg.keyboard.press("ArrowLeft")
    assert board_attr(pg, "ply") == "0" and pieces(pg) == 0
    assert pg.is_disabled("[data-testid=back]")
    pg.click("[data-testid=forward]")
    assert board_attr(pg, "ply") == "1" and pieces(pg) == 1
    for _ in range(n + 3):
        pg.keyboard.press("ArrowRight")  # → on the last position returns to the live game
    assert board_attr(pg, "live") == "true" and int(board_attr(pg, "ply")) == n
    assert pg.is_disabled("[data-testid=forward]")
    expect(status).to_have_text("1steplA:det won.")

    # RESTART: a fresh game, the human first as chosen
    pg.click("[data-testid=restart]")
    wait_idle(pg)
    assert board_attr(pg, "ply") == "0" and pieces(pg) == 0 and board_attr(pg, "live") == "true"
    expect(status).to_have_text("Your turn — click a column.")
    pg.keyboard.press("4")  # keys 1-7 drop a piece too
    wait_idle(pg)
    assert board_attr(pg, "ply") == "2" and pieces(pg) == 2

    shot = tmp_path / "end.png"
    pg.screenshot(path=str(shot), full_page=True)
    for p in (shot, tmp_path / "in-progress.png"):
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 10_000
    if os.environ.get("C4JAX_PLAY_SCREENSHOT"):  # e.g. =docs/play.png to refresh the README's picture
        shutil.copy(tmp_path / "in-progress.png", os.environ["C4JAX_PLAY_SCREENSHOT"])


def test_opponent_first_random_agent_and_error_display(page):
    pg = page
    pg.select_option("[data-testid=agent-select]", "random")
    wait_idle(pg)
    pg.select_option("[data-testid=first-select]", "agent")
    wait_idle(pg)
    assert board_attr(pg, "ply") == "1" and pieces(pg) == 1  # the opponent moved first
    assert pg.locator("#pieces circle.agent").count() == 1
    expect(pg.locator("[data-testid=status]")).to_have_text("Your turn — click a column.")
    probs = [float(pg.get_attribute(f"[data-testid=score-{c}]", "data-value")) for c in range(7)]
    assert abs(sum(probs) - 1) < 1e-4  # Random's scores: uniform probabilities
    assert "probability" in pg.inner_text("[data-testid=legend]")
    pg.keyboard.press("ArrowLeft")
    assert board_attr(pg, "ply") == "0" and pieces(pg) == 0
    pg.keyboard.press("ArrowRight")
    assert board_attr(pg, "ply") == "1"
    # the UI shows the server's JSON errors: ask for an agent the server does not serve
    pg.evaluate("""() => { const o = document.createElement('option'); o.value = o.textContent = 'nobody';
                           document.querySelector('[data-testid=agent-select]').appendChild(o); }""")
    pg.select_option("[data-testid=agent-select]", "nobody")
    expect(pg.locator("[data-testid=error]")).to_contain_text("unknown agent 'nobody'")
