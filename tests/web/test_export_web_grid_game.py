"""The static site of ``c4jax export-web`` with a game that ``rules.js`` does not write: the guide's
tic-tac-toe (registered from a temporary folder), played in headless Chromium through its exported
rules (``onnx_rules.js``) and drawn as a grid, against an untrained network agent whose moves in the
page must be the JAX agent's. Building the site converts the models (minutes): marked slow. Needs npm
and Chromium; skipped without them."""

from __future__ import annotations

import hashlib
import json
from urllib.parse import quote

import numpy as np
import pytest

from browser import CHROMIUM
from export_web_site import CHECK_POSITIONS, NPM, click_to_the_end, jax_moves, serve, site_page, tiny_agent
from guide_games import registered  # the guide's example games

if NPM is None or CHROMIUM is None:
    pytest.skip("the site's browser tests need npm and Chromium (apt-get install -y nodejs npm chromium)",
                allow_module_level=True)

from c4jax.cli import website


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """``(folder, url, game, agent)``: a site with one tic-tac-toe agent, served."""
    root = tmp_path_factory.mktemp("grid_game")
    with registered(root / "games", "tictactoe", "tic_tac_toe") as game:
        agent = str(tiny_agent(root / "ttt", game))
        folder = root / "site"
        website.build(folder, [agent], check_positions=CHECK_POSITIONS, log=lambda *_: None)
        with serve(folder) as url:
            yield folder, url, game, agent


def test_the_site_lists_the_game_s_rules_and_grid(site):
    folder, _, _, agent = site
    manifest = json.loads((folder / "agents.json").read_text())
    assert [(a["name"], a["game"]) for a in manifest["agents"]] == [(agent, "tic_tac_toe")]
    grid = manifest["games"]["tic_tac_toe"]
    assert {k: grid[k] for k in ("title", "sides", "rows", "cols", "click", "planes")} == {
        "title": "Tic-tac-toe", "sides": ["X", "O"], "rows": 3, "cols": 3, "click": "cell", "planes": True}
    for which in ("init", "step"):
        f = grid["rules"][which]
        assert f["file"] == f"models/rules_tic_tac_toe_{which}.onnx"
        assert hashlib.sha256((folder / f["file"]).read_bytes()).hexdigest() == f["sha256"]


@pytest.mark.slow
@pytest.mark.parametrize("first,seed,sims", [("human", 0, 0), ("human", 1, 0), ("agent", 2, 0),
                                             ("human", 3, 16), ("human", 4, 16)])
def test_whole_games_in_the_browser_play_the_jax_agent_s_moves(site, first, seed, sims):
    """Whole games against the network (``sims`` 0) and against its search with ``sims`` simulations, which the
    page runs on the exported rules: each of the agent's moves is the JAX agent's. The search plays second: on the
    empty board the untrained network's prior is exactly uniform, and the two searches break exact ties
    differently (the page the lowest action, JAX with noise)."""
    _, url, game, agent = site
    rng = np.random.default_rng(seed)
    query = f"?game=tic_tac_toe&first={first}" + (f"&agent={quote(agent, safe='')}@{sims}:det" if sims else "")
    with site_page(url, query) as (page, errors, outside):
        click_to_the_end(page, rng.choice, 10)
        cells = [""] * 9  # the pieces drawn: player 0's in seat x, player 1's in seat o
        for testid, cls in page.evaluate("() => [...document.querySelectorAll('#board .piece')].map("
                                         "(p) => [p.dataset.testid, p.getAttribute('class')])"):
            r, c = map(int, testid.split("-")[1:])
            cells[3 * r + c] = "O" if " o" in cls else "X"
        board = "".join(cells)
        status = page.get_attribute("#status", "data-status")
        actions = [int(x) for x in page.get_attribute("#board", "data-actions").split(",") if x]
        plies = [int(x) for x in page.get_attribute("#board", "data-agent-plies").split(",") if x]
        error = page.inner_text("#error")
        page_sims = page.input_value("#sims") if sims else None
    assert status in ("human_won", "agent_won", "draw"), (status, error)
    assert outside == [] and errors == [] and plies
    assert plies[0] == (0 if first == "agent" else 1)
    cells = [""] * 9
    for ply, a in enumerate(actions):
        cells[a] = "XO"[ply % 2]
    assert board == "".join(cells)
    if sims:
        assert page_sims == str(sims)
    name = f"{agent}@{sims}:det" if sims else agent
    assert [actions[i] for i in plies] == jax_moves(name, game, [actions[:i] for i in plies])
