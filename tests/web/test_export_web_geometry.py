"""The static site of ``c4jax export-web`` draws a board from its view's geometry: Hex on 3 x 3 hexagons
(tests/support/hex_game.py, registered from a temporary folder), its rules exported as ONNX, against an
untrained network agent. The site's manifest holds the geometry, and the page in headless Chromium draws the
hexagons, links and sides, and plays the cells clicked to the end of a game. Building the site converts the
models (minutes): marked slow. Needs npm and Chromium; skipped without them."""

from __future__ import annotations

import json

import pytest

from browser import CHROMIUM
from export_web_site import CHECK_POSITIONS, IDLE, NPM, click_to_the_end, serve, site_page, tiny_agent
from hex_game import registered_hex

if NPM is None or CHROMIUM is None:
    pytest.skip("the site's browser tests need npm and Chromium (apt-get install -y nodejs npm chromium)",
                allow_module_level=True)

from c4jax import games
from c4jax.cli import website

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """``(folder, url)``: a site with one Hex agent, served."""
    root = tmp_path_factory.mktemp("hex_site")
    with registered_hex(root / "games") as game:
        agent = str(tiny_agent(root / "hex_agent", game))
        folder = root / "site"
        website.build(folder, [agent], check_positions=CHECK_POSITIONS, log=lambda *_: None)
        with serve(folder) as url:
            yield folder, url


def test_the_site_draws_the_hexagons_and_plays_the_cells_clicked(site):
    folder, url = site
    page_of = json.loads((folder / "agents.json").read_text())["games"]["hex"]["page"]
    assert page_of["geometry"] == games.view("hex").PAGE["geometry"]
    with site_page(url, "?game=hex&first=human") as (page, errors, outside):
        page.wait_for_selector(IDLE)
        drawn = (page.locator("#board #squares polygon.grid-cell").count(), page.locator("#board line.link").count(),
                 page.locator("#board line.side").count(), page.locator("#board #hits polygon.cell").count())
        clicked = click_to_the_end(page, lambda legal: legal[0], 9)
        actions = [int(x) for x in page.get_attribute("#board", "data-actions").split(",") if x]
        status = page.get_attribute("#status", "data-status")
        pieces = page.locator("#board .piece").count()
    assert drawn == (9, 16, 4, 9)
    assert status in ("human_won", "agent_won"), status  # Hex has no draws
    assert actions[::2] == clicked and pieces == len(actions)
    assert outside == [] and errors == []
