"""Standard Checkers notation (design.md "Checkers") for one (unbatched) state, host side.

**Squares** 1-32 as checkers players number them, from black's side (black starts on 1-12): canonical
square ``q`` is number ``32 - q`` in the first player's frame, ``q + 1`` in the second's. **Moves**:
``11-15`` a step, ``15x22`` one jump (one action; :func:`parse_move` splits ``15x22x29``). **Positions**:
PDN FEN (``"B:W18,24,K27:B12,16,K22"``) and :func:`render`, square 1 at the top."""

from __future__ import annotations

import re

import jax
import numpy as np

from c4jax.games.checkers import bitboard as bb
from c4jax.games.checkers import env
from c4jax.games.checkers.game import GAME, Checkers

PLAYER_NAMES = ("black", "white")  # player 0 moves first: black in checkers notation


def square_number(q: int, player: int) -> int:
    """PDN number (1-32) of canonical square ``q`` in ``player``'s frame."""
    if not 0 <= q < 32:
        raise ValueError(f"square {q} is not in 0..31")
    return 32 - q if player == 0 else q + 1


def canonical_square(number: int, player: int) -> int:
    """Canonical square in ``player``'s frame of PDN square ``number`` (1-32)."""
    if not 1 <= number <= 32:
        raise ValueError(f"square {number} is not in 1..32")
    return 32 - number if player == 0 else number - 1


def _player(state: env.State) -> int:
    player = np.asarray(state.current_player)
    if player.shape != ():
        raise ValueError(f"expected one state, got a batch of shape {player.shape}")
    return int(player)


def _bits(x) -> int:
    return int(np.asarray(x, np.uint32))


def _squares(bits: int) -> list[int]:
    return [q for q in range(32) if bits >> q & 1]


def action_to_pdn(state: env.State, action: int) -> str:
    """PDN name (``11-15`` / ``15x22``) of ``action`` for the player to move of ``state``,
    legal or not; a ``ValueError`` for an action that leaves the board."""
    action = int(action)
    if not 0 <= action < env.NUM_ACTIONS:
        raise ValueError(f"action {action} is not in 0..{env.NUM_ACTIONS - 1}")
    end = int(bb.ACTION_END[action])
    if not end:
        raise ValueError(f"action {action} leaves the board")
    player = _player(state)
    start = int(bb.ACTION_START[action]).bit_length() - 1
    sep = "x" if action & 7 >= 4 else "-"
    return f"{square_number(start, player)}{sep}{square_number(end.bit_length() - 1, player)}"


def legal_moves(state: env.State) -> dict[str, int]:
    """The legal actions of ``state`` by their PDN names, in action order."""
    mask = np.asarray(state.legal_action_mask)
    return {action_to_pdn(state, a): int(a) for a in np.flatnonzero(mask)}


_MOVE = re.compile(r"^\s*(\d{1,2})\s*([-x])\s*(\d{1,2})\s*$")


def pdn_to_action(state: env.State, text: str) -> int:
    """The action named ``text`` (``11-15`` or ``15x22``) for the player to move of ``state``
    (legal or not); a ``ValueError`` when no action has that name."""
    match = _MOVE.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a step 'a-b' or a single jump 'axb' (use parse_move for 'axbxc')")
    player = _player(state)
    start = canonical_square(int(match[1]), player)
    end = canonical_square(int(match[3]), player)
    kinds = range(4, 8) if match[2] == "x" else range(4)
    for kind in kinds:
        a = 8 * start + kind
        if int(bb.ACTION_END[a]) == 1 << end:
            return a
    raise ValueError(f"{text!r}: no {'jump' if match[2] == 'x' else 'step'} from {match[1]} to {match[3]}")


def parse_move(state: env.State, text: str) -> list[int]:
    """The actions of a whole move: ``11-15`` -> one action, ``15x22x29`` -> the jumps
    ``15x22`` and ``22x29`` (the same player makes them one after the other)."""
    parts = re.split(r"\s*x\s*", text.strip())
    if len(parts) <= 2:
        return [pdn_to_action(state, text)]
    return [pdn_to_action(state, f"{a}x{b}") for a, b in zip(parts, parts[1:])]


def absolute_board(state: env.State) -> dict[str, list[int]]:
    """PDN squares of black's / white's men and kings (keys ``black``, ``black_kings``,
    ``white``, ``white_kings``; the kings' squares are in both lists)."""
    player = _player(state)
    cur, opp, kings = _bits(state.cur), _bits(state.opp), _bits(state.kings)
    own = {PLAYER_NAMES[player]: cur, PLAYER_NAMES[1 - player]: opp}
    out = {}
    for name, bits in own.items():
        out[name] = sorted(square_number(q, player) for q in _squares(bits))
        out[name + "_kings"] = sorted(square_number(q, player) for q in _squares(bits & kings))
    return out


def to_fen(state: env.State) -> str:
    """PDN FEN of the position: ``"B:W21,22,K30:B1,2,3"`` (side to move, white's squares,
    black's squares; ``K`` marks a king)."""
    board = absolute_board(state)
    sides = []
    for color in ("white", "black"):
        kings = set(board[color + "_kings"])
        sides.append(color[0].upper() + ",".join(("K" if n in kings else "") + str(n) for n in board[color]))
    return f"{'BW'[_player(state)]}:{sides[0]}:{sides[1]}"


def _fen_squares(text: str) -> tuple[set[int], set[int]]:
    men, kings = set(), set()
    for item in filter(None, (s.strip() for s in text.split(","))):
        king = item.upper().startswith("K")
        item = item[1:] if king else item
        if "-" in item:  # a range "1-12"
            lo, hi = (int(x) for x in item.split("-"))
            squares = range(lo, hi + 1)
        else:
            squares = [int(item)]
        for n in squares:
            if not 1 <= n <= 32:
                raise ValueError(f"square {n} is not in 1..32")
            (kings if king else men).add(n)
    return men, kings


def from_fen(fen: str, game: Checkers = GAME, jumper: int | None = None) -> env.State:
    """The state of a PDN FEN position under ``game``'s rules; ``jumper``: the PDN square of a piece
    of the side to move that must continue a multi-jump. ``ValueError`` on a malformed position."""
    fields = [f.strip() for f in fen.strip().rstrip(".").split(":")]
    if len(fields) != 3 or fields[0].upper() not in ("B", "W"):
        raise ValueError(f"{fen!r} is not a FEN 'B:W<squares>:B<squares>'")
    player = "BW".index(fields[0].upper())
    squares = {}
    for side in fields[1:]:
        color = side[:1].upper()
        if color not in ("B", "W") or color in squares:
            raise ValueError(f"{fen!r}: expected one W and one B list, got {side!r}")
        squares[color] = _fen_squares(side[1:])
    if len(squares) != 2:
        raise ValueError(f"{fen!r}: expected one W and one B list")
    everything = [n for men, kings in squares.values() for n in (*men, *kings)]
    if len(everything) != len(set(everything)):
        raise ValueError(f"{fen!r}: a square is occupied twice")

    def bits(numbers) -> int:
        return sum(1 << canonical_square(n, player) for n in numbers)

    mine, theirs = squares["BW"[player]], squares["BW"[1 - player]]
    kings = bits(mine[1] | theirs[1])
    jump_bits = 0
    if jumper is not None:
        if jumper not in mine[0] | mine[1]:
            raise ValueError(f"jumper {jumper} is not a piece of the side to move")
        jump_bits = bits([jumper])
    state = env.from_board(game.rules, bits(mine[0] | mine[1]), bits(theirs[0] | theirs[1]), kings, player,
                           jump_bits)
    if jumper is not None and not np.asarray(state.legal).any():
        raise ValueError(f"jumper {jumper} has no jump")
    return jax.device_get(state)


def diagram_cell(number: int) -> tuple[int, int]:
    """``(row, column)`` of PDN square ``number`` in :func:`render`'s diagram."""
    if not 1 <= number <= 32:
        raise ValueError(f"square {number} is not in 1..32")
    row = (number - 1) // 4
    return row, 2 * ((number - 1) % 4) + (1 if row % 2 == 0 else 0)


def render(state: env.State, numbers: bool = False) -> str:
    """A text diagram, square 1 at the top left and white's side at the bottom: ``b``/``B``
    black's man/king, ``w``/``W`` white's, ``.`` an empty dark square (its PDN number with
    ``numbers``), then who is to move (and which piece must jump on): :func:`status_text`."""
    board = absolute_board(state)
    cell = {}
    for color in ("black", "white"):
        kings = set(board[color + "_kings"])
        for n in board[color]:
            cell[n] = color[0].upper() if n in kings else color[0]
    lines = []
    for row in range(8):
        out = []
        for col in range(8):
            # printed row `row` holds squares 4 * row + 1 .. 4 * row + 4, on the odd columns
            # of even rows and the even columns of odd rows
            if (row + col) % 2 == 0:
                out.append("  " if numbers else " ")
                continue
            n = 4 * row + col // 2 + 1
            text = cell.get(n, f"{n:>2}" if numbers else ".")
            out.append(f"{text:>2}" if numbers else text)
        lines.append(" ".join(out).rstrip())
    return "\n".join(lines + [status_text(state)])


def status_text(state: env.State) -> str:
    """Who is to move (and which piece must jump on), or how the game ended: ``"black to move"``,
    ``"white to move, 14 must jump on"``, ``"game over (white wins)"``, ``"game over (draw)"``,
    ``"game over (truncated)"``."""
    player = _player(state)
    status = f"{PLAYER_NAMES[player]} to move"
    jumper = _bits(state.jumper)
    if jumper:
        status += f", {square_number(jumper.bit_length() - 1, player)} must jump on"
    if bool(np.asarray(state.terminated)) or bool(np.asarray(state.truncated)):
        rewards = np.asarray(state.rewards)
        result = "draw" if rewards[0] == rewards[1] else f"{PLAYER_NAMES[int(np.argmax(rewards))]} wins"
        status = f"game over ({'truncated' if bool(np.asarray(state.truncated)) else result})"
    return status
