"""What a game looks like to people: the interface of each game's ``view`` module, and its shared parts.

Every game of :func:`c4jax.games.with_views` has a view module (``c4jax.games.<name>.view``) that the
play UI's server and the ``watch`` command use, so that neither names a game. It is pure host-side
code over the game's states (no agents) and has

- ``GAME`` (the game object), ``NAME`` (its name on the page, ``"Connect Four"``), ``ACTION`` /
  ``ACTIONS`` (what one action is called in the scores' legend, ``"column"`` / ``"free columns"``),
  ``DEFAULT_OPPONENTS`` (the agent names the page's menu picks first, the first one on offer),
  ``SIDES`` (the players' names in text, player 0 first), ``MOVES_UNIT`` (what the move list is
  written in), ``NUMBERED`` (the move list numbers the moves) and ``WRAP`` (characters per line
  of a picture's move list);
- ``parse_moves(value) -> list[int]``: a request's move list checked (:class:`MoveError`);
- ``replay(moves) -> Replay``: the game replayed from its start (:class:`MoveError` names an
  illegal move);
- ``position(rep, ply, human) -> dict``: one position as the page draws it, for a viewer who
  plays player ``human`` (0 moves first), with ``"scores"`` and ``"values"`` left ``None`` for
  the caller (an agent's numbers);
- ``scores_json(row, state) -> list``: one float row over the game's actions as the page shows
  it (``row=None``: the game is over);
- ``answer(rep, human, positions, agent, agent_moves, agent_ms) -> dict``: the whole answer of
  the play API for a game;
- ``ply_name(state, action)``, ``record(states, actions) -> list[Move]``, ``render(state)``
  (a text diagram) and ``scene(state, before, action, caption)`` (a picture,
  :class:`c4jax.games.drawing.Scene`; ``before``/``action``: the move that led there, or None).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from c4jax.games import base


class MoveError(ValueError):
    """A move list that cannot be replayed (the message names the move and why)."""


@dataclass(frozen=True)
class Move:
    """One move of a game's record: ``text`` in the game's notation, made by ``player`` (0 moves
    first), over the plies ``first..last`` (several for a Checkers multi-jump)."""

    number: int  # the move number (one per pair of moves, as PDN counts)
    player: int
    text: str
    first: int
    last: int


@dataclass(frozen=True)
class Replay:
    """A game replayed: its ``moves`` and, host side with a leading axis of ``len(moves) + 1``, the
    ``states`` and ``observations`` of positions 0..n (position k: after k moves)."""

    moves: list[int]
    states: Any
    observations: np.ndarray

    def state(self, ply: int):
        return jax.tree.map(lambda x: x[ply], self.states)


@partial(jax.jit, static_argnames="game")
def _scan(game, moves: jax.Array, n: jax.Array):
    def body(state, i):
        a = moves[i]
        top = game.num_actions - 1
        legal = (a >= 0) & (a <= top) & state.legal_action_mask[jnp.clip(a, 0, top)]
        new = game.step(state, a)
        new = jax.tree.map(lambda x, y: jnp.where(i < n, x, y), new, state)
        return new, (base.done(state), legal, new)

    s0 = game.init()
    _, (was_done, legal, states) = jax.lax.scan(body, s0, jnp.arange(game.max_steps))
    states = jax.tree.map(lambda first, rest: jnp.concatenate([first[None], rest]), s0, states)
    return states, jax.vmap(game.observe)(states), was_done, legal


def replay_moves(game, moves: Sequence[int]) -> tuple[Replay, np.ndarray, np.ndarray]:
    """Play ``moves`` (ints, at most ``game.max_steps``) from ``game``'s start under jit: the
    :class:`Replay` and, per move, whether the game was already over and whether it was legal
    (a view turns the first bad one into its :class:`MoveError`)."""
    n = len(moves)
    padded = np.zeros(game.max_steps, np.int32)
    padded[:n] = moves
    states, observations, was_done, legal = jax.device_get(_scan(game, padded, np.int32(n)))
    rep = Replay(list(moves), jax.tree.map(lambda x: np.asarray(x)[: n + 1], states),
                 np.asarray(observations)[: n + 1])
    return rep, np.asarray(was_done)[:n], np.asarray(legal)[:n]


def number_json(values) -> list:
    """Float32 numbers printed with the 7 significant digits they hold; not finite (an illegal
    action's ``-inf``, a NaN) -> ``None``."""
    return [float(f"{v:.7g}") if np.isfinite(v) else None for v in np.asarray(values, np.float64).reshape(-1)]


def movetext(record: list[Move], numbered: bool = True) -> str:
    """A record as one line: numbered as PDN writes moves, ``1. 11-15 23-19 2. 8-11 ...`` (a game
    that a second player's move opens starts with ``1. ...``), or the bare moves."""
    if not numbered:
        return " ".join(m.text for m in record)
    out = []
    for k, move in enumerate(record):
        if move.player == 0 or k == 0:
            out.append(f"{move.number}." if move.player == 0 else f"{move.number}. ...")
        out.append(move.text)
    return " ".join(out)
