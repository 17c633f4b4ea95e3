"""The perfect player: exact game-theoretic scores of every column from a Connect Four solver (the
kit's ``perfect`` :class:`~c4jax.games.kit.Player`, :func:`scores_and_best`, and its ``solver``).

The solver is ``bitbully`` (the optional ``solver`` extra, ``pip install -e '.[solver]'``), run on
the host and imported lazily (:func:`_solver`), so the package works without it.

Scores (the solver's convention), for a legal column, the exact value of playing it for the
player to move under perfect play by both sides afterwards:

- ``0``: a draw;
- ``s > 0``: a win; the mover's winning stone is its ``(22 - s)``-th stone, so a win
  that ends the game with ``m`` stones on the board scores ``(44 - m) // 2`` (at most 18 in
  practice); faster wins score higher;
- ``s < 0``: a loss, ``-s`` the same count for the opponent's win; later losses score
  higher.

Full columns get :data:`ILLEGAL` (``-100``). :func:`to_solver_rows` is the one conversion from the
public board (design.md §1) to the solver's encoding.
"""

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
    """The ``solver`` extra is not installed. A ``ValueError``, like an unknown agent name, so every
    command line reports it as its one-line ``error: ...``."""

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
    """One solver instance (opening book loaded once) behind a lock: its search is not reentrant."""

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
    """A public board (``int8[6, 7]``, 1 = player to move) in the solver's encoding: ``int[6, 7]``,
    row 0 on top, ``1`` = the first player's stones, ``2`` = the second player's, ``0`` empty."""
    board = np.asarray(board)
    first_to_move = int(np.count_nonzero(board)) % 2 == 0
    mover, other = (1, 2) if first_to_move else (2, 1)
    return np.where(board == 1, mover, np.where(board == -1, other, 0)).astype(np.int32)


def _finished(boards: np.ndarray) -> np.ndarray:
    """bool[B]: the opponent has four in a row or the board is full (no game left to solve)."""
    flat = boards.reshape(-1, ROWS * COLS)
    opp_four = (flat[:, LINES] == -1).all(axis=-1).any(axis=-1)
    return opp_four | (flat != 0).all(axis=-1)


def _solve_unchecked(boards: np.ndarray) -> np.ndarray:
    """int32[B, 7] scores of already-valid boards; a finished board gets 0 for its free columns."""
    boards = np.asarray(boards, np.int8).reshape(-1, ROWS, COLS)
    solver = _solver()
    out = np.full((boards.shape[0], COLS), ILLEGAL, np.int32)
    finished = _finished(boards)
    for i, b in enumerate(boards):
        out[i] = np.where(b[0] == 0, 0, ILLEGAL) if finished[i] else solver.scores(to_solver_rows(b))
    return out


def solve_scores(boards) -> np.ndarray:
    """int32[B, 7]: every legal column's exact score (module docstring), full columns :data:`ILLEGAL`.

    ``boards``: public boards ``[B, 6, 7]`` (or one ``[6, 7]`` board, giving ``[7]``) of
    unfinished games. Host-side (numpy); agents call it through ``jax.pure_callback``.

    Raises:
      ValueError: a malformed or finished board (see ``c4jax.games.connect_four.board.check_boards``).
      SolverMissingError: the ``solver`` extra is not installed.
    """
    arr = np.asarray(boards)
    single = arr.ndim == 2
    checked = check_boards(arr[None] if single else arr, batched=True, allow_finished=False)
    out = _solve_unchecked(checked)
    return out[0] if single else out


def scores_and_best(boards: Array, n: None = None) -> tuple[Array, Array]:
    """The perfect player of public boards ``[B, 6, 7]``: float32[B, 7] exact solver scores (module
    docstring), full columns ``-inf``, and bool[B, 7], the legal columns of the best score. The solver
    runs on the host through ``jax.pure_callback`` (jittable: one solver call per board)."""
    del n

    def host(b):
        b = np.asarray(b)
        return _solve_unchecked(b.reshape(-1, ROWS, COLS)).reshape(b.shape[:-2] + (COLS,))

    shape = jax.ShapeDtypeStruct(boards.shape[:-2] + (COLS,), jnp.int32)
    s = jax.pure_callback(host, shape, boards, vmap_method="expand_dims")
    legal = boards[..., 0, :] == 0
    top = jnp.max(jnp.where(legal, s, jnp.iinfo(jnp.int32).min), axis=-1, keepdims=True)
    return jnp.where(s > ILLEGAL, s.astype(jnp.float32), -jnp.inf), legal & (s == top)
