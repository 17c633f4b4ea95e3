"""Checkers' view (:mod:`c4jax.games.viewbase`): moves are actions 0..255 (a multi-jump is several moves
of the same player; turns follow ``current_player``). Play API boards are in the viewer's view, their
side at the bottom: +1 / +2 their man / king, -1 / -2 the opponent's; cells are ``[row, column]``."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from c4jax.games import drawing
from c4jax.games.checkers import bitboard as bb
from c4jax.games.checkers import notation, svg
from c4jax.games.checkers.game import GAME
from c4jax.games.viewbase import Move, MoveError, Replay, number_json, page, replay_moves

NAME = "Checkers"
ACTION, ACTIONS = "legal move", "legal moves"
DEFAULT_OPPONENTS = ("checkers/mcts200:det", "checkers/random")
SIDES = notation.PLAYER_NAMES
MOVES_UNIT = "PDN"
NUMBERED = True
WRAP = 54
PAGE = page(8, 8, sides=SIDES, board="squares", click="from_to", pieces={"1": "man", "2": "king"}, seats=notation.PLAYER_NAMES,
            scores="legal", score_place="target", record="Moves (PDN: squares 1–32 from black's side)",
            action=ACTION, texts={
                "start_human": "You play {side} and move first.",
                "start_agent": "You play {side}: {agent} moves first…",
                "turn": "Your turn ({side}) — click a piece, then where it goes.",
                "turn_jumper": "Your turn ({side}) — keep jumping: {jumper} must jump on.",
                "draw": {"repetition": "Draw by threefold repetition.",
                         "fifty_moves": "Draw by the fifty-move rule: 100 plies without a capture or a man's move.",
                         "cap": "Draw: the game reached the {max}-ply cap.", "": "Draw."},
                "legend": "Numbers under the marked squares (click a piece): {label}.",
                "no_scores": "{agent} shows no scores for Checkers.",
                "help": "Click one of your pieces (ringed when it can move), then a marked square. A multi-jump is "
                        "one jump per click: the same side moves again until it is over. ← / → step through the "
                        "game's past positions (read-only)."})

__all__ = ["GAME", "NAME", "PAGE", "parse_moves", "replay", "position", "scores_json", "answer", "ply_name", "record",
           "render", "scene", "outcome", "result_text"]


def parse_moves(moves: Any) -> list[int]:
    top = GAME.num_actions - 1
    if not isinstance(moves, list):
        raise MoveError(f"'moves' must be a list of Checkers actions (integers 0..{top})")
    if len(moves) > GAME.max_steps:
        raise MoveError(f"'moves' has {len(moves)} moves; a Checkers game has at most {GAME.max_steps} plies")
    for i, m in enumerate(moves):
        if isinstance(m, bool) or not isinstance(m, int):
            raise MoveError(f"move at ply {i} is {json.dumps(m)[:40]}; Checkers moves must be integers 0..{top}")
        if not 0 <= m <= top:
            raise MoveError(f"illegal move at ply {i}: action {m} is outside 0..{top}")
    return moves


def _legal_actions(state) -> np.ndarray:
    """The legal actions of one host-side state."""
    words = np.asarray(state.legal, np.uint32)
    bits = (words[None, :] >> np.arange(32, dtype=np.uint32)[:, None]) & 1  # [square, kind]
    return np.flatnonzero(bits.reshape(-1)).astype(int)


def _bit_index(word) -> int:
    return int(word).bit_length() - 1


def _side(player: int) -> str:
    return notation.PLAYER_NAMES[player]


def _move_name(state, action: int) -> str:
    try:
        return f"{notation.action_to_pdn(state, action)} (action {action})"
    except ValueError:
        return f"action {action} (off the board)"


def replay(moves: list[int]) -> Replay:
    rep, was_done, ok = replay_moves(GAME, moves)
    for i in range(len(moves)):
        if was_done[i] or not ok[i]:
            state = rep.state(i)
            name = _move_name(state, moves[i])
            if was_done[i]:
                raise MoveError(f"move at ply {i}, {name}: the game is already over after {i} plies "
                                f"({result_text(state)})")
            legal = [notation.action_to_pdn(state, a) for a in _legal_actions(state)]
            jumper = int(state.jumper)
            why = (f" ({notation.square_number(_bit_index(jumper), int(state.current_player))} must jump on)"
                   if jumper else " (a jump is mandatory)" if any("x" in m for m in legal) else "")
            raise MoveError(f"illegal move at ply {i}: {name} is not legal for {_side(int(state.current_player))}"
                            f"{why}; legal moves: {', '.join(legal)}")
    return rep


def outcome(state, human: int) -> tuple[str, str | None]:
    """``(status, draw_reason)`` of a finished state for ``human``: ``human_won`` / ``agent_won`` /
    ``draw`` with ``repetition``, ``fifty_moves`` or ``cap``."""
    if bool(state.truncated):
        return "draw", "cap"
    reward = float(np.asarray(state.rewards)[human])
    if reward > 0:
        return "human_won", None
    if reward < 0:
        return "agent_won", None
    return "draw", "fifty_moves" if int(state.quiet) >= GAME.rules.quiet_limit else "repetition"


def result_text(state) -> str:
    """How a finished game ended, in words (``"black won"``, ``"a draw by threefold repetition"``)."""
    status, reason = outcome(state, 0)
    if status == "draw":
        return {"cap": f"a draw at the {GAME.max_steps}-ply cap", "repetition": "a draw by threefold repetition",
                "fifty_moves": "a draw by the fifty-move rule"}[reason]
    return f"{_side(0 if status == 'human_won' else 1)} won"


def _cell(number: int, human: int) -> list[int]:
    """``[row, column]`` of PDN square ``number`` in the human's view (white's printed diagram for white,
    turned round for black)."""
    r = (number - 1) // 4
    c = 2 * ((number - 1) % 4) + (1 if r % 2 == 0 else 0)
    return [7 - r, 7 - c] if human == 0 else [r, c]


def _squares(human: int) -> list[list[int | None]]:
    """The PDN number of every cell of the human's view (None on light squares)."""
    grid: list[list[int | None]] = [[None] * 8 for _ in range(8)]
    for number in range(1, 33):
        r, c = _cell(number, human)
        grid[r][c] = number
    return grid


def _move(state, action: int, human: int) -> dict:
    player = int(state.current_player)
    number = lambda word: notation.square_number(_bit_index(word), player)  # noqa: E731
    over = int(bb.ACTION_OVER[action])
    return {"action": int(action), "pdn": notation.action_to_pdn(state, action),
            "from": _cell(number(bb.ACTION_START[action]), human),
            "to": _cell(number(bb.ACTION_END[action]), human),
            "captured": _cell(number(over), human) if over else None,
            "by": "human" if player == human else "agent"}


def position(rep: Replay, ply: int, human: int) -> dict:
    state = rep.state(ply)
    player = int(state.current_player)
    board = [[0] * 8 for _ in range(8)]
    pieces = notation.absolute_board(state)
    for owner, color in enumerate(notation.PLAYER_NAMES):
        sign = 1 if owner == human else -1
        kings = set(pieces[color + "_kings"])
        for number in pieces[color]:
            r, c = _cell(number, human)
            board[r][c] = sign * (2 if number in kings else 1)
    legal = _legal_actions(state)
    if bool(state.terminated) or bool(state.truncated):
        (status, reason), to_move, side = outcome(state, human), None, None
    else:
        status, reason = ("human_turn" if player == human else "agent_turn"), None
        to_move, side = ("human" if player == human else "agent"), _side(player)
    jumper = int(state.jumper)
    last = _move(rep.state(ply - 1), rep.moves[ply - 1], human) if ply else None
    return {
        "ply": ply,
        "board": board,
        "to_move": to_move,
        "side": side,
        "status": status,
        "draw_reason": reason,
        "last_move": last,
        "marked": [last["from"], last["to"]] if last else [],
        "taken": [last["captured"]] if last and last["captured"] else [],
        "legal": [int(a) for a in legal],
        "legal_moves": [_move(state, a, human) for a in legal],
        "jumper": _cell(notation.square_number(_bit_index(jumper), player), human) if jumper else None,
        "scores": None,
        "values": None,
        "quiet": int(state.quiet),
        "fen": notation.to_fen(state),
    }


def scores_json(row, state) -> list:
    legal = _legal_actions(state)
    if row is None or len(legal) == 0:
        return []
    return number_json(np.asarray(row)[legal])


def record(states, actions) -> list[Move]:
    """The moves as a checkers player writes them: a multi-jump's actions joined (``15x22x29``),
    numbered by black's moves; ``states``: the states before each action (a sequence or a :class:`Replay`)."""
    state = states.state if isinstance(states, Replay) else states.__getitem__
    moves: list[Move] = []
    number = 0
    for ply, action in enumerate(actions):
        before = state(ply)
        player = int(before.current_player)
        name = notation.action_to_pdn(before, int(action))
        if moves and int(state(ply - 1).current_player) == player:  # the same multi-jump goes on
            last = moves[-1]
            moves[-1] = Move(last.number, last.player, last.text + name[name.index("x"):], last.first, ply)
            continue
        number += player == 0
        moves.append(Move(max(number, 1), player, name, ply, ply))
    return moves


def answer(rep: Replay, human: int, positions: list[dict], agent: str, agent_moves: list[int],
           agent_ms: float | None) -> dict:
    last = positions[-1]
    return {
        "game": GAME.id,
        "agent": agent,
        "human_first": human == 0,
        "human_side": _side(human),
        "moves": rep.moves,
        "pdn": [notation.action_to_pdn(rep.state(k), a) for k, a in enumerate(rep.moves)],
        "record": [{"number": m.number, "side": _side(m.player), "by": "human" if m.player == human else "agent",
                    "text": m.text, "plies": [m.first, m.last]} for m in record(rep, rep.moves)],
        "agent_move": agent_moves[0] if agent_moves else None,
        "agent_moves": agent_moves,
        "agent_ms": agent_ms,
        "status": last["status"],
        "draw_reason": last["draw_reason"],
        "to_move": last["to_move"],
        "board": last["board"],
        "legal": last["legal"],
        "scores": last["scores"],
        "values": last["values"],
        "squares": _squares(human),
        "positions": positions,
    }


def ply_name(state, action: int) -> str:
    return notation.action_to_pdn(state, int(action))


def render(state) -> str:
    return notation.render(state)


def scene(state, before=None, action: int | None = None, caption: str | None = None) -> drawing.Scene:
    return svg.scene(state, None if action is None else ply_name(before, action), caption)
