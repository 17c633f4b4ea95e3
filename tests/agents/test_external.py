"""agents.from_callable: a NumPy policy plays protocol matches, a tournament, the yardstick and the
play UI, and makes exactly the moves the policy chooses."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from c4jax import agents, evaluation
from c4jax.agents import registry
from c4jax.evaluation import yardstick
from c4jax.games.connect_four import env
from c4jax.play import answers, server

CENTRE = -np.abs(np.arange(7) - 3).astype(np.float32)  # 3, then 2 and 4, then 1 and 5, ...


def centre_scores(boards: np.ndarray) -> np.ndarray:
    """A NumPy policy: prefer the columns near the centre."""
    assert isinstance(boards, np.ndarray) and boards.dtype == np.int8 and boards.shape[1:] == (6, 7)
    return np.tile(CENTRE, (len(boards), 1))


def centre_column(board: np.ndarray) -> int:
    """The column ``centre_scores`` makes the agent play: the most central free one, the lower index on ties."""
    return int(np.argmax(np.where(board[0] == 0, CENTRE, -np.inf)))


# compiled once: the games' replays below take a thousand steps, each tens of operations when run op by op
_step, _observe = jax.jit(env.step), jax.jit(env.observe)


def _own_moves(game, a_first: bool):
    """(board before the move, the move) for every move of agent A after the opening."""
    s = env.init()
    opening = 0 if game.opening == 0 else 2
    for ply, col in enumerate(game.moves):
        a_moves = (ply % 2 == 0) == a_first
        if ply >= opening and a_moves:
            yield np.asarray(_observe(s)), col
        s = _step(s, col)


def test_a_numpy_policy_plays_its_own_moves_in_a_protocol_match():
    agent = agents.from_callable(centre_scores, name="centre")
    np.testing.assert_array_equal(np.asarray(agent.scores(np.zeros((1, 6, 7), np.int8)))[0], CENTRE)
    result = evaluation.match(agent, agents.load("1steplA"), jax.random.key(0))
    assert result.agent_a == "centre" and len(result.games) == 100
    checked = 0
    for game in result.games:
        for board, col in _own_moves(game, game.a_first):
            assert col == centre_column(board)
            checked += 1
    assert checked > 100


def test_a_stochastic_action_policy_gets_a_generator_seeded_by_the_key():
    calls = []

    def random_legal(boards, rng):
        calls.append(len(boards))
        return np.array([rng.choice(np.flatnonzero(b[0] == 0)) for b in boards])

    agent = agents.from_callable(random_legal, name="rnd", returns="actions", stochastic=True)
    boards = np.zeros((64, 6, 7), np.int8)
    a, b = (np.asarray(agent.act(boards, jax.random.key(k))) for k in (1, 1))
    c = np.asarray(agent.act(boards, jax.random.key(2)))
    np.testing.assert_array_equal(a, b)
    assert (a != c).any() and calls == [64, 64, 64]
    scores = np.asarray(agent.scores(boards[:1]))[0]
    assert sorted(scores.tolist()) == [0.0] * 6 + [1.0]
    result = evaluation.match(agent, agents.load("random"), jax.random.key(0))
    assert 0.0 <= result.win_rate <= 1.0 and sum(len(g.moves) for g in result.games) > 500


def test_a_numpy_policy_joins_a_tournament_and_the_yardstick():
    agent = agents.from_callable(centre_scores, name="centre")
    t = evaluation.round_robin([agent, agents.load("random"), agents.load("1steplA")], jax.random.key(0),
                               progress=False)
    assert list(t.names) == ["centre", "random", "1steplA:det"]
    ranking = t.table_5_3()
    assert {row[1] for row in ranking.rows} == {"centre", "random", "1steplA:det"}
    graded = yardstick.optimal_move_rate(agent, jax.random.key(0))
    pos = yardstick.load_positions()
    # grade it by hand: its column keeps the outcome where the solver's score of that column has the best sign
    boards = np.asarray(pos.boards)[np.asarray(pos.nontrivial)]
    scores = np.asarray(pos.scores)[np.asarray(pos.nontrivial)]
    cols = np.array([centre_column(b) for b in boards])
    best = np.sign(np.where(scores > -100, scores, -100).max(axis=1))
    keep = np.mean(np.sign(scores[np.arange(len(cols)), cols]) == best)
    assert graded["yardstick/keep"] == pytest.approx(keep)


def test_a_registered_python_policy_plays_in_the_ui(monkeypatch):
    monkeypatch.setitem(registry._REGISTRY, "centre", lambda mode: agents.from_callable(centre_scores, name="centre"))
    assert "centre" in agents.known_names()
    catalogue = server.Catalogue(["centre"])
    view = answers.game_answer(catalogue.get("centre"), [0], human_first=True, play=True)
    assert view["agent_move"] == 3 and view["moves"] == [0, 3]
    assert view["scores"] is not None
