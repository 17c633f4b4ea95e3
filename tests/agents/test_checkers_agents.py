"""Agents of another game than Connect Four: '<game>/<agent>' names, checkpoints that record their
game, Checkers agents trained by the project in the registry, the play UI's menu and matches."""

from __future__ import annotations

import csv
import re

import jax
import numpy as np
import pytest

from c4jax import agents, evaluation, games
from c4jax.agents.network_search import AlphaZeroAgent
from c4jax.io import checkpoint
from c4jax.nets import tower as towers
from c4jax.play import server
from scripts import run_script

CHECKERS = games.make("checkers")


def _save_tiny(directory, game: str = "checkers", simulations: int = 2, default_mode: str = "det"):
    params = towers.init_params(jax.random.key(0), tower=(1, 4), game=games.make(game))
    meta = {"name": directory.name, "algorithm": "alphazero", "game": game,
            "network": {"width": 128, "heads": "two", "tower": [1, 4]},
            "agent": {"output": "policy", "default_mode": default_mode, "search": {"simulations": simulations}}}
    checkpoint.save(directory, {"params": params}, meta)


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """A checkpoints/ folder with a tiny Checkers agent ``checkers/tiny`` and a policy network ``checkers/pol``."""
    _save_tiny(tmp_path / "checkers" / "tiny")
    _save_tiny(tmp_path / "checkers" / "pol", simulations=0, default_mode="sto")
    monkeypatch.setenv("C4JAX_CHECKPOINTS", str(tmp_path))
    return tmp_path


def test_game_prefixed_builtin_names():
    mcts = agents.load("checkers/mcts20:det")
    assert agents.game_of(mcts) == "checkers" and mcts.num_simulations == 20 and not mcts.stochastic
    assert agents.game_of(agents.load("Checkers/Random")) == "checkers"
    assert agents.game_of(agents.load("connect_four/1steplA")) == "connect_four"
    assert agents.game_of(agents.load("mcts20")) == "connect_four"
    for bad, message in [("checkers/2steplA", "unknown checkers agent"), ("checkers/random:det", "no deterministic"),
                         ("checkers/mcts0", "number of simulations"), ("checkers/mcts20:fast", "suffix must be"),
                         ("checkers/random@x", "'@' must be followed by a number")]:
        with pytest.raises(ValueError, match=message):
            agents.load(bad)


def test_a_shipped_checkers_agent_loads_with_its_game(shipped):
    assert agents.known_names("checkers") == ["checkers/mcts1000", "checkers/pol", "checkers/random", "checkers/tiny"]
    assert "checkers/tiny" not in agents.known_names()  # Connect Four's names stay Connect Four's
    tiny = agents.load("checkers/tiny")
    assert isinstance(tiny, AlphaZeroAgent) and tiny.game is CHECKERS and tiny.num_simulations == 2
    assert not tiny.stochastic
    raw = agents.load("checkers/tiny@0:sto")
    assert raw.num_simulations == 0 and raw.stochastic
    pol = agents.load("checkers/pol")  # a policy network: sampled by default, as its metadata says
    assert pol.stochastic and pol.num_simulations == 0
    searching = agents.load("checkers/pol@3")  # a search plays its most visited move unless :sto
    assert searching.num_simulations == 3 and not searching.stochastic
    by_path = agents.load(str(shipped / "checkers" / "tiny"))  # a path: the game is the checkpoint's
    assert by_path.game is CHECKERS
    states = jax.jit(jax.vmap(CHECKERS.init))(jax.random.split(jax.random.key(0), 3))  # one compile, not one per op
    for agent in (tiny, raw):
        scores = np.asarray(agent.scores_states(states))
        legal = np.asarray(states.legal_action_mask)
        assert np.all(np.isneginf(scores[~legal])) and np.allclose(scores[legal].reshape(3, -1).sum(-1), 1, atol=1e-5)
        moves = np.asarray(agent.act_states(states, jax.random.key(1)))
        assert legal[np.arange(3), moves].all()


def test_a_checkpoint_of_another_game_is_refused_where_connect_four_is_expected(shipped):
    with pytest.raises(checkpoint.CheckpointError, match="is of the game 'checkers', not 'connect_four'"):
        checkpoint.read_metadata(shipped / "checkers" / "tiny", game="connect_four")
    assert checkpoint.read_metadata(shipped / "checkers" / "tiny")["game"] == "checkers"
    _save_tiny(shipped / "checkers" / "c4", game="connect_four")  # a Connect Four agent filed under checkers/
    with pytest.raises(ValueError, match="plays connect_four, not checkers"):
        agents.load("checkers/c4")


def test_a_checkers_agent_plays_matches_and_the_ui_offers_it(shipped):
    result = evaluation.match(agents.load("checkers/tiny@0"), agents.load("checkers/random"), jax.random.key(0),
                              game=CHECKERS)
    assert len(result.games) == 100 and 0.0 <= result.win_rate <= 1.0
    # the 50 openings: the start and all 7 x 7 pairs of first moves, each once per seat, replayable
    moves, _ = evaluation.protocol.game_openings(CHECKERS)
    assert len({tuple(m) for m in moves}) == 50 and sum(g.a_first for g in result.games) == 50
    step = jax.jit(CHECKERS.step)
    for g in result.games[::17]:
        state = CHECKERS.init(jax.random.key(0))
        for m in g.moves:
            assert bool(state.legal_action_mask[m])
            state = step(state, m)
        assert bool(state.terminated | state.truncated) and g.length == len(g.moves) - (2 if g.opening else 0)
    assert not server.Catalogue(names=["random"], log=lambda m: None).menu("checkers").entries.keys() - {"checkers/random"}
    catalogue = server.Catalogue(log=lambda m: None)  # the default menu offers the agents trained on Checkers
    checkers = catalogue.menu("checkers").entries
    assert {"checkers/tiny@2:det", "checkers/tiny@2:sto", "checkers/pol:sto", "checkers/pol:det",
            "checkers/random"} <= set(checkers)
    entry = checkers["checkers/pol:sto"]
    assert entry.kind == "policy" and "trained policy" in entry.scores_label
    for name in checkers:  # every name on the menu is one agents.load takes, for the same agent
        assert agents.canonical_name(agents.load(name)).lower() == name
    with pytest.raises(ValueError, match="cannot play Checkers"):
        server.Catalogue(names=["random"], game_agents={"checkers": ["1steplA"]}, log=lambda m: None)
    assert "checkers/tiny@2:det" in server.Catalogue(names=["random"], game_agents={"checkers": ["checkers/tiny"]}) \
        .menu("checkers").entries


@pytest.mark.slow
def test_a_checkers_tournament(shipped, tmp_path):
    out = tmp_path / "t"
    done = run_script("tournament.py", "--agents", "checkers/random", "checkers/tiny@0", "--out", out, "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    report = (out / "report.md").read_text()
    assert "100 games of checkers per match: the 50 openings (the start position + 49 two-ply openings)" in report
    assert "random unfinished checkers positions (random legal play)" in report and "?game=checkers&agent=" in report
    timed = [r["agent"] for r in csv.DictReader(open(out / "table_5_1_timing.csv"))]
    assert timed == ["checkers/random", "checkers/tiny@policy:det"]
    for name in re.findall(r"agent=([^&]+)&", report):  # every example game's link names an agent the server loads
        assert agents.load(name).name in {"checkers/random", "checkers/tiny@policy:det"}
    assert evaluation.Tournament.load_json(out / "tournament.json").game == "checkers"
    mixed = run_script("tournament.py", "--agents", "checkers/random", "random", "--out", tmp_path / "m")
    assert mixed.returncode != 0 and "the agents play different games" in mixed.stderr
