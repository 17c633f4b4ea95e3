"""The perfect player: exact scores of every column from the ``bitbully`` solver (the optional ``solver``
extra, imported lazily), run on the host.

A legal column's score is its value for the player to move under perfect play: 0 a draw; ``s > 0`` a win
with the mover's ``(22 - s)``-th stone (faster wins score higher); ``s < 0`` a loss, likewise. Full
columns score :data:`ILLEGAL`."""

from __future__ import annotations

import functools
import importlib.util
import threading

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from c4jax.games.connect_four.board import COLS, LINES, ROWS, check_boards

ILLEGAL = -100  # solve_scores' value of a full column (real scores lie in [-21, 21])
MISSING_SOLVER = "the perfect player needs the solver extra: pip install -e '.[solver]'"
_SOLVER_ILLEGAL_BELOW = -100  # the solver marks full columns with -1000


class SolverMissingError(ValueError):
    """The ``solver`` extra is not installed (a ``ValueError``: a one-line error everywhere)."""

    def __init__(self):
        super().__init__(MISSING_SOLVER)


def solver_available() -> bool:
    """Whether the ``solver`` extra is installed (checked without importing it)."""
    return importlib.util.find_spec("bitbully") is not None


def solver_version() -> str:
    """The installed solver's version (:class:`SolverMissingError` if it is not installed)."""
    _solver()
    from importlib.metadata import version

    return f"bitbully {version('bitbully')}"


class _Solver:
    """One solver instance behind a lock (its search is not reentrant)."""

    def __init__(self):
        try:
            import bitbully
        except ImportError:
            raise SolverMissingError() from None
        self.bitbully = bitbully
        self.engine = bitbully.BitBully()  # the default opening book: 12 plies, exact distances
        self.lock = threading.Lock()

    def scores(self, rows: np.ndarray) -> np.ndarray:
        board = self.bitbully.Board(rows.tolist())
        with self.lock:
            raw = self.engine._core.scoreMoves(board.native)
        out = np.asarray(raw, np.int32)
        return np.where(out <= _SOLVER_ILLEGAL_BELOW, ILLEGAL, out).astype(np.int32)


@functools.cache
def _solver() -> _Solver:
    return _Solver()


def to_solver_rows(board: np.ndarray) -> np.ndarray:
    """A public board in the solver's encoding: ``int[6, 7]``, row 0 on top, ``1`` / ``2`` the
    first / second player's stones, ``0`` empty."""
    board = np.asarray(board)
    first_to_move = int(np.count_nonzero(board)) % 2 == 0
    mover, other = (1, 2) if first_to_move else (2, 1)
    return np.where(board == 1, mover, np.where(board == -1, other, 0)).astype(np.int32)


def _finished(boards: np.ndarray) -> np.ndarray:
    """bool[B]: the opponent has four in a row or the board is full."""
    flat = boards.reshape(-1, ROWS * COLS)
    opp_four = (flat[:, LINES] == -1).all(axis=-1).any(axis=-1)
    return opp_four | (flat != 0).all(axis=-1)


def _solve_unchecked(boards: np.ndarray) -> np.ndarray:
    """int32[B, 7] scores of valid boards; a finished board gets 0 for its free columns."""
    boards = np.asarray(boards, np.int8).reshape(-1, ROWS, COLS)
    solver = _solver()
    out = np.full((boards.shape[0], COLS), ILLEGAL, np.int32)
    finished = _finished(boards)
    for i, b in enumerate(boards):
        out[i] = np.where(b[0] == 0, 0, ILLEGAL) if finished[i] else solver.scores(to_solver_rows(b))
    return out


def solve_scores(boards) -> np.ndarray:
    """int32[B, 7] (or ``[7]`` for one board ``[6, 7]``): every column's exact score of unfinished
    boards ``[B, 6, 7]``, full columns :data:`ILLEGAL`. ``ValueError`` for a malformed or finished board,
    :class:`SolverMissingError` without the solver."""
    arr = np.asarray(boards)
    single = arr.ndim == 2
    checked = check_boards(arr[None] if single else arr, batched=True, allow_finished=False)
    out = _solve_unchecked(checked)
    return out[0] if single else out


def scores_and_best(boards: Array, n: None = None) -> tuple[Array, Array]:
    """float32[B, 7] solver scores of boards ``[B, 6, 7]`` (full columns ``-inf``) and bool[B, 7],
    the best legal columns; jittable (``jax.pure_callback``)."""
    del n

    def host(b):
        b = np.asarray(b)
        return _solve_unchecked(b.reshape(-1, ROWS, COLS)).reshape(b.shape[:-2] + (COLS,))

    shape = jax.ShapeDtypeStruct(boards.shape[:-2] + (COLS,), jnp.int32)
    s = jax.pure_callback(host, shape, boards, vmap_method="expand_dims")
    legal = boards[..., 0, :] == 0
    top = jnp.max(jnp.where(legal, s, jnp.iinfo(jnp.int32).min), axis=-1, keepdims=True)
    return jnp.where(s > ILLEGAL, s.astype(jnp.float32), -jnp.inf), legal & (s == top)
