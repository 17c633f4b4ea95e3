"""The static site of ``c4jax export-web`` in a real browser (headless Chromium, Playwright) with
every request outside the site's folder blocked: whole games of Connect Four and Checkers against
every shipped network agent, whose moves in the page must be the JAX agent's on the same
positions; AlphaZero's search in JS against ``agents.load("alphazero@N")`` (both marked slow: every
agent's site is built first); the messages for a missing, damaged or wrong model. Needs npm (the site's build fetches onnxruntime-web) and Chromium;
skipped without them."""

from __future__ import annotations

import json
import shutil

import jax
import numpy as np
import pytest

from export_web_site import (CHROMIUM, CHROMIUM_ARGS, NPM, SMALL, block_outside, built_site,
                             jax_moves, serve)

if NPM is None or CHROMIUM is None:
    pytest.skip("the site's browser tests need npm and Chromium (apt-get install -y nodejs npm chromium)",
                allow_module_level=True)

from playwright.sync_api import sync_playwright

from c4jax import games

IDLE = '#board[data-busy="false"]'
# the agents' names in the page's links and for agents.load: the best move, AlphaZero with fewer
# simulations than its own (the comparison with JAX runs every searched position again)
GAME_AGENTS = [("connect_four", "supervised:det"), ("connect_four", "dqn:det"),
               ("connect_four", "dueling_dqn:det"), ("connect_four", "reinforce:det"),
               ("connect_four", "ppo:det"), ("connect_four", "alphazero@64:det"),
               ("checkers", "checkers/alphazero@16:det"), ("checkers", "checkers/ppo:det"),
               ("checkers", "checkers/dqn:det")]


@pytest.fixture(scope="module")
def site():
    folder = built_site()
    with serve(folder) as url:
        yield folder, url


@pytest.fixture(scope="module")
def small_site():
    return built_site(SMALL)


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Page:
    """A page of the site in its own browser context, every request outside the site aborted."""

    def __init__(self, browser, url: str, query: str = ""):
        self.context = browser.new_context(viewport={"width": 800, "height": 1100})
        self.outside = block_outside(self.context, url)
        self.page = self.context.new_page()
        self.page.set_default_timeout(60_000)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(url + query)
        self.page.wait_for_function("window.c4web && window.c4web.ui.manifest")
        self.page.wait_for_selector(IDLE)

    def data(self, key: str) -> str:
        return self.page.get_attribute("#board", f"data-{key}") or ""

    def ints(self, key: str) -> list[int]:
        return [int(x) for x in self.data(key).split(",") if x]

    def close(self):
        self.context.close()


def _play_to_the_end(page: Page, game_id: str, rng) -> None:
    """Random legal moves for the human until the game ends (the agent answers each)."""
    for _ in range(600):
        page.page.wait_for_selector(IDLE)
        if page.data("done") == "true":
            return
        if game_id == "connect_four":
            page.page.click(f'#board [data-col="{rng.choice(page.ints("legal"))}"]')
        else:
            moves = [m.split(":") for m in page.data("moves").split(",") if m]
            start, end, _ = moves[rng.integers(len(moves))]
            page.page.click(f'#board [data-square="{start}"]')
            page.page.click(f'#board .target[data-square="{end}"]')
    raise AssertionError("the game did not end")


@pytest.mark.slow
@pytest.mark.parametrize("game_id,name", GAME_AGENTS)
def test_whole_game_against_each_agent_plays_the_jax_agents_moves(site, browser, game_id, name):
    _, url = site
    query = f"?game={game_id}&agent={name}&first=human"
    page = Page(browser, url, query)
    try:
        assert page.page.input_value("#agent") == name.split("@")[0].split(":")[0]
        _play_to_the_end(page, game_id, np.random.default_rng(len(name)))
        status = page.page.get_attribute("#status", "data-status")
        assert status in ("human_won", "agent_won", "draw"), status
        actions, plies = page.ints("actions"), page.ints("agent-plies")
        assert plies and page.outside == [] and page.errors == []
    finally:
        page.close()
    expected = jax_moves(name, games.make(game_id), [actions[:i] for i in plies])
    got = [actions[i] for i in plies]
    if "@" in name:  # a search: the same move in at least 95% of the positions (search.js: ties)
        assert np.mean(np.array(expected) == np.array(got)) >= 0.95, (expected, got)
    else:
        assert got == expected


def _random_positions(game, n: int, rng, max_plies: int) -> list[list[int]]:
    """``n`` lists of random legal moves from the start that leave the game unfinished."""
    step = jax.jit(game.step)
    out = []
    for _ in range(n):
        state, actions = game.init(), []
        for _ in range(int(rng.integers(0, max_plies))):
            action = int(rng.choice(np.flatnonzero(np.asarray(state.legal_action_mask))))
            after = step(state, action)
            if bool(after.terminated | after.truncated):
                break
            state, actions = after, actions + [action]
        out.append(actions)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("game_id,name,sims,n", [("connect_four", "alphazero", 64, 60),
                                                 ("checkers", "checkers/alphazero", 16, 30)])
def test_search_in_the_page_agrees_with_the_jax_agent(site, browser, game_id, name, sims, n):
    """The JS search picks ``agents.load(f"{name}@{sims}")``'s move in >= 95% of random positions, and
    the raw network (0 simulations) exactly ``{name}@0:det``'s."""
    _, url = site
    game = games.make(game_id)
    positions = _random_positions(game, n, np.random.default_rng(7), 20 if game_id == "connect_four" else 40)
    page = Page(browser, url)
    try:
        got = page.page.evaluate("""async ([name, game, positions, sims]) => {
            const out = {search: [], raw: []};
            for (const p of positions) {
              out.search.push((await window.c4web.move(name, game, p, {sims})).action);
              out.raw.push((await window.c4web.move(name, game, p, {sims: 0})).action);
            }
            return out; }""", [name, game_id, positions, sims])
    finally:
        page.close()
    assert got["raw"] == jax_moves(f"{name}@0:det", game, positions)
    expected = jax_moves(f"{name}@{sims}:det", game, positions)
    agree = np.mean(np.array(got["search"]) == np.array(expected))
    assert agree >= 0.95, (agree, got["search"], expected)


@pytest.mark.parametrize("damage,message", [
    ("missing", "is missing"),
    ("truncated", "is not a readable ONNX model"),
    ("other_game", "is a Checkers model, not one of Connect Four"),
    ("tampered", "SHA-256 differs"),
    ("shared_missing", "is missing"),
    ("shared_tampered", "SHA-256 differs"),
    ("runtime_missing", "WebAssembly runtime ort/ort-wasm-simd-threaded.wasm is missing"),
])
def test_a_bad_model_file_gives_a_clear_message(small_site, browser, tmp_path, damage, message):
    """A missing, damaged or wrong model file, or shared weights file, of ``dqn``: the page names it."""
    folder = small_site
    copy = tmp_path / "site"
    shutil.copytree(folder, copy)
    manifest = json.loads((copy / "agents.json").read_text())
    entry = next(a for a in manifest["agents"] if a["name"] == "dqn")
    model = copy / entry["file"]
    if damage == "runtime_missing":  # not the model's fault: the message names the runtime's file
        model = copy / "ort" / "ort-wasm-simd-threaded.wasm"
        entry = {**entry, "file": "ort/ort-wasm-simd-threaded.wasm"}
        damage = "missing"
    elif damage.startswith("shared"):
        (shared,) = entry["data"]
        entry = {**entry, "file": shared["file"]}  # the file the message must name
        damage, model = damage.split("_")[1], copy / shared["file"]
    if damage == "missing":
        model.unlink()
    elif damage == "truncated":
        model.write_bytes(model.read_bytes()[:5000])
    elif damage == "other_game":
        other = next(a for a in manifest["agents"] if a["game"] == "checkers")
        shutil.copyfile(copy / other["file"], model)
    else:  # one weight changed: a readable model of the right game, not the exported one
        data = bytearray(model.read_bytes())
        data[len(data) // 2] ^= 0x01
        model.write_bytes(bytes(data))
    with serve(copy) as url:
        page = Page(browser, url, "?agent=dqn&first=agent")
        try:
            page.page.wait_for_selector('[data-testid=error]:not([hidden])')
            text = page.page.inner_text("[data-testid=error]")
            assert message in text and entry["file"] in text, text
            assert page.outside == []
        finally:
            page.close()


def test_models_that_share_weights_load_at_the_same_time(small_site, browser):
    """Two sessions of models that share a weights file are created at once (onnxruntime-web mounts
    external data only while a session is created, in one table for all: the page creates sessions one
    after another, or the first to finish would remove the other's files)."""
    with serve(small_site) as url:
        page = Page(browser, url)
        try:
            made = page.page.evaluate("""async () => {
                const bytes = async (f) => new Uint8Array(await (await fetch(f)).arrayBuffer());
                const entry = window.c4web.ui.manifest.agents.find((a) => a.name === "supervised");
                const [model, shared] = await Promise.all([bytes(entry.file), bytes(entry.data[0].file)]);
                const options = () => ({executionProviders: ["wasm"],
                                        externalData: [{path: entry.data[0].file.split("/").pop(), data: shared}]});
                const sessions = await Promise.all([1, 2, 3].map(
                    () => window.c4web.createSession(model.slice(), options())));
                return sessions.length; }""")
            assert made == 3 and page.errors == [] and page.outside == []
        finally:
            page.close()


def test_undo_new_game_side_and_links(small_site, browser):
    """Undo takes back the human's move and the agent's reply; a new game with the second side lets
    the agent open; the page's link opens the same position; Checkers shows its moves as PDN."""
    with serve(small_site) as url:
        page = Page(browser, url, "?agent=dqn&first=human")
        try:
            page.page.click('#board [data-col="3"]')
            page.page.wait_for_selector(IDLE)
            page.page.click(f'#board [data-col="{page.ints("legal")[0]}"]')
            page.page.wait_for_selector(IDLE)
            assert len(page.ints("actions")) == 4 and page.ints("agent-plies") == [1, 3]
            page.page.click("[data-testid=undo]")
            page.page.wait_for_selector(IDLE)
            assert page.ints("actions")[:1] == [3] and len(page.ints("actions")) == 2
            link = page.page.get_attribute("[data-testid=share-link]", "href")
            assert link.endswith(f"?agent=dqn&moves={page.data('actions')}&first=human")
            page.page.select_option("[data-testid=first-select]", "agent")
            page.page.wait_for_selector(IDLE)
            assert page.ints("agent-plies") == [0] and len(page.ints("actions")) == 1
            page.page.click("[data-testid=restart]")
            page.page.wait_for_selector(IDLE)
            assert len(page.ints("actions")) == 1  # the agent opens again
            assert page.outside == [] and page.errors == []
        finally:
            page.close()
        page = Page(browser, url, link[link.index("?"):])
        try:
            assert page.data("actions") == link.split("moves=")[1].split("&")[0]
            assert page.page.inner_text("#status").startswith("Your turn")
        finally:
            page.close()
        page = Page(browser, url, "?game=checkers&agent=checkers/dqn&moves=169,169&first=human")
        try:
            pdn = page.page.inner_text("[data-testid=pdn]")
            assert "1. 11-15 22-18" in pdn and '[White "checkers/dqn"]' in pdn, pdn
            page.page.goto(url + "?game=checkers&agent=nobody")  # the status line says why, as the server's page
            page.page.wait_for_selector('#status[data-notice="true"]')
            assert "no Checkers agent" in page.page.inner_text("#status")
        finally:
            page.close()


# every text of the status line, in order (an init script of the page)
STATUS_LOG = """window.statusLog = [];
addEventListener("DOMContentLoaded", () => new MutationObserver(() => {
  const text = document.getElementById("status").textContent;
  if (window.statusLog[window.statusLog.length - 1] !== text) window.statusLog.push(text);
}).observe(document.getElementById("status"), {childList: true, characterData: true, subtree: true}));"""


def test_the_agent_opens_from_first_agent_alone(small_site, browser):
    """``?first=agent`` with nothing else lets the default agent open."""
    with serve(small_site) as url:
        page = Page(browser, url, "?first=agent")
        try:
            assert page.ints("agent-plies") == [0] and len(page.ints("actions")) == 1
        finally:
            page.close()


def test_links_keep_simulations_and_mode_and_any_count_can_be_chosen(small_site, browser):
    """A link made by the page reopens the same simulations and mode; the slider takes any count."""
    with serve(small_site) as url:
        page = Page(browser, url, "?agent=alphazero@64:sto&first=human")
        try:
            assert page.page.input_value("#sims") == "64" and page.page.input_value("#mode") == "sto"
            link = page.page.get_attribute("[data-testid=share-link]", "href")
            assert "agent=alphazero@64:sto&" in link, link
            page.page.fill("#sims", "500")  # a range input: fill sets its value and fires input/change
            assert page.page.inner_text("#sims-value") == "500"
            page.page.select_option("#mode", "det")
            link = page.page.get_attribute("[data-testid=share-link]", "href")
            assert "agent=alphazero@500&" in link, link
        finally:
            page.close()
        page = Page(browser, url, link[link.index("?"):])
        try:
            assert page.page.input_value("#sims") == "500" and page.page.input_value("#mode") == "det"
        finally:
            page.close()


def test_board_numbers_columns_and_marks_the_winning_four(small_site, browser):
    """Connect Four's columns are numbered 1-7 as in the move list; a won game marks the four."""
    with serve(small_site) as url:
        page = Page(browser, url, "?agent=dqn&moves=0,1,0,1,0,1,0&first=human")
        try:
            assert page.page.locator("#board .colnum").all_text_contents() == [str(c) for c in range(1, 8)]
            assert page.data("done") == "true"
            assert page.ints("win") == [0, 7, 14, 21] or page.ints("win") == [14, 21, 28, 35]
            assert page.page.locator("#board .win-mark").count() == 4
            page.page.click('#board [data-col="3"]')  # after the end: a note says why nothing moves
            assert "game is over" in page.page.inner_text("[data-testid=note]")
        finally:
            page.close()


def test_loading_is_not_thinking_a_click_meanwhile_is_answered_and_copy_link_comes_back(small_site, browser):
    """While the agent's model loads the status says so (then that it thinks); a click meanwhile says to
    wait and plays nothing; "Copied" returns to "Copy link"; the scores table's caption is one block
    above the table, not squeezed into its width."""
    with serve(small_site) as url:
        context = browser.new_context(viewport={"width": 800, "height": 1100})
        outside = block_outside(context, url)
        context.add_init_script(STATUS_LOG)
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=url.rstrip("/"))
        held = []  # the model's request, answered when the test says
        context.route("**/models/dqn.onnx", lambda route: held.append(route))
        page = context.new_page()
        page.set_default_timeout(60_000)
        try:
            page.goto(url + "?agent=dqn&first=agent")
            page.wait_for_function("document.getElementById('status').textContent.startsWith('loading dqn')")
            page.click('#board [data-col="2"]')
            assert "wait" in page.inner_text("[data-testid=note]")
            held[0].continue_()
            page.wait_for_function("document.getElementById('board').dataset.agentPlies === '0'")
            page.wait_for_selector(IDLE)
            assert len(page.get_attribute("#board", "data-actions").split(",")) == 1  # the agent's move only
            log = page.evaluate("window.statusLog")
            loading = [i for i, t in enumerate(log) if t.startswith("loading dqn's model")]
            thinking = [i for i, t in enumerate(log) if "is thinking" in t]
            assert loading and thinking and loading[0] < thinking[0], log
            caption = page.locator("#stats figcaption").bounding_box()
            table = page.locator("#stats table").bounding_box()
            assert caption["y"] + caption["height"] <= table["y"] + 1 and caption["height"] < 60, (caption, table)
            page.evaluate("""() => { window.shareLog = [];
                new MutationObserver(() => window.shareLog.push(document.getElementById("share").textContent))
                  .observe(document.getElementById("share"), {childList: true, characterData: true, subtree: true}); }""")
            page.click("[data-testid=share]")  # "Copied" for a moment (however slow the machine), then back
            page.wait_for_function("window.shareLog.includes('Copied') && "
                                   "document.getElementById('share').textContent === 'Copy link'")
            assert outside == []
        finally:
            context.close()


def test_a_page_opened_as_a_file_says_to_serve_it(small_site, browser):
    """``index.html`` opened from the file system (the browser blocks its modules) explains itself."""
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto((small_site / "index.html").as_uri())
        page.wait_for_selector("[data-testid=error]:not([hidden])")
        assert "python -m http.server" in page.inner_text("[data-testid=error]")
        assert "served" in page.inner_text("#status")
    finally:
        context.close()
