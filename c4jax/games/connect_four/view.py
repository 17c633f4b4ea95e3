"""Connect Four's view (:mod:`c4jax.games.viewbase`): moves are columns 0..6; play API boards are
``1`` the viewer's stones, ``-1`` the opponent's, row 0 on top."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from c4jax.games import drawing
from c4jax.games.connect_four import env, svg
from c4jax.games.connect_four.board import four_cells
from c4jax.games.connect_four.game import GAME
from c4jax.games.viewbase import Move, MoveError, Replay, number_json, page, replay_moves

NAME = "Connect Four"
ACTION, ACTIONS = "column", "free columns"
DEFAULT_OPPONENTS = ("1steplA:det",)
SIDES = tuple(f"{stone}, {colour}" for stone, colour in zip(env.STONES, svg.COLOUR_NAMES))
MOVES_UNIT = "columns 0-6"
NUMBERED = False  # the move list is the bare columns
WRAP = 56
PAGE = page(env.ROWS, env.COLS, board="plate", click="column", pieces={"1": "disc"}, score_place="header", drop=True,
            keys=True, action=ACTION, texts={
                "draw": {"": "Draw — the board is full."},
                "legend": "Numbers above the columns: {label}. {side}",
                "help": "Click a column (or press 1–7) to drop a piece. ← / → step through the game's past positions "
                        "(read-only); → on the last one returns to the live game."})

__all__ = ["GAME", "NAME", "PAGE", "parse_moves", "replay", "position", "scores_json", "answer", "ply_name", "record",
           "render", "scene"]


def parse_moves(moves: Any) -> list[int]:
    if not isinstance(moves, list):
        raise MoveError("'moves' must be a list of columns (integers 0..6)")
    if len(moves) > env.MAX_MOVES:
        raise MoveError(f"'moves' has {len(moves)} moves; a game has at most {env.MAX_MOVES}")
    for i, m in enumerate(moves):
        if isinstance(m, bool) or not isinstance(m, int):
            raise MoveError(f"move {i} is {json.dumps(m)[:40]}; moves must be integers 0..6")
        if not 0 <= m < env.COLS:
            raise MoveError(f"illegal move {i}: column {m} is outside 0..6")
    return moves


def replay(moves: list[int]) -> Replay:
    rep, was_done, legal = replay_moves(GAME, moves)
    for i, m in enumerate(moves):
        if was_done[i]:
            raise MoveError(f"move {i} (column {m}): the game is already over after {i} moves")
        if not legal[i]:
            raise MoveError(f"illegal move {i}: column {m} is full")
    return rep


def _status(state, human: int) -> str:
    if bool(state.done):
        w = int(state.winner)  # +1: the first player (player 0) won
        return "draw" if w == 0 else ("human_won" if (w == 1) == (human == 0) else "agent_won")
    return "human_turn" if int(state.num_moves) % 2 == human else "agent_turn"


def _top(board: np.ndarray, column: int) -> int:
    """The row of the highest stone of ``column`` (``ROWS`` when it is empty)."""
    filled = np.flatnonzero(board[:, column])
    return int(filled[0]) if len(filled) else env.ROWS


def position(rep: Replay, ply: int, human: int) -> dict:
    state = rep.state(ply)
    status = _status(state, human)
    human_to_move = int(state.num_moves) % 2 == human
    board = rep.observations[ply].astype(np.int64) * (1 if human_to_move else -1)
    to_move = None if bool(state.done) else ("human" if human_to_move else "agent")
    legal = [int(c) for c in np.flatnonzero(np.asarray(state.legal_mask))]
    last = rep.moves[ply - 1] if ply else None
    return {
        "ply": ply,
        "board": board.tolist(),
        "to_move": to_move,
        "status": status,
        "last_move": last,
        "legal": legal,
        "legal_moves": [{"action": c, "to": [_top(board, c) - 1, c]} for c in legal],
        "marked": [] if last is None else [[_top(board, last), last]],
        "taken": [],
        "scores": None,
        "values": None,
        "winning_cells": [list(c) for c in four_cells(board)] if status in ("human_won", "agent_won") else [],
    }


def scores_json(row, state) -> list:
    return [None] * env.COLS if row is None else number_json(row)


def answer(rep: Replay, human: int, positions: list[dict], agent: str, agent_moves: list[int],
           agent_ms: float | None) -> dict:
    last = positions[-1]
    return {
        "agent": agent,
        "human_first": human == 0,
        "moves": rep.moves,
        "agent_move": agent_moves[0] if agent_moves else None,
        "agent_ms": agent_ms,
        "status": last["status"],
        "to_move": last["to_move"],
        "board": last["board"],
        "legal": last["legal"],
        "scores": last["scores"],
        "values": last["values"],
        "winning_cells": last["winning_cells"],
        "positions": positions,
    }


def ply_name(state, action: int) -> str:
    return str(int(action))


def record(states, actions) -> list[Move]:
    return [Move(ply // 2 + 1, ply % 2, str(int(a)), ply, ply) for ply, a in enumerate(actions)]


def render(state) -> str:
    return env.render(state)


def scene(state, before=None, action: int | None = None, caption: str | None = None) -> drawing.Scene:
    return svg.scene(state, None if action is None else int(action), caption)
