"""OpenSpiel's C++ ``MCTSBot`` (UCT ``c = 2``, random rollouts, ``solve=True``) as the host player
``openspiel-mcts<N>`` (design.md §8); needs the ``bench-search`` extra. Stochastic only, seeded from the
call's key."""

from __future__ import annotations

import importlib.util
from functools import lru_cache

import numpy as np

from c4jax.games.connect_four.board import COLS, ROWS

UCT_C = 2.0
# MCTSBot's memory cap per search (MB): far above what 50,000 simulations of Connect Four use.
MAX_MEMORY_MB = 1000


class OpenSpielMissingError(ImportError):
    """The ``bench-search`` extra (OpenSpiel) is not installed."""

    def __init__(self):
        super().__init__("agent 'openspiel-mcts<N>' needs OpenSpiel: pip install -e '.[bench-search]'")


def openspiel_available() -> bool:
    """Whether OpenSpiel is installed (checked without importing it)."""
    return importlib.util.find_spec("pyspiel") is not None


def move_order(board: np.ndarray) -> list[int]:
    """Columns that, played from the empty board, give ``board`` (int8[6, 7], 1 = the player to move).
    ``ValueError`` if no order does; on a board with a four a prefix of the order may end the game."""
    b = np.asarray(board)
    if b.shape != (ROWS, COLS):
        raise ValueError(f"a board is int8[{ROWS}, {COLS}], got shape {b.shape}")
    mine, theirs = int((b == 1).sum()), int((b == -1).sum())
    if theirs not in (mine, mine + 1):
        raise ValueError(f"no game gives {mine} pieces of the player to move and {theirs} of the opponent")
    # The first mover is the player to move when the counts are equal.
    first = 1 if mine == theirs else -1
    stacks = []  # each column's pieces from the bottom up
    for c in range(COLS):
        col = [int(v) for v in b[::-1, c]]
        height = sum(1 for v in col if v != 0)
        if any(v == 0 for v in col[:height]) or any(v != 0 for v in col[height:]):
            raise ValueError(f"column {c} has a piece above an empty cell")
        stacks.append(col[:height])
    total = mine + theirs
    dead: set[tuple[int, ...]] = set()  # column heights from which no order finishes

    def search(heights: list[int], order: list[int]) -> bool:
        if len(order) == total:
            return True
        key = tuple(heights)
        if key in dead:
            return False
        colour = first if len(order) % 2 == 0 else -first
        for c in range(COLS):
            if heights[c] < len(stacks[c]) and stacks[c][heights[c]] == colour:
                heights[c] += 1
                order.append(c)
                if search(heights, order):
                    return True
                order.pop()
                heights[c] -= 1
        dead.add(key)
        return False

    order: list[int] = []
    if not search([0] * COLS, order):
        raise ValueError("no alternating move order gives this board")
    return order


@lru_cache(maxsize=1)
def _game():
    if not openspiel_available():
        raise OpenSpielMissingError()
    import pyspiel

    return pyspiel.load_game("connect_four")


def _choose(board: np.ndarray, simulations: int, seed: int) -> int:
    import pyspiel

    game = _game()
    state = game.new_initial_state()
    for column in move_order(board):
        if state.is_terminal():
            break
        state.apply_action(column)
    if state.is_terminal():
        # A finished game's board (a batch can hold some: their moves are not played): any legal
        # column, or 0 on a full board.
        legal = np.flatnonzero(np.asarray(board)[0] == 0)
        return int(legal[0]) if len(legal) else 0
    evaluator = pyspiel.RandomRolloutEvaluator(1, seed)
    bot = pyspiel.MCTSBot(game, evaluator, UCT_C, simulations, MAX_MEMORY_MB, True, seed, False)
    return int(bot.step(state))


def policy(simulations: int):
    """``(boards, rng) -> int32[B]``: ``MCTSBot`` with ``simulations`` per move, seeded from ``rng``."""
    _game()  # fail here, not inside a match, when OpenSpiel is missing

    def play(boards: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        seeds = rng.integers(0, 2**31 - 1, size=len(boards))
        return np.array([_choose(b, simulations, int(s)) for b, s in zip(boards, seeds)], np.int32)

    return play
