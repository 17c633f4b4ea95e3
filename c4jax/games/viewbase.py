"""What a game looks like to people: the interface of each game's ``view`` module, and its shared parts.

The view (``c4jax.games.<name>.view``, named by the kit) is what the play UI's server and ``watch`` use,
so that neither names a game; pure host-side code over the game's states. It has

- ``GAME``, ``NAME`` (its name on the page), ``ACTION`` / ``ACTIONS`` (one action / the legal ones, in the
  scores' legend), ``DEFAULT_OPPONENTS`` (the menu's first picks), ``SIDES`` (the players' names, player 0
  first), ``MOVES_UNIT`` (what the move list is written in), ``NUMBERED`` (the move list numbers moves),
  ``WRAP`` (characters per line of a picture's move list) and ``PAGE`` (:func:`page`);
- ``parse_moves(value) -> list[int]`` and ``replay(moves) -> Replay`` (:class:`MoveError` if malformed or
  illegal);
- ``position(rep, ply, human) -> dict`` (below; ``scores`` and ``values`` left ``None``),
  ``scores_json(row, state) -> list`` (``row=None``: the game is over) and ``answer(rep, human,
  positions, agent, agent_moves, agent_ms) -> dict``, the play API's answer;
- ``ply_name(state, action)``, ``record(states, actions) -> list[Move]``, ``render(state)`` (text) and
  ``scene(state, before, action, caption)`` (:class:`c4jax.games.drawing.Scene`).

A position of the play API has ``ply``, ``board`` (rows of ints in the viewer's view: > 0 the viewer's
pieces, < 0 the opponent's, ``abs`` a key of ``PAGE["pieces"]``), ``to_move`` (``"human"``, ``"agent"`` or
None), ``status`` (``human_turn``, ``agent_turn``, ``human_won``, ``agent_won``, ``draw``), ``legal_moves``
(each ``{"action", "to": [row, col]}``, with ``"from"`` for a move of a piece), ``marked``, ``taken``,
``scores`` and ``values``. :class:`GridView` is the whole view of a game on a grid of cells, drawn as
squares or, given a :class:`~c4jax.games.geometry.Geometry`, as the cells, links and sides it places."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from c4jax.games import base, drawing
from c4jax.games.geometry import Geometry

SIDE_COLOURS = ("#a4161a", "#2457c5")  # a geometry's sides of player 0 and 1 in pictures (the page's x and o)


class MoveError(ValueError):
    """A move list that cannot be replayed (the message names the move and why)."""


@dataclass(frozen=True)
class Move:
    """One move of a game's record: ``text`` in the game's notation by ``player`` over the plies
    ``first..last``."""

    number: int  # the move number (one per pair of moves, as PDN counts)
    player: int
    text: str
    first: int
    last: int


@dataclass(frozen=True)
class Replay:
    """A game replayed: its ``moves`` and the host-side ``states`` and ``observations`` of positions
    0..n (leading axis ``len(moves) + 1``)."""

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
    """Play ``moves`` (at most ``game.max_steps``) from the start under jit: the :class:`Replay`
    and, per move, bool arrays: the game was already over, the move was legal."""
    n = len(moves)
    padded = np.zeros(game.max_steps, np.int32)
    padded[:n] = moves
    states, observations, was_done, legal = jax.device_get(_scan(game, padded, np.int32(n)))
    rep = Replay(list(moves), jax.tree.map(lambda x: np.asarray(x)[: n + 1], states),
                 np.asarray(observations)[: n + 1])
    return rep, np.asarray(was_done)[:n], np.asarray(legal)[:n]


def number_json(values) -> list:
    """Float32 numbers with the 7 significant digits they hold; not finite -> ``None``."""
    return [float(f"{v:.7g}") if np.isfinite(v) else None for v in np.asarray(values, np.float64).reshape(-1)]


def movetext(record: list[Move], numbered: bool = True) -> str:
    """A record as one line: numbered as PDN writes moves (``1. 11-15 23-19 2. ...``, ``1. ...``
    when the second player opens), or the bare moves."""
    if not numbered:
        return " ".join(m.text for m in record)
    out = []
    for k, move in enumerate(record):
        if move.player == 0 or k == 0:
            out.append(f"{move.number}." if move.player == 0 else f"{move.number}. ...")
        out.append(move.text)
    return " ".join(out)


def page(rows: int, cols: int, *, sides=("", ""), board: str = "lines", click: str = "cell", pieces=None, seats=None,
         scores: str = "actions", score_place: str = "target", drop: bool = False, keys: bool = False,
         record: str | None = None, action: str = "cell", texts=None, geometry: dict | None = None) -> dict:
    """The play page's description of a game (a view's ``PAGE``):

    ``rows`` x ``cols`` cells; ``sides``: the players' names; ``board``: ``"plate"``, ``"squares"`` or
    ``"lines"``; ``click``: ``"column"`` (keys 1..cols with ``keys``), ``"cell"`` or ``"from_to"``;
    ``pieces``: per kind (``abs`` of a board value) ``"disc"``, ``"man"``, ``"king"`` or ``"mark"``;
    ``seats``: the class of player 0's and 1's pieces (None: viewer's and opponent's); ``scores``: per
    ``"actions"`` or per ``"legal"`` move; ``score_place``: ``"header"`` or ``"target"``; ``drop``: pieces
    fall from the top; ``record``: the move list's heading (None: none); ``action``: what a move is called;
    ``texts``: templates of the status lines and legend (the missing ones: :data:`TEXTS`); ``geometry``: where
    the cells are (:meth:`c4jax.games.geometry.Geometry.json`, with ``click="cell"``; None: a grid of squares,
    and the description has no ``"geometry"`` key)."""
    out = {"rows": rows, "cols": cols, "sides": list(sides), "board": board, "click": click, "pieces": pieces or {"1": "disc"},
           "seats": list(seats) if seats else None, "scores": scores, "score_place": score_place, "drop": drop,
           "keys": keys, "record": record, "action": action, "texts": {**TEXTS, **(texts or {})}}
    if geometry is not None:
        out["geometry"] = geometry
    return out


TEXTS = {
    "start_human": "You play first.",
    "start_agent": "{agent} plays first…",
    "turn": "Your turn — click a {action}.",
    "won": "You won!",
    "lost": "{agent} won.",
    "draw": {"": "Draw."},
    "legend": "Numbers on the {action}s: {label}. {side}",
    "no_scores": "{agent} shows no scores here.",
    "help": "Click a {action} to play there. ← / → step through the game's past positions (read-only); "
            "→ on the last one returns to the live game.",
}


class GridView:
    """The whole view of a game on a grid, from its observations: ``[H, W]`` (+1 the mover's pieces,
    -1 the opponent's) or ``[H, W, C]`` (planes 0 and 1); an action is a cell (``H * W``, row by row) or a
    column (``W``). Moves are named by cells, ``a1`` bottom left.

    ``geometry`` (:class:`c4jax.games.geometry.Geometry`, games whose actions are cells only): where the cells
    are drawn, in the page (``PAGE["geometry"]``), in :meth:`render` (one character per cell, at its position)
    and in :meth:`scene`; None: a grid of squares. ``page_options``: arguments of :func:`page` that replace
    the view's own (e.g. ``pieces``, ``seats``, ``board``). ``ValueError`` for actions that are neither cells
    nor columns, or a geometry of a game played by columns."""

    def __init__(self, game, name: str, *, sides=("X", "O"), geometry: Geometry | None = None, page_options=None):
        shape = tuple(game.observation_shape)
        self.GAME, self.NAME, self.SIDES = game, name, tuple(sides)
        self.rows, self.cols = shape[0], shape[1]
        self.planes = len(shape) == 3
        if game.num_actions == self.rows * self.cols:
            self.ACTION, self.ACTIONS, click = "cell", "empty cells", "cell"
        elif game.num_actions == self.cols:
            self.ACTION, self.ACTIONS, click = "column", "free columns", "column"
        else:
            raise ValueError(f"{game.id}: {game.num_actions} actions are neither the cells nor the columns of a "
                             f"{self.rows} x {self.cols} board")
        if geometry is not None and click != "cell":
            raise ValueError(f"{game.id}: a geometry places cells, and its actions are columns")
        self.geometry = geometry
        self.DEFAULT_OPPONENTS = ()
        self.MOVES_UNIT, self.NUMBERED, self.WRAP = f"{self.ACTION}s", True, 56
        texts = {"turn": "Your turn ({side}) — click a {action}.",
                 "start_human": "You play {side} and move first.", "start_agent": "You play {side}: {agent} moves first…"}
        options = {"sides": self.SIDES, "click": click, "pieces": {"1": "mark"}, "seats": ("x", "o"),
                   "score_place": "target" if click == "cell" else "header", "action": self.ACTION, "record": "Moves",
                   "texts": texts, "geometry": None if geometry is None else geometry.json()}
        self.PAGE = page(self.rows, self.cols, **{**options, **(page_options or {})})

    # ---- moves
    def _cell(self, action: int, board=None) -> list[int]:
        if self.ACTION == "cell":
            return [action // self.cols, action % self.cols]
        rows = [r for r in range(self.rows) if board is not None and board[r][action] != 0]
        return [(min(rows) if rows else self.rows) - 1, action]  # where a piece dropped there lands

    def _name(self, cell) -> str:
        return f"{chr(ord('a') + cell[1])}{self.rows - cell[0]}"

    def parse_moves(self, moves: Any) -> list[int]:
        top = self.GAME.num_actions - 1
        if not isinstance(moves, list):
            raise MoveError(f"'moves' must be a list of actions (integers 0..{top})")
        if len(moves) > self.GAME.max_steps:
            raise MoveError(f"'moves' has {len(moves)} moves; a game has at most {self.GAME.max_steps}")
        for i, m in enumerate(moves):
            if isinstance(m, bool) or not isinstance(m, int):
                raise MoveError(f"move {i} is {str(m)[:40]}; moves must be integers 0..{top}")
            if not 0 <= m <= top:
                raise MoveError(f"illegal move {i}: action {m} is outside 0..{top}")
        return moves

    def replay(self, moves: list[int]) -> Replay:
        rep, was_done, legal = replay_moves(self.GAME, moves)
        for i, m in enumerate(moves):
            if was_done[i]:
                raise MoveError(f"move {i} (action {m}): the game is already over after {i} moves")
            if not legal[i]:
                raise MoveError(f"illegal move {i}: action {m} is not legal there")
        return rep

    # ---- positions
    def _board(self, observation, sign: int) -> list[list[int]]:
        obs = np.asarray(observation, np.int64)
        own = obs[..., 0] - obs[..., 1] if self.planes else obs
        return (own * sign).tolist()

    def _player_board(self, state, player: int) -> list[list[int]]:
        """The board with ``player``'s pieces > 0."""
        obs = np.asarray(jax.device_get(self.GAME.observe(state)))
        return self._board(obs, 1 if int(state.current_player) == player else -1)

    def position(self, rep: Replay, ply: int, human: int) -> dict:
        state = rep.state(ply)
        mover = int(state.current_player)
        board = self._board(rep.observations[ply], 1 if mover == human else -1)
        over = bool(base.done(state))
        if over:
            reward = float(np.asarray(state.rewards)[human])
            status = "human_won" if reward > 0 else "agent_won" if reward < 0 else "draw"
        else:
            status = "human_turn" if mover == human else "agent_turn"
        legal = [int(a) for a in np.flatnonzero(np.asarray(state.legal_action_mask))]
        last = rep.moves[ply - 1] if ply else None
        return {"ply": ply, "board": board, "to_move": None if over else ("human" if mover == human else "agent"),
                "status": status, "last_move": last, "legal": legal,
                "legal_moves": [{"action": a, "to": self._cell(a, board)} for a in legal],
                "marked": [] if last is None else [self._cell(last, board if self.ACTION == "cell" else
                                                              self._board(rep.observations[ply - 1], 1))],
                "taken": [], "scores": None, "values": None}

    def scores_json(self, row, state) -> list:
        if row is None:
            return [None] * self.GAME.num_actions
        legal = np.asarray(state.legal_action_mask)
        return [v if ok else None for v, ok in zip(number_json(row), legal)]

    def answer(self, rep: Replay, human: int, positions: list[dict], agent: str, agent_moves: list[int],
               agent_ms: float | None) -> dict:
        last = positions[-1]
        return {"game": self.GAME.id, "agent": agent, "human_first": human == 0, "human_side": self.SIDES[human],
                "moves": rep.moves,
                "record": [{"number": m.number, "side": self.SIDES[m.player], "by": "human" if m.player == human
                            else "agent", "text": m.text, "plies": [m.first, m.last]} for m in self.record(rep, rep.moves)],
                "agent_move": agent_moves[0] if agent_moves else None, "agent_moves": agent_moves,
                "agent_ms": agent_ms, **{k: last[k] for k in ("status", "to_move", "board", "legal", "scores", "values")},
                "positions": positions}

    # ---- text and pictures
    def ply_name(self, state, action: int) -> str:
        board = self._player_board(state, 0) if self.ACTION == "column" else None
        return self._name(self._cell(int(action), board))

    def record(self, states, actions) -> list[Move]:
        state = states.state if isinstance(states, Replay) else states.__getitem__
        moves, number = [], 0
        for ply, action in enumerate(actions):
            player = int(state(ply).current_player)
            number += player == 0 or ply == 0
            moves.append(Move(number, player, self.ply_name(state(ply), action), ply, ply))
        return moves

    def render(self, state) -> str:
        board = self._player_board(state, 0)
        marks = {1: self.SIDES[0][:1], -1: self.SIDES[1][:1]}
        if self.geometry is None:
            return "\n".join(" ".join(marks.get(int(np.sign(v)), ".") for v in row) for row in board)
        # one line per height of cell centres, two characters per board unit across
        places = {cell: (round(y, 3), math.floor(2 * x + 0.5 + 1e-9)) for cell, (x, y) in self.geometry.cells.items()}
        heights = sorted({y for y, _ in places.values()})
        left = min(x for _, x in places.values())
        lines = [[" "] * (max(x for _, x in places.values()) - left + 1) for _ in heights]
        for (r, c), (y, x) in places.items():
            lines[heights.index(y)][x - left] = marks.get(int(np.sign(board[r][c])), ".")
        return "\n".join("".join(line).rstrip() for line in lines)

    def scene(self, state, before=None, action: int | None = None, caption: str | None = None) -> drawing.Scene:
        size, top = 60, 30
        board = self._player_board(state, 0)
        shapes: list = []
        marked = None if action is None else self._cell(int(action), board)
        if self.geometry is not None:
            return self._geometry_scene(board, marked, caption)
        for r in range(self.rows):
            for c in range(self.cols):
                fill = "#ffe98a" if marked == [r, c] else "#ffffff"
                shapes.append(drawing.Rect(c * size, top + r * size, size, size, fill, drawing.INK, 2))
                v = int(np.sign(board[r][c]))
                if v:
                    shapes.append(drawing.Text(c * size + size / 2, top + r * size + size * 0.7,
                                               self.SIDES[0 if v > 0 else 1][:1], size * 0.6, bold=True))
        if caption:
            shapes.append(drawing.Text(self.cols * size / 2, 20, caption, 14))
        return drawing.Scene(self.cols * size, top + self.rows * size, tuple(shapes), title=self.NAME)

    def _geometry_scene(self, board, marked, caption) -> drawing.Scene:
        """The scene on :attr:`geometry`: its cells (one polygon each, circles for ``"circle"``), links and
        sides (lines; a side's ``data-player``), then the pieces' marks."""
        g, unit, top = self.geometry, 60, 30
        shapes: list = []
        for (r, c), (x, y) in g.cells.items():
            fill = "#ffe98a" if marked == [r, c] else "#ffffff"
            data = (("cell", f"{r}-{c}"),)
            if g.shape == "circle":
                shapes.append(drawing.Circle(x * unit, top + y * unit, 0.4 * unit, fill, drawing.INK, 2, "cell", data))
            else:
                points = tuple((px, top + py) for px, py in g.outline((r, c), unit))
                shapes.append(drawing.Polygon(points, fill, "cell", data, drawing.INK, 2))
        at = lambda cell: (g.cells[cell][0] * unit, top + g.cells[cell][1] * unit)  # noqa: E731
        shapes += [drawing.Line(*at(a), *at(b), "#9aa1ad", 1.5, "link") for a, b in g.links]
        shapes += [drawing.Line(a[0] * unit, top + a[1] * unit, b[0] * unit, top + b[1] * unit, SIDE_COLOURS[p], 6,
                                "side", (("player", str(p)),)) for p, a, b in g.sides]
        for (r, c), (x, y) in g.cells.items():
            v = int(np.sign(board[r][c]))
            if v:
                player = 0 if v > 0 else 1
                shapes.append(drawing.Text(x * unit, top + (y + 0.2) * unit, self.SIDES[player][:1], unit * 0.5,
                                           SIDE_COLOURS[player], bold=True))
        width, height = round(g.width * unit), top + round(g.height * unit)
        if caption:
            shapes.append(drawing.Text(width / 2, 20, caption, 14))
        return drawing.Scene(width, height, tuple(shapes), title=self.NAME)
