"""A board drawn from its view's geometry (c4jax.games.geometry): Hex on 3 x 3 hexagons (tests/support/hex_game.py,
its view the guide's), registered from a temporary folder. Its text diagram shifts each row, its picture has a
polygon per cell, the links and the players' sides, and its page in the play UI (headless Chromium, skipped where
it or Playwright is missing) draws the same and plays the cell clicked. Also: ``GridView``'s ``page_options``
replace its own page arguments, and a view without a geometry draws the squares it always drew."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from c4jax import games
from c4jax.games import drawing, geometry
from c4jax.games.viewbase import GridView

from browser import game_page, needs_browser
from hex_game import registered_hex
from playserver import request, serving

N, LINKS = 3, 16  # 3 x 3 cells; 6 links along rows, 6 between rows straight down-right, 4 down-left


@pytest.fixture(scope="module")
def hex_game(tmp_path_factory):
    with registered_hex(tmp_path_factory.mktemp("hex")) as game:
        yield game


def elements(svg: str, tag: str, cls: str = "") -> list[ET.Element]:
    return [e for e in ET.fromstring(svg).iter(f"{{http://www.w3.org/2000/svg}}{tag}")
            if not cls or cls in e.get("class", "").split()]


def test_the_game_passes_the_conformance_suite_and_its_view_has_the_geometry(hex_game):
    from c4jax.games import testing

    assert testing.check(hex_game).games == 16 and testing.check_kit(games.kit_of("hex")) == "hex"
    view = games.view("hex")
    rep = view.replay([1, 0, 4, 3, 7])  # Red joins the top and bottom rows down the middle column
    assert [float(x) for x in rep.state(5).rewards] == [1.0, -1.0]
    geo = view.PAGE["geometry"]
    assert geo == view.geometry.json() and geo["shape"] == "hex" and len(geo["cells"]) == N * N
    assert len(geo["links"]) == LINKS and [s["player"] for s in geo["sides"]] == [0, 0, 1, 1]
    assert view.PAGE["pieces"] == {"1": "disc"} and view.PAGE["seats"] == ["x", "o"]  # the view's page_options


def test_page_options_replace_the_view_s_own_and_no_geometry_is_squares(hex_game):
    plain = GridView(hex_game, "Hex", page_options={"pieces": {"1": "disc"}, "seats": ("red", "blue"),
                                                    "board": "squares", "record": None})
    assert (plain.PAGE["pieces"], plain.PAGE["seats"], plain.PAGE["board"], plain.PAGE["record"]) == (
        {"1": "disc"}, ["red", "blue"], "squares", None)
    assert "geometry" not in plain.PAGE and plain.PAGE["click"] == "cell"
    state = plain.replay([4, 0]).state(2)
    assert plain.render(state) == "O . .\n. X .\n. . ."
    squares = geometry.Geometry({(r, c): (c + 0.5, r + 0.5) for r in range(N) for c in range(N)}, N, N)
    assert GridView(hex_game, "Hex", geometry=squares).render(state) == plain.render(state)
    svg = drawing.to_svg(plain.scene(state))
    assert len(elements(svg, "rect")) == 1 + N * N and not elements(svg, "polygon") and not elements(svg, "line")


def test_a_geometry_is_checked():
    with pytest.raises(ValueError, match="cell shape 'star'"):
        geometry.Geometry({(0, 0): (0.5, 0.5)}, 1, 1, shape="star")
    with pytest.raises(ValueError, match="not on the board"):
        geometry.Geometry({(0, 0): (0.5, 0.5)}, 1, 1, links=(((0, 0), (0, 1)),))
    with pytest.raises(ValueError, match="player 2"):
        geometry.Geometry({(0, 0): (0.5, 0.5)}, 1, 1, sides=((2, (0, 0), (1, 0)),))
    with pytest.raises(ValueError, match="its actions are columns"):
        GridView(games.make("connect_four"), "Four", geometry=geometry.hexes(6, 7))


def test_the_text_diagram_shifts_each_row_of_hexagons(hex_game):
    view = games.view("hex")
    assert view.render(view.replay([]).state(0)) == ". . .\n . . .\n  . . ."
    assert view.render(view.replay([1, 0, 4, 3, 7]).state(5)) == "B R .\n B R .\n  . R ."


def test_the_picture_has_a_polygon_per_cell_the_links_and_the_sides(hex_game, tmp_path):
    view = games.view("hex")
    rep = view.replay([1, 0, 4])
    svg = drawing.to_svg(view.scene(rep.state(3), rep.state(2), 4, "ply 3"))
    cells = elements(svg, "polygon", "cell")
    assert len(cells) == N * N and all(len(c.get("points").split()) == 6 for c in cells)
    assert sorted(c.get("data-cell") for c in cells) == sorted(f"{r}-{c}" for r in range(N) for c in range(N))
    assert [c.get("fill") for c in cells if c.get("data-cell") == "1-1"] == ["#ffe98a"]  # the last move
    assert len(elements(svg, "line", "link")) == LINKS
    assert [s.get("data-player") for s in elements(svg, "line", "side")] == ["0", "0", "1", "1"]
    assert [t.text for t in elements(svg, "text")] == ["B", "R", "R", "ply 3"]
    # the centre cell's hexagon lies around its centre, 60 pixels per board unit under a 30-pixel caption band
    x, y = view.geometry.cells[(1, 1)]
    points = np.array([[float(v) for v in p.split(",")] for p in cells[4].get("points").split()])
    assert np.allclose(points.mean(axis=0), [60 * x, 30 + 60 * y], atol=0.1)
    image = drawing.to_image(view.scene(rep.state(3)), scale=1)
    assert image.size == (round(60 * view.geometry.width), 30 + round(60 * view.geometry.height))


def test_watch_prints_and_draws_the_hex_board(hex_game, tmp_path, capsys):
    from PIL import Image

    from c4jax.cli import watch

    svg, gif = tmp_path / "hex.svg", tmp_path / "hex.gif"
    watch.main(watch.Args("hex/random", "hex/random", game="hex", every=True, svg=svg, gif=gif, seconds=0.25))
    out = capsys.readouterr().out
    assert out.startswith("Hex: A hex/random (Red, first) vs B hex/random (Blue)")
    assert ". . .\n . . .\n  . . ." in out  # the start position, rows shifted
    root = ET.fromstring(svg.read_text())
    frames = int(root.get("data-frames"))
    cell = lambda e: e.tag.endswith("polygon") and e.get("class") == "cell"  # noqa: E731
    shared = sum(cell(e) for e in root)  # drawn once for every frame
    groups = [g for g in root if g.get("class", "").startswith("frame")]
    assert len(groups) == frames and all(shared + sum(map(cell, g)) == N * N for g in groups)
    with Image.open(gif) as image:
        assert image.n_frames == frames


# --------------------------------------------------------------------------- the play UI

@pytest.fixture(scope="module")
def port(hex_game):
    from c4jax.play.catalogue import Catalogue

    catalogue = Catalogue(["random"], game_agents={"hex": ["hex/random"]}, log=lambda *a: None)
    with serving(catalogue) as p:
        yield p


def test_the_play_api_sends_the_geometry(port):
    status, info = request(port, "GET", "/api/agents")
    game = next(g for g in info["games"] if g["id"] == "hex")
    assert status == 200 and game["page"] == games.view("hex").PAGE and "geometry" in game["page"]


@needs_browser()
def test_the_page_draws_the_hexagons_and_sides_and_plays_the_cell_clicked(port, tmp_path):
    view = games.view("hex")
    with game_page(port, "hex", "hex/random") as (pg, problems, idle):
        board = "[data-testid=board]"
        assert pg.locator("#squares polygon.grid-cell").count() == N * N
        assert pg.locator("#squares line.link").count() == LINKS
        assert [pg.get_attribute(f"[data-testid=side-{i}]", "class") for i in range(4)] == [
            "side x", "side x", "side o", "side o"]
        hits = pg.locator("#hits polygon.cell")
        assert hits.count() == N * N and pg.locator("[data-testid^=cell-]").count() == N * N
        assert pg.locator("[data-testid^=score-]").count() == N * N  # the agent's score on every empty cell
        # the cell clicked is the action played; its disc lies at the cell's centre
        before = int(pg.get_attribute(board, "data-ply"))
        pg.click("[data-testid=cell-1-2]")
        pg.wait_for_selector(f'{idle}:not([data-ply="{before}"])')
        disc = pg.locator("[data-testid=piece-1-2]")
        assert disc.count() == 1 and "x" in disc.get_attribute("class").split()
        x, y = view.geometry.cells[(1, 2)]
        assert (float(disc.get_attribute("cx")), float(disc.get_attribute("cy"))) == pytest.approx(
            (100 * x, 100 * y), abs=0.01)
        assert "c2" in pg.locator("[data-testid=move-list] .move").first.inner_text()
        clicks = 1
        while pg.get_attribute(board, "data-status") == "human_turn":  # play on to the end
            free = next((r, c) for r in range(N) for c in range(N)
                        if pg.locator(f"[data-testid=piece-{r}-{c}]").count() == 0)
            before = int(pg.get_attribute(board, "data-ply"))
            pg.click(f"[data-testid=cell-{free[0]}-{free[1]}]")
            pg.wait_for_selector(f'{idle}:not([data-ply="{before}"])')
            clicks += 1
            assert pg.locator(f"[data-testid=piece-{free[0]}-{free[1]}].x.human").count() == 1
            assert clicks <= 5
        assert pg.get_attribute(board, "data-status") in ("human_won", "agent_won")  # Hex has no draws
        assert pg.locator("[data-testid=last-move]").count() == 1
        pg.screenshot(path=str(tmp_path / "hex.png"), full_page=True)
        assert not problems, problems
