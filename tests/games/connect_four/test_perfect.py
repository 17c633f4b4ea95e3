"""The perfect player: solver scores against an independent brute-force negamax, hand-made
positions, the board conversion, the agent in jitted matches, and the missing-extra error."""

from __future__ import annotations

import functools
import random
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("bitbully")

from c4jax import agents, env, evaluation  # noqa: E402
from c4jax.games.connect_four import perfect  # noqa: E402
from c4jax.games.connect_four.perfect import ILLEGAL, solve_scores  # noqa: E402
from c4jax.games.connect_four.game import GAME  # noqa: E402
from c4jax.games.connect_four.kit import CENTRE_FIRST  # noqa: E402

ROWS, COLS = 6, 7


# ----------------------------------------------------------------------------- an independent solver

def _wins(cells: tuple, r: int, c: int) -> bool:
    """The stone at (r, c) (row 0 on top) makes four with its own colour."""
    me = cells[r * COLS + c]
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        n = 1
        for sign in (1, -1):
            rr, cc = r + sign * dr, c + sign * dc
            while 0 <= rr < ROWS and 0 <= cc < COLS and cells[rr * COLS + cc] == me:
                n += 1
                rr, cc = rr + sign * dr, cc + sign * dc
        if n >= 4:
            return True
    return False


def _drop(cells: tuple, c: int) -> tuple[tuple, int] | None:
    """The cells after the player to move (stones 1) drops in column c, and the row; None if full."""
    for r in range(ROWS - 1, -1, -1):
        if cells[r * COLS + c] == 0:
            new = list(cells)
            new[r * COLS + c] = 1
            return tuple(new), r
    return None


@functools.lru_cache(maxsize=None)
def _value(cells: tuple) -> int:
    """Exact value for the player to move (stones 1) of a position that is not over."""
    return max(s for s in _column_values(cells) if s is not None)


def _column_values(cells: tuple) -> list:
    """Each column's exact value (None: full): a win whose last stone makes m stones scores
    (44 - m) // 2, a loss the negative of the opponent's win, a draw 0."""
    stones = sum(1 for x in cells if x != 0)
    out = []
    for c in range(COLS):
        dropped = _drop(cells, c)
        if dropped is None:
            out.append(None)
            continue
        child, r = dropped
        if _wins(child, r, c):
            out.append((44 - (stones + 1)) // 2)
        elif stones + 1 == ROWS * COLS:
            out.append(0)
        else:
            out.append(-_value(tuple(-x for x in child)))
    return out


def _random_endgame(rng: random.Random, stones: int) -> np.ndarray:
    """A public board with ``stones`` stones from random play, the game not over."""
    while True:
        cells = (0,) * (ROWS * COLS)
        for _ in range(stones):
            free = [c for c in range(COLS) if cells[c] == 0]
            child, r = _drop(cells, c := rng.choice(free))
            if _wins(child, r, c):
                break
            cells = tuple(-x for x in child)
        else:
            return np.array(cells, np.int8).reshape(ROWS, COLS)


def _board(moves: str) -> np.ndarray:
    s = env.init()
    for m in moves:
        s = env.step(s, int(m))
    assert not bool(s.done)
    return np.asarray(env.observe(s))


# ----------------------------------------------------------------------------- solver scores


def test_solver_agrees_with_brute_force_negamax_on_endgames():
    rng = random.Random(0)
    boards = [_random_endgame(rng, n) for n in (28, 29, 30, 31, 32, 33, 34, 35, 36)]
    got = solve_scores(np.stack(boards))
    for b, s in zip(boards, got):
        want = [ILLEGAL if v is None else v for v in _column_values(tuple(int(x) for x in b.reshape(-1)))]
        assert s.tolist() == want, (b, s, want)
    assert {int(np.sign(v)) for v in got[got != ILLEGAL]} == {-1, 0, 1}  # wins, draws and losses were checked


def test_empty_board_centre_wins_for_the_first_player():
    s = solve_scores(np.zeros((6, 7), np.int8))
    # first player wins only from the centre, with its last stone (move 41: score 1); 2 and 4 draw
    assert s.tolist() == [-2, -1, 0, 1, 0, -1, -2]


def test_immediate_win():
    # X: bottom row columns 0-2, O on top of them; X to move. Column 3 wins now with the 7th stone
    # (44 - 7) // 2 = 18, the best score any column can have here.
    s = solve_scores(_board("001122"))
    assert s[3] == 18 and np.delete(s, 3).max() < 18


def test_must_block():
    # O (to move second) has the bottom row 0-2; X (to move, stones on 6, 6, 5) has no win in one.
    s = solve_scores(_board("606152"))
    assert s[3] > -18 and all(s[c] == -18 for c in range(COLS) if c != 3)
    assert agents.load("perfect").act(_board("606152")[None], jax.random.key(0)).tolist() == [3]


def test_full_columns_and_single_board():
    b = _board("333333")  # column 3 full
    s = solve_scores(b)
    assert s.shape == (7,) and s[3] == ILLEGAL and (np.delete(s, 3) > ILLEGAL).all()
    sc = agents.load("perfect").scores(b[None])
    assert sc.dtype == jnp.float32 and np.isneginf(sc[0, 3]) and np.array_equal(np.delete(sc[0], 3), np.delete(s, 3))


def test_mirror_symmetry_and_side_to_move():
    rng = random.Random(1)
    boards = np.stack([_random_endgame(rng, n) for n in (13, 17, 20, 24)])  # odd: second player to move
    assert np.array_equal(solve_scores(boards[:, :, ::-1]), solve_scores(boards)[:, ::-1])


def test_conversion_to_solver_rows():
    b = _board("334")  # first player: 3 (bottom), 4 (bottom); second: 3 (row 4)
    rows = perfect.to_solver_rows(b)
    assert rows[5, 3] == 1 and rows[5, 4] == 1 and rows[4, 3] == 2 and np.count_nonzero(rows) == 3
    assert b[5, 3] == -1  # second player to move: the first player's stones are the opponent's


def test_bad_boards_are_rejected():
    with pytest.raises(ValueError, match="shape"):
        solve_scores(np.zeros((6, 6), np.int8))
    done = _board("001122").copy()
    done[5, 3] = 1  # X completes its four ...
    with pytest.raises(ValueError, match="finished game"):
        solve_scores(-done)  # ... and O is to move


# ----------------------------------------------------------------------------- the agent


def test_agent_jit_vmap_and_centre_tie_break():
    agent = agents.load("perfect")
    assert agent.name == "perfect" and not agent.stochastic
    boards = np.stack([np.zeros((6, 7), np.int8), _board("001122"), _board("606152"), _board("3")])
    eager = agent.act(boards, jax.random.key(0))
    jitted = jax.jit(lambda a, b, k: a.act(b, k))(agent, jnp.asarray(boards), jax.random.key(1))
    assert eager.tolist() == jitted.tolist()
    assert eager.tolist()[:3] == [3, 3, 3]
    # ties: after "3", the best score is shared; the centre-most best column is played
    s = solve_scores(boards[3])
    best = np.flatnonzero(s == s.max())
    assert eager[3] == min(best, key=CENTRE_FIRST.index)
    both = jax.vmap(agent._scores)(jnp.stack([jnp.asarray(boards), jnp.asarray(boards[:, :, ::-1])]))
    assert np.array_equal(np.asarray(both[1]), np.asarray(both[0])[:, ::-1])


@pytest.mark.slow
def test_perfect_never_loses_a_game_it_did_not_start_lost():
    """A protocol match against 2StepLA: every game ends at least as well for the perfect player as the
    game-theoretic value of the position where it takes over (after the opening moves)."""
    perfect_agent, la2 = agents.load("perfect"), agents.load("2steplA")
    result = evaluation.match(perfect_agent, la2, jax.random.key(0))
    states, _ = evaluation.openings(GAME)
    start = solve_scores(np.asarray(jax.vmap(env.observe)(states))).max(axis=1)  # value for the player to move
    for g in result.games:
        opening_value = int(np.sign(start[g.opening]))  # the first player is to move after every opening
        floor = opening_value if g.a_first else -opening_value
        assert g.outcome_a >= floor, g
    losses = [g for g in result.games if g.outcome_a < 0]
    assert all(not g.a_first for g in losses)  # only from openings lost for the second player
    assert result.wins > 80


def test_registry_and_missing_extra(monkeypatch):
    assert "perfect" in agents.known_names()
    with pytest.raises(ValueError, match="no stochastic mode"):
        agents.load("perfect:sto")
    monkeypatch.setattr(perfect, "solver_available", lambda: False)  # what the registry asks
    assert "perfect" not in agents.known_names()
    with pytest.raises(ValueError) as e:
        agents.load("perfect")
    assert str(e.value) == "the perfect player needs the solver extra: pip install -e '.[solver]'"


def test_missing_solver_module_is_one_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "bitbully", None)  # import bitbully -> ImportError
    perfect._solver.cache_clear()
    try:
        with pytest.raises(perfect.SolverMissingError, match=r"pip install -e '\.\[solver\]'"):
            solve_scores(np.zeros((6, 7), np.int8))
    finally:
        perfect._solver.cache_clear()


def test_the_solver_is_never_imported_by_the_package():
    code = ("import sys, c4jax, c4jax.games.connect_four.perfect, c4jax.evaluation, c4jax.evaluation.yardstick, "
            "c4jax.play.server; c4jax.agents.load('perfect'); assert 'bitbully' not in sys.modules, 'imported'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
