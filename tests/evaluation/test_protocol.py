"""The tournament protocol (design.md §9): openings, per-seat accounting, and an independent
plain-Python match that must reproduce ``evaluation.match`` game by game."""

import dataclasses
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from c4jax import agents, evaluation, games
from c4jax.evaluation import protocol
from c4jax.games.connect_four import env
from c4jax.games.kit import MatchRules

KEY = jax.random.key(0)
step = jax.jit(env.step)


@pytest.fixture(scope="module")
def two_vs_one():
    return evaluation.match(agents.load("2steplA"), agents.load("1steplA"), KEY)


# --- openings ---------------------------------------------------------------------------------


def test_openings_are_the_empty_board_and_every_pair_of_first_moves_once():
    states, moves = evaluation.openings(games.make("connect_four"))
    moves = np.asarray(moves)
    assert moves.shape == (50, 2) and moves.dtype == np.int32
    boards = np.asarray(jax.vmap(env.observe)(states))
    assert len({b.tobytes() for b in boards}) == 50
    stones = (boards != 0).sum((1, 2))
    assert stones[0] == 0 and (moves[0] == -1).all()
    assert (stones[1:] == 2).all() and (np.asarray(states.num_moves)[1:] == 2).all()
    assert not np.asarray(states.done).any() and np.asarray(states.first_player_to_move).all()
    pairs = [tuple(m) for m in moves[1:].tolist()]
    assert sorted(pairs) == [(c1, c2) for c1 in range(7) for c2 in range(7)]
    for (c1, c2), board in zip(pairs, boards[1:]):
        # The first player (to move again) owns c1, the second player c2; gravity applies.
        expect = np.zeros((6, 7), np.int8)
        expect[5, c1] = 1
        expect[4 if c1 == c2 else 5, c2] = -1
        np.testing.assert_array_equal(board, expect)


# --- an independent plain-Python match --------------------------------------------------------


def _wins(grid, r, c):
    """The stone just dropped at (r, c) completes four in a row."""
    me = grid[r][c]
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        n = 1
        for s in (1, -1):
            rr, cc = r + s * dr, c + s * dc
            while 0 <= rr < 6 and 0 <= cc < 7 and grid[rr][cc] == me:
                n, rr, cc = n + 1, rr + s * dr, cc + s * dc
        if n >= 4:
            return True
    return False


def _play_plain(agent_a, agent_b, opening, a_first):
    """One protocol game; returns (moves, outcome for A). Stones: 1 first player, 2 second."""
    grid = [[0] * 7 for _ in range(6)]
    moves = []

    def drop(col):
        row = max(r for r in range(6) if grid[r][col] == 0)
        grid[row][col] = 1 + len(moves) % 2
        moves.append(col)
        return _wins(grid, row, col)

    for col in opening:
        assert not drop(col)
    while True:
        mover = 1 + len(moves) % 2
        agent = agent_a if (mover == 1) == a_first else agent_b
        board = np.array([[0 if v == 0 else (1 if v == mover else -1) for v in row] for row in grid], np.int8)
        col = int(agent.act(board[None], KEY)[0])
        assert grid[0][col] == 0, "illegal move"
        if drop(col):
            return moves, 1 if agent is agent_a else -1
        if len(moves) == 42:
            return moves, 0


def test_match_equals_a_plain_python_match_game_by_game(two_vs_one):
    a, b = agents.load("2steplA"), agents.load("1steplA")
    openings = [()] + [(c1, c2) for c1 in range(7) for c2 in range(7)]
    expected = [(a_first, o) + _play_plain(a, b, o, a_first) for a_first in (True, False) for o in openings]
    assert len(two_vs_one.games) == len(expected) == 100
    for g, (a_first, opening, moves, outcome) in zip(two_vs_one.games, expected):
        assert g.a_first == a_first and g.moves[: len(opening)] == opening
        assert list(g.moves) == moves and g.outcome_a == outcome and g.length == len(moves)
    for seat, half in ((two_vs_one.a_first, expected[:50]), (two_vs_one.b_first, expected[50:])):
        outcomes = [e[3] for e in half]
        assert (seat.wins, seat.draws, seat.losses) == (outcomes.count(1), outcomes.count(0), outcomes.count(-1))


def test_two_step_against_one_step_regression(two_vs_one):
    # Measured (deterministic centre tie-breaks): 2StepLA first 39-1-10, 1StepLA first 38-1-11,
    # win rate 0.78 (thesis Table 5.2: 0.79 as first player); mean length 24.64.
    m = two_vs_one
    assert (m.a_first.wins, m.a_first.draws, m.a_first.losses) == (39, 1, 10)
    assert (m.b_first.wins, m.b_first.draws, m.b_first.losses) == (38, 1, 11)
    assert (m.wins, m.draws, m.losses) == (77, 2, 21)
    assert m.win_rate == pytest.approx(0.78)
    assert m.win_rate_a_first == pytest.approx(0.79) and m.win_rate_b_first == pytest.approx(0.77)


# --- accounting -------------------------------------------------------------------------------


def test_per_seat_accounting_and_swap(two_vs_one):
    m = two_vs_one
    assert m.a_first.games == m.b_first.games == 50 and m.total.games == 100
    assert m.wins + m.draws + m.losses == 100
    assert [g.a_first for g in m.games] == [True] * 50 + [False] * 50
    assert m.mean_length == pytest.approx(np.mean([len(g.moves) for g in m.games]))
    reverse = evaluation.match(agents.load("1steplA"), agents.load("2steplA"), jax.random.key(7))
    assert reverse.swap() == m and m.swap() == reverse
    assert reverse.a_first.wins == m.b_first.losses and reverse.b_first.draws == m.a_first.draws
    assert reverse.win_rate == pytest.approx(1.0 - m.win_rate)
    d = json.loads(json.dumps(m.to_dict()))
    assert d["total"] == {"wins": 77, "draws": 2, "losses": 21, "games": 100, "win_rate": 0.78}
    assert len(d["games"]) == 100 and d["games"][0]["moves"] == list(m.games[0].moves)
    assert "games" not in m.to_dict(games=False)


def test_recorded_games_replay_with_the_environment(two_vs_one):
    for g in two_vs_one.games:
        s = env.init()
        for col in g.moves:
            assert not bool(s.done)
            s = step(s, col)
        first_won = int(s.winner)
        assert bool(s.done) and int(s.num_moves) == g.length
        assert g.outcome_a == (first_won if g.a_first else -first_won)


def test_same_agent_types_do_not_retrace():
    if not hasattr(protocol._play_game, "_cache_size"):
        pytest.skip("jax without _cache_size")
    a = agents.load("1steplA")
    evaluation.match(a, agents.load("random"), KEY)
    before = protocol._play_game._cache_size()
    evaluation.match(agents.load("1steplA"), agents.load("random"), jax.random.key(3))
    assert protocol._play_game._cache_size() == before


# --- stochastic agents, strength, lengths -----------------------------------------------------


def test_stochastic_agent_same_key_same_games_different_key_different_games():
    a, b = agents.load("1steplA:sto"), agents.load("random")
    m0 = evaluation.match(a, b, jax.random.key(1))
    assert evaluation.match(a, b, jax.random.key(1)) == m0
    m1 = evaluation.match(a, b, jax.random.key(2))
    assert [g.moves for g in m1.games] != [g.moves for g in m0.games]


@pytest.mark.slow
def test_match_many_plays_each_slice_of_a_batched_agent_as_match_does():
    """K matches in one vmapped call (the --vmap-seeds evaluation): slice k with keys[k] plays
    the games ``match`` plays, for a batched A against a shared B and against a batched B."""
    sup = agents.load("supervised:sto")
    stacked = sup.replace(params=jax.tree.map(lambda x: jnp.stack([x, x]), sup.params))
    keys = jnp.stack([jax.random.key(1), jax.random.key(2)])
    look = agents.load("1steplA")
    many = evaluation.match_many(stacked, look, keys)
    singles = [evaluation.match(sup, look, k) for k in keys]
    assert [[g.moves for g in m.games] for m in many] == [[g.moves for g in m.games] for m in singles]
    assert [m.win_rate for m in many] == [m.win_rate for m in singles]
    assert [g.moves for g in many[0].games] != [g.moves for g in many[1].games]  # independent keys
    both = evaluation.match_many(stacked, stacked, keys, b_batched=True)
    assert [m.a_first for m in both] == [evaluation.match(sup, sup, k).a_first for k in keys]
    with pytest.raises(ValueError, match="do not match 3 keys"):
        evaluation.match_many(stacked, look, jnp.stack([jax.random.key(i) for i in range(3)]))


def test_one_step_beats_random():
    # Measured: 1.00 (100-0-0) with key 0 (design.md §4: ≈ 99%).
    rate = evaluation.win_rate(agents.load("1steplA"), agents.load("random"), KEY)
    assert rate >= 0.9


def test_one_step_self_match_mean_length():
    # Measured: 12.54 stones on the final board (thesis Table 5.4: 12.5). The first player
    # wins 62 of 100 (31-0-19 with A first, 19-0-31 with B first), win rate exactly 0.5.
    a = agents.load("1steplA")
    m = evaluation.match(a, a, KEY)
    lengths = [len(g.moves) for g in m.games]
    assert m.mean_length == pytest.approx(np.mean(lengths))
    assert 8 <= m.mean_length <= 20
    assert m.win_rate == 0.5 and m.a_first == m.b_first.swap()


def test_the_openings_are_the_kits(monkeypatch):
    checkers = games.make("checkers")
    moves, _ = protocol.game_openings(checkers)
    chosen = tuple(tuple(int(a) for a in m) for m in moves[1:][::-1])  # its own openings, reversed
    kit = games.kit_of(checkers)
    for openings, ok in ((chosen, True), (chosen[:10], False)):
        monkeypatch.setattr(games, "kit_of", lambda g, o=openings: dataclasses.replace(kit, match=MatchRules(openings=o)))
        protocol.game_openings.cache_clear()
        try:
            if ok:
                assert [tuple(m) for m in protocol.game_openings(checkers)[0][1:].tolist()] == list(chosen)
            else:
                with pytest.raises(ValueError, match="49 pairs"):
                    protocol.game_openings(checkers)
        finally:
            protocol.game_openings.cache_clear()
    monkeypatch.undo()
    assert np.array_equal(protocol.game_openings(checkers)[0], moves)
