"""``experiments/watch.py`` in this process: one game of each game between two agents, printed,
as an animated SVG and as a GIF; the printed moves replay to the printed final position and make
the play-UI link; bad agent names and agents of the other game are one-line errors (exit 2)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from urllib.parse import parse_qs, urlsplit

import jax
import pytest
from PIL import Image

from c4jax.games.checkers import notation
from c4jax.games.checkers.game import GAME as CHECKERS
from c4jax.games.connect_four import env
from command import error_of
from scripts import run_script


def field(stdout: str, name: str) -> str:
    return re.search(rf"^{name}: (.*)$", stdout, re.M).group(1)


def test_connect_four_text_svg_and_gif(tmp_path):
    svg, gif = tmp_path / "out" / "game.svg", tmp_path / "game.gif"
    p = run_script("watch.py", "1steplA", "random", "--svg", svg, "--gif", gif, "--seconds", "0.25")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("Connect Four: A 1steplA:det (X, red, first) vs B random (O, yellow), seed 0")
    moves = [int(m) for m in field(p.stdout, r"moves \(columns 0-6\)").split()]
    state = env.init()
    for m in moves:
        state = env.step(state, m)
    assert env.render(state) in p.stdout and bool(state.done)  # the printed final position
    result = field(p.stdout, "result")
    winner = {1: "A 1steplA:det", -1: "B random", 0: "draw"}[int(state.winner)]
    assert result.startswith(winner) and f"{len(moves)} plies" in result
    link = urlsplit(field(p.stdout, "play it"))
    assert (link.scheme, link.netloc, link.path) == ("http", "127.0.0.1:8000", "/")
    query = parse_qs(link.query)
    assert query == {"agent": ["random"], "moves": [",".join(map(str, moves))], "first": ["human"]}

    root = ET.fromstring(svg.read_text())
    assert root.get("data-frames") == str(len(moves) + 1)
    texts = [e.text for e in root.iter("{http://www.w3.org/2000/svg}text")]
    last = (len(moves) - 1) % 2  # the player of the last ply: 0 is A, the first
    who, side = ("A 1steplA:det", "X, red") if last == 0 else ("B random", "O, yellow")
    assert f"ply {len(moves)}: {who} ({side}) plays {moves[-1]}" in texts and result in texts
    with Image.open(gif) as image:
        assert image.n_frames == len(moves) + 1 and image.size[0] == int(root.get("width"))


@pytest.mark.slow
def test_checkers_every_position_svg_and_gif(tmp_path):
    svg, gif = tmp_path / "ck.svg", tmp_path / "ck.gif"
    p = run_script("watch.py", "random", "random:sto", "--game", "checkers", "--first", "b", "--seed", "5", "--every",
                   "--svg", svg, "--gif", gif)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("Checkers: B checkers/random (black, first) vs A checkers/random (white), seed 5")
    link = urlsplit(field(p.stdout, "play it"))
    query = parse_qs(link.query)
    assert query["game"] == ["checkers"] and query["agent"] == ["checkers/random"] and query["first"] == ["agent"]
    actions = [int(a) for a in query["moves"][0].split(",")]
    # the actions replay to the printed positions, and the PDN record names them (a multi-jump as one move)
    step = jax.jit(CHECKERS.step)
    state = jax.device_get(CHECKERS.init())
    expected: list[str] = []
    previous = None  # the player of the ply before
    for ply, action in enumerate(actions, 1):
        name, player = notation.action_to_pdn(state, action), int(state.current_player)
        if ply > 1 and player == previous and "x" in name:
            expected[-1] += name[name.index("x"):]
        else:
            expected.append(name)
        previous = player
        state = jax.device_get(step(state, action))
        assert f"\nply {ply}: " in p.stdout and notation.render(state) in p.stdout
    record = field(p.stdout, r"moves \(PDN\)")
    assert record.startswith("1. ") and [t for t in record.split() if not t.endswith(".")] == expected
    assert notation.status_text(state).startswith("game over")
    root = ET.fromstring(svg.read_text())
    assert root.get("data-frames") == str(len(actions) + 1)
    with Image.open(gif) as image:
        assert image.n_frames == len(actions) + 1


@pytest.mark.parametrize("args, message", [
    (("nobody", "random"), "cannot load agent 'nobody': unknown agent 'nobody'"),
    (("random", "1steplA:maybe"), "cannot load agent '1steplA:maybe'"),
    (("random", "1steplA", "--game", "checkers"), "agent '1steplA' (1steplA:det) cannot play Checkers: only random, "
                                                  "pure MCTS (mcts<N>) and agents trained on Checkers can"),
    (("random", "random", "--seconds", "0"), "--seconds must be positive"),
])
def test_bad_agents_are_one_line_errors(args, message, tmp_path):
    p = run_script("watch.py", *args, "--svg", tmp_path / "never.svg")
    assert p.returncode == 2
    assert error_of(p.stderr).startswith(f"error: {message}"), p.stderr
    assert "Traceback" not in p.stderr and p.stdout == "" and not (tmp_path / "never.svg").exists()


def test_an_output_that_is_a_directory_is_refused_before_playing(tmp_path):
    p = run_script("watch.py", "random", "random", "--gif", tmp_path)
    assert p.returncode == 2 and p.stderr == f"error: --gif {str(tmp_path)!r} is a directory; give the path of a file\n"
