"""Seed 002's minimax (c4jax.games.connect_four.minimax, agents ``minimax<D>``) against a plain-Python
alpha-beta written from the seed's pseudocode (tests/support/minimax_reference.py): the same root value and
move on random positions, the same value for every column; hand-played wins and blocks; jit and
op-by-op alike; the names ``agents.load`` takes."""

from __future__ import annotations

from functools import cache

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minimax_reference as ref

from c4jax import agents
from c4jax.games.connect_four import minimax as mm


def first_best(values, legal):
    """int32[B]: the lowest column of the largest value (the deterministic tie rule)."""
    return jnp.argmax(mm.best_columns(values, legal), axis=-1).astype(jnp.int32)


def _random_positions(n: int, seed: int) -> np.ndarray:
    """int8[n, 6, 7]: unfinished boards (player to move = 1) after 0..34 uniformly random moves."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        board, piece, ok = [0] * 42, 1, True
        for _ in range(int(rng.integers(0, 35))):
            cell = ref.drop_cell(board, int(rng.choice(ref.valid_locations(board))))
            board[cell] = piece
            piece = -piece
            if ref.winning_move(board, -piece, cell):
                ok = False
                break
        if ok and ref.valid_locations(board):
            out.append([x * piece for x in board])  # the player to move holds the 1 stones
    return np.array(out, np.int8).reshape(n, 6, 7)


@cache
def _search(depth: int):
    return jax.jit(lambda boards: mm.column_values(boards, depth))


POSITIONS = _random_positions(300, seed=0)


@cache
def _ours(depth: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(values, legal, deterministic moves) of the first ``n`` positions, one compiled search per depth and n."""
    values, legal = _search(depth)(jnp.asarray(POSITIONS[:n]))
    return np.asarray(values), np.asarray(legal), np.asarray(first_best(values, legal))


def _mismatches(depth: int, n: int) -> list:
    """(position, ours, the reference's) for each of the first ``n`` positions whose root value or move differs."""
    values, legal, moves = _ours(depth, n)
    root = np.where(legal, values, mm.ILLEGAL).max(axis=-1)
    bad = []
    for i, board in enumerate(POSITIONS[:n]):
        col, val = ref.best_move(board.reshape(-1).tolist(), depth)
        if (col, val) != (moves[i], root[i]):
            bad.append((i, (int(moves[i]), int(root[i])), (col, val)))
    return bad


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_the_root_value_and_move_are_alpha_betas_on_random_positions(depth):
    """200 random positions at depths 1-3, 12 at depths 4 and 5 (the slow test below: 300 at depths 1-5)."""
    assert _mismatches(depth, 200) == []


@pytest.mark.parametrize("depth", [4, 5])
def test_the_root_value_and_move_are_alpha_betas_deeper(depth):
    assert _mismatches(depth, 12) == []


@pytest.mark.slow
@pytest.mark.parametrize("depth", [1, 2, 3, 4, 5])
def test_the_root_value_and_move_are_alpha_betas_on_300_positions(depth):
    assert _mismatches(depth, 300) == []


@pytest.mark.parametrize("depth, n", [(1, 30), (2, 30), (3, 30), (4, 6)])
def test_every_column_has_its_exact_minimax_value(depth, n):
    """Each column's value is the reference's full-window search of that child (full columns ILLEGAL)."""
    values, legal, _ = _ours(depth, 200 if depth < 4 else 12)
    expected = [[mm.ILLEGAL if v is None else v for v in ref.column_values(b.reshape(-1).tolist(), depth)]
                for b in POSITIONS[:n]]
    np.testing.assert_array_equal(values[:n], np.array(expected, np.int32))
    np.testing.assert_array_equal(legal, POSITIONS[:len(legal), 0, :] == 0)


def test_the_agents_scores_are_the_values_and_its_move_the_first_best():
    """The minimax2 agent's scores: the values as float32 (exact), full columns -inf; act: the lowest best column."""
    values, legal, moves = _ours(2, 200)
    agent = agents.load("minimax2")
    scores = np.asarray(agent.scores(POSITIONS[:200]))
    np.testing.assert_array_equal(scores, np.where(legal, values, -np.inf).astype(np.float32))
    np.testing.assert_array_equal(np.asarray(agent.act(POSITIONS[:200], jax.random.key(0))), moves)
    root = np.asarray(jax.jit(lambda b: mm.value(b, 2))(jnp.asarray(POSITIONS[:200])))
    np.testing.assert_array_equal(root, np.where(legal, values, mm.ILLEGAL).max(axis=-1))


def _board(rows: list[str]) -> np.ndarray:
    """The public board of a picture (bottom rows last; ``x`` = player to move, ``o`` = opponent)."""
    rows = ["......."] * (6 - len(rows)) + rows
    return np.array([[{"x": 1, "o": -1, ".": 0}[c] for c in r] for r in rows], np.int8)


WIN_NOW = _board(["oo.....", "xxx.oo."])  # x wins at column 3
VERTICAL = _board(["o......", "o.....x", "o.x...x"])  # o wins at column 0 unless x plays there
HAND = np.stack([WIN_NOW, VERTICAL])


# depths 5-7 compile searches of their own (2-4 s each): with `pytest -m slow`
@pytest.mark.parametrize("depth", [1, 2, 3, 4] + [pytest.param(d, marks=pytest.mark.slow) for d in (5, 6, 7)])
def test_an_immediate_win_is_taken_and_an_immediate_loss_blocked(depth):
    """At every depth the four at column 3 is played, at its value WIN - 1 (the fastest win). From depth
    2 the opponent's reply is searched: the vertical threat is blocked and every other column scores a
    loss at ply 2 (at depth 1 only the heuristic's -4 for the open three speaks for column 0)."""
    values, legal = _search(depth)(jnp.asarray(HAND))
    moves, values = np.asarray(first_best(values, legal)), np.asarray(values)
    assert moves[0] == 3 and values[0, 3] == mm.WIN - 1 and (values[0, [0, 1, 2, 4, 5, 6]] < mm.WIN - 1).all()
    if depth >= 2:
        assert moves[1] == 0 and (values[1, 1:] == -(mm.WIN - 2)).all() and values[1, 0] > -(mm.WIN - 2)


def test_ties_go_to_the_lowest_column_or_to_a_random_one():
    """On the empty board at depth 3 several columns share the best value: :det plays the lowest of
    them, :sto each of them and nothing else."""
    empty = np.zeros((1, 6, 7), np.int8)
    values, legal = _search(3)(jnp.asarray(empty))
    best = np.flatnonzero(np.asarray(mm.best_columns(values, legal))[0])
    assert len(best) > 1
    det, sto = agents.load("minimax3"), agents.load("minimax3:sto")
    assert {int(det.act(empty, jax.random.key(s))[0]) for s in range(5)} == {best[0]}
    keys = jax.random.split(jax.random.key(0), 64)
    picks = jax.jit(jax.vmap(lambda k: sto.act(jnp.asarray(empty), k)[0]))(keys)
    assert set(np.asarray(picks).tolist()) == set(best.tolist())


def test_jitted_and_op_by_op_searches_agree():
    """Depth 1 op by op (each op compiles on its own, so deeper searches take long) as the jitted one; the
    agent inside a user's jit as called from outside."""
    boards = jnp.asarray(POSITIONS[:12])
    jitted = _search(1)(boards)
    with jax.disable_jit():
        eager = mm.column_values(boards, 1)
    for a, b in zip(jitted, eager):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    agent = agents.load("minimax2")
    inside = jax.jit(lambda a, b, k: (a.scores(b), a.act(b, k)))(agent, jnp.asarray(POSITIONS[:200]),
                                                                  jax.random.key(0))
    values, legal, moves = _ours(2, 200)
    np.testing.assert_array_equal(np.asarray(inside[0]), np.where(legal, values, -np.inf).astype(np.float32))
    np.testing.assert_array_equal(np.asarray(inside[1]), moves)


def test_the_names_load_minimax_agents():
    assert agents.load("minimax4") == agents.load("minimax4:det") and agents.load("minimax4:det").n == 4
    assert agents.load("Minimax7:sto").name == "minimax7:sto" and agents.load("Minimax7:sto").stochastic
    assert agents.canonical_name(agents.load("minimax1")) == "minimax1:det"
    assert agents.load("minimax1:det").name == "minimax1:det" and not agents.load("minimax1").stochastic
    assert "minimax4" in agents.known_names()
    for bad in ("minimax0", "minimax8", "minimax", "minimax-1", "minimax٣"):
        with pytest.raises(ValueError, match="depth must be an integer in 1..7"):
            agents.load(bad)
    with pytest.raises(ValueError, match="depth must be an int in 1..7"):
        mm.column_values(jnp.zeros((1, 6, 7), jnp.int8), 8)


def test_a_finished_game_in_the_batch_gets_no_move():
    """As every agent: the board API hands a finished board over as the empty one and masks it."""
    won = _board(["xxx....", "oooox.."])  # o has four
    scores = np.asarray(agents.load("minimax2").scores(np.stack([won, WIN_NOW])))  # batch 2, as HAND
    assert np.isneginf(scores[0]).all() and scores[1, 3] == mm.WIN - 1


def test_minimax_is_a_training_opponent_and_on_the_play_menu():
    """``--opponent minimax1`` (c4jax.learning.settings.opponent) loads it; the play UI's default menu offers
    depths 1, 4 and 7."""
    from c4jax.learning.settings.opponent import OpponentConfig
    from c4jax.play import catalogue

    assert OpponentConfig(opponent="minimax1").opponent_agent == agents.load("minimax1:det")
    assert {"minimax1", "minimax4", "minimax7"} <= set(catalogue.default_menu())
    assert [a.name for a in catalogue.variants("minimax7")] == ["minimax7:det", "minimax7:sto"]


def test_the_play_ui_answers_with_minimax():
    """A play-UI entry compiles its request path (a move and its scores) and says what its scores are."""
    from c4jax.play import answers
    from c4jax.play.server import Catalogue

    entry = Catalogue(["minimax2"], game_agents={"checkers": []}, log=lambda m: None).get("minimax2")
    assert entry.name == "minimax2:det" and entry.kind == "lookahead" and "seed 002" in entry.scores_label
    assert entry.compile()
    reply = answers.game_answer(entry, [3, 3, 2], human_first=True, play=True)  # the human moved first: 3 stones
    assert reply["agent"] == "minimax2:det" and 0 <= reply["agent_move"] < 7 and len(reply["moves"]) == 4
