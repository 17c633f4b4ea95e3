"""Pictures of positions: Connect Four's text ``env.render``, both games' ``render_svg`` (well-formed
SVG showing the right pieces of hand-played positions), the animated SVG and the GIF frames."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import jax
import numpy as np
import pytest

from c4jax.games import drawing
from c4jax.games.checkers import notation
from c4jax.games.checkers import svg as ck_svg
from c4jax.games.checkers.game import GAME as CHECKERS
from c4jax.games.connect_four import env
from c4jax.games.connect_four import svg as c4_svg

NS = {"s": "http://www.w3.org/2000/svg"}


def c4_state(moves):
    state = env.init()
    for m in moves:
        state = env.step(state, m)
    return jax.device_get(state)


def elements(svg: str | ET.Element, cls: str) -> list[ET.Element]:
    """The elements of an SVG (text, or a parsed element and what it holds) whose class list
    holds every word of ``cls``."""
    want = set(cls.split())
    root = ET.fromstring(svg) if isinstance(svg, str) else svg
    return [e for e in root.iter() if want <= set(e.get("class", "").split())]


def cells(svg: str, cls: str) -> set[tuple[int, int]]:
    return {(int(e.get("data-row")), int(e.get("data-col"))) for e in elements(svg, cls)}


def test_connect_four_text_render_of_a_hand_played_game():
    mid = c4_state([3, 2, 3])
    assert env.render(mid).splitlines() == [
        "0 1 2 3 4 5 6",
        *[". . . . . . ."] * 4,
        ". . . X . . .",
        ". . O X . . .",
        "O to move",
    ]
    won = c4_state([3, 3, 4, 4, 5, 5, 2])
    assert env.render(won).splitlines()[-3:] == [". . . O O O .", ". . X X X X .", "X wins"]
    assert env.status_text(c4_state([])) == "X to move"
    assert env.status_text(env.step(env.init(), 9)) == "O wins (X played an illegal move)"
    with pytest.raises(ValueError, match="one state"):
        env.render(jax.vmap(lambda _: env.init())(np.arange(2)))


def test_connect_four_svg_shows_the_stones_the_last_move_and_the_four():
    svg = c4_svg.render_svg(c4_state([3, 3, 4, 4, 5, 5, 2]), last_move=2, caption="ply 7: X plays 2")
    root = ET.fromstring(svg)  # well-formed
    assert root.tag == "{http://www.w3.org/2000/svg}svg" and root.get("data-status") == "red wins"
    assert cells(svg, "stone x") == {(5, 2), (5, 3), (5, 4), (5, 5)}
    assert cells(svg, "stone o") == {(4, 3), (4, 4), (4, 5)}
    assert len(elements(svg, "hole")) == 42 - 7 and len(elements(svg, "four")) == 4
    [dot] = elements(svg, "last-move")
    assert (float(dot.get("cx")), float(dot.get("cy"))) == c4_svg._centre(5, 2)
    texts = [e.text for e in root.iter("{http://www.w3.org/2000/svg}text")]
    assert texts[:7] == [str(c) for c in range(7)] and "red wins" in texts and "ply 7: X plays 2" in texts
    # the second player's stones keep their colour when the first player is to move
    mid = c4_svg.render_svg(c4_state([3, 2]))
    assert cells(mid, "stone x") == {(5, 3)} and cells(mid, "stone o") == {(5, 2)}
    assert not elements(mid, "last-move") and not elements(mid, "four")
    with pytest.raises(ValueError, match="column"):
        c4_svg.render_svg(c4_state([]), last_move=7)


def test_checkers_svg_shows_men_kings_and_the_last_move():
    state = notation.from_fen("W:W18,24,K27:B12,16,K22")
    svg = ck_svg.render_svg(state, last_move="11-16")
    root = ET.fromstring(svg)
    assert root.get("data-fen") == notation.to_fen(state) and root.get("data-status") == "white to move"

    def squares(cls):
        return sorted(int(e.get("data-square")) for e in elements(svg, cls))

    assert squares("piece black man") == [12, 16] and squares("piece black king") == [22]
    assert squares("piece white man") == [18, 24] and squares("piece white king") == [27]
    assert len(elements(svg, "crown")) == 2 and squares("last-move") == [11, 16]
    assert squares("square") == list(range(1, 33))
    # square 1 is the second square of the top row, square 32 the seventh of the bottom row
    first, last = (next(e for e in elements(svg, "square") if e.get("data-square") == n) for n in ("1", "32"))
    assert (float(first.get("x")), float(first.get("y"))) == (ck_svg.MARGIN + ck_svg.SQUARE, ck_svg.MARGIN)
    assert (float(last.get("x")), float(last.get("y"))) == (ck_svg.MARGIN + 6 * ck_svg.SQUARE,
                                                            ck_svg.MARGIN + 7 * ck_svg.SQUARE)
    start = ck_svg.render_svg(jax.device_get(CHECKERS.init()))
    assert sorted(int(e.get("data-square")) for e in elements(start, "piece black")) == list(range(1, 13))
    assert sorted(int(e.get("data-square")) for e in elements(start, "piece white")) == list(range(21, 33))
    assert ck_svg.move_squares("15x22x29") == [15, 22, 29]
    for bad in ("15", "15x33", "a-b", 12):
        with pytest.raises(ValueError):
            ck_svg.render_svg(state, last_move=bad)


def test_text_is_escaped():
    svg = drawing.to_svg(drawing.Scene(100, 50, (drawing.Text(5, 20, "<A & B>"),), title="a < b"))
    root = ET.fromstring(svg)
    assert root.find("s:text", NS).text == "<A & B>" and root.find("s:title", NS).text == "a < b"


def test_an_animation_steps_through_its_scenes_and_shows_the_last_one_without_smil():
    states = [c4_state([3, 2, 3][:k]) for k in range(4)]
    scenes = [c4_svg.scene(s, None if k == 0 else [3, 2, 3][k - 1], f"ply {k}") for k, s in enumerate(states)]
    svg = drawing.animate_svg(scenes, seconds=0.5, hold=2.0, footer_lines=["3 2 3"])
    root = ET.fromstring(svg)
    frames = elements(svg, "frame")
    assert root.get("data-frames") == "4" and len(frames) == 4
    assert [f.get("visibility") for f in frames] == ["hidden"] * 3 + [None]  # the last one shows without SMIL
    sets = [f.find("s:set", NS) for f in frames]
    assert [s.get("begin") for s in sets] == ["clock.begin+0s", "clock.begin+0.5s", "clock.begin+1s", "clock.begin"]
    assert sets[-1].get("to") == "hidden" and sets[-1].get("dur") == "1.5s"
    assert root.find(".//s:animate", NS).get("dur") == "3.5s"
    # the board they share is drawn once, each frame holds the rest of its scene
    assert len(elements(svg, "plate")) == 1 and len(elements(svg, "status")) == 4
    assert [len(elements(f, "stone")) for f in frames] == [0, 1, 2, 3]
    assert int(root.get("height")) > c4_svg.HEIGHT and "3 2 3" in [e.text for e in elements(svg, "footer")]
    with pytest.raises(ValueError, match="same size"):
        drawing.animate_svg([scenes[0], ck_svg.scene(jax.device_get(CHECKERS.init()))])


def test_the_raster_picture_has_the_scene_colours(tmp_path):
    scene = c4_svg.scene(c4_state([3]), last_move=3)
    image = drawing.to_image(scene)
    assert image.size == (c4_svg.WIDTH, c4_svg.HEIGHT)
    x, y = c4_svg._centre(5, 3)
    assert image.getpixel((int(x) + 12, int(y))) == (0xE0, 0x31, 0x2F)  # the red stone (beside the dot)
    assert image.getpixel((int(x), int(y))) == (0xFF, 0xFF, 0xFF)  # the last move's dot
    assert image.getpixel((int(c4_svg._centre(5, 0)[0]), int(y))) == (0xF4, 0xF1, 0xEA)  # an empty hole
    path = drawing.write_gif([scene, c4_svg.scene(c4_state([3, 3]), 3)], tmp_path / "g.gif", seconds=0.2)
    from PIL import Image

    with Image.open(path) as gif:
        assert gif.n_frames == 2 and gif.info["loop"] == 0
