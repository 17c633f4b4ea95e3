"""``openspiel-mcts<N>``: OpenSpiel's C++ MCTS as an opponent (c4jax.games.connect_four.openspiel_mcts).

The board -> move order reconstruction is checked on random games against the game's own
``step``; the agent plays legal, key-reproducible moves, takes a win in one, and plays a match."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from c4jax import agents
from c4jax.games.connect_four import openspiel_mcts
from c4jax.games.connect_four import env

needs_openspiel = pytest.mark.skipif(not openspiel_mcts.openspiel_available(),
                                     reason="OpenSpiel (the bench-search extra) is not installed")


_step = jax.jit(env.step)


def _play(columns) -> tuple[np.ndarray, list[int]]:
    """The observed board after the legal prefix of ``columns`` that ends no game, and that prefix."""
    s = env.init()
    played = []
    for c in columns:
        if not bool(s.legal_mask[c]):
            continue
        nxt = _step(s, c)
        if bool(nxt.done):
            break
        s = nxt
        played.append(c)
    return np.asarray(env.observe(s)), played


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=41))
def test_the_move_order_replays_to_the_same_board(columns):
    board, _ = _play(columns)
    order = openspiel_mcts.move_order(board)
    again, played = _play(order)
    assert played == order  # every move legal, no game ended on the way
    np.testing.assert_array_equal(again, board)


@pytest.mark.parametrize("edit, message", [
    (lambda b: b.__setitem__((4, 0), -1), "above an empty cell"),  # a floating piece
    (lambda b: b.__setitem__((slice(3, 6), 2), 1), "no game gives"),  # three extra pieces of one side
])
def test_boards_no_game_gives_are_refused(edit, message):
    board = np.zeros((6, 7), np.int8)
    edit(board)
    with pytest.raises(ValueError, match=message):
        openspiel_mcts.move_order(board)


def test_bad_names_are_refused():
    for name in ("openspiel-mcts0", "openspiel-mctsx", "openspiel-mcts1000:det"):
        with pytest.raises(ValueError, match="openspiel-mcts"):
            agents.load(name)


@needs_openspiel
def test_it_plays_legal_reproducible_moves_and_takes_a_win():
    agent = agents.load("openspiel-mcts200")
    win = np.zeros((6, 7), np.int8)
    win[5, 0:3] = 1  # the player to move has three in the bottom row: column 3 wins
    win[5, 4:6] = -1
    win[4, 4] = -1
    boards = np.stack([np.zeros((6, 7), np.int8), win])
    first = np.asarray(agent.act(boards, jax.random.key(3)))
    np.testing.assert_array_equal(first, np.asarray(agent.act(boards, jax.random.key(3))))
    assert first[1] == 3


@needs_openspiel
def test_it_plays_a_protocol_match():
    from c4jax.evaluation import protocol

    assert protocol.win_rate(agents.load("openspiel-mcts8"), agents.load("random"), jax.random.key(0)) > 0.6
