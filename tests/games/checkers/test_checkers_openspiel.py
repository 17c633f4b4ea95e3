"""Differential test: c4jax's Checkers against OpenSpiel's C++ ``checkers`` (``pyspiel``).

OpenSpiel plays the same English draughts moves (mandatory jumps, only kings jump backwards, a
multi-jump is one jump per action with the same player moving again, a man that is crowned ends
its move) but another draw rule: 40 plies in a row without a capture draw, and there is no
repetition rule. The comparison therefore plays c4jax's ``OPENSPIEL_GAME`` (those draw rules,
design.md "Checkers"); the default rules' draws are tested on hand-made positions in
tests/games/checkers/test_env.py.

Frames: OpenSpiel's board (row 0 on top, the first player's men start on rows 5-7 and move up)
is c4jax's canonical frame of the first player; the second player's frame is it turned by 180
degrees. OpenSpiel's actions are matched to c4jax's by their (start, end) squares, so the
geometry of the two action encodings is compared as well.

``N_GAMES`` random games are played in OpenSpiel (uniform over its legal actions), one state at
a time in Python; c4jax replays the same actions for all games at once (``vmap`` in one jitted
``lax.scan``). At every ply of every game we compare the legal moves (as sets of (start, end)
squares), the pieces of both players, the kings, the player to move, the end of the game and
its rewards. pyspiel is a declared test dependency (``open_spiel`` in the ``test`` extra): a
missing pyspiel is an error, not a skip.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pyspiel
import pytest

from c4jax.games.checkers import bitboard as bb
from c4jax.games.checkers import env
from c4jax.games.checkers.game import OPENSPIEL_GAME

N_GAMES = 2_000
N_GAMES_SLOW = 10_000  # in chunks of N_GAMES
SEED = 20260130

_OS_GAME = pyspiel.load_game("checkers")
_OS_DIRECTIONS = ((-1, -1), (-1, 1), (1, 1), (1, -1))  # OpenSpiel's action directions (row, column)


def _absolute(q: int, player: int) -> int:
    """The first player's square of square ``q`` in ``player``'s frame."""
    return q if player == 0 else 31 - q


def _action_maps() -> tuple[np.ndarray, dict]:
    """c4jax's action (per player to move) of each OpenSpiel action, matched by (start, end)
    squares in the first player's frame; and the (start, end) of each c4jax action."""
    ours = {}
    for player in (0, 1):
        for a in range(env.NUM_ACTIONS):
            start, end = int(bb.ACTION_START[a]), int(bb.ACTION_END[a])
            if end:
                key = (_absolute(start.bit_length() - 1, player), _absolute(end.bit_length() - 1, player))
                ours[player, key] = a
    to_ours = np.full((2, _OS_GAME.num_distinct_actions()), -1, np.int32)
    for os_action in range(_OS_GAME.num_distinct_actions()):
        cell, capture = divmod(os_action, 2)
        cell, direction = divmod(cell, 4)
        row, col = divmod(cell, 8)
        hops = 1 + capture
        end_row, end_col = row + hops * _OS_DIRECTIONS[direction][0], col + hops * _OS_DIRECTIONS[direction][1]
        start, end = bb.square_at(row, col), bb.square_at(end_row, end_col)
        if start is None or end is None:
            continue
        for player in (0, 1):
            to_ours[player, os_action] = ours[player, (start, end)]
    return to_ours, ours


_TO_OURS, _OUR_SQUARES = _action_maps()
_CELL_OF_SQUARE = [bb.row_col(q)[0] * 8 + bb.row_col(q)[1] for q in range(32)]


def _os_board(state) -> tuple[int, int, int]:
    """(first player's pieces, second player's pieces, kings) as bitboards of the first
    player's frame, read from OpenSpiel's text board ('o'/'8': first player's man/king,
    '+'/'*': second player's)."""
    text = "".join(line[1:9] for line in str(state).split("\n")[:8])
    first = second = kings = 0
    for q, cell in enumerate(_CELL_OF_SQUARE):  # plain Python: a few numpy calls per ply cost more
        char = text[cell]
        if char in "o8":
            first |= 1 << q
        elif char in "+*":
            second |= 1 << q
        if char in "8*":
            kings |= 1 << q
    return first, second, kings


def play_openspiel(n_games: int, seed: int) -> dict[str, np.ndarray]:
    """Random games in OpenSpiel. Per game and ply (ply 0 = the start): c4jax's action played,
    the legal moves as c4jax's 8 bitboards, the boards, player to move, end and returns."""
    rng = np.random.default_rng(seed)
    games = []
    for _ in range(n_games):
        state = _OS_GAME.new_initial_state()
        plies = []
        while True:
            over = state.is_terminal()
            player = -1 if over else state.current_player()
            legal = np.zeros(8, np.uint32)
            actions = [] if over else state.legal_actions()
            for os_action in actions:
                a = _TO_OURS[player, os_action]
                legal[a & 7] |= np.uint32(1 << (a >> 3))
            first, second, kings = _os_board(state)
            choice = actions[rng.integers(len(actions))] if actions else -1
            plies.append(dict(action=_TO_OURS[player, choice] if actions else 0, legal=legal, first=first,
                              second=second, kings=kings, player=player, over=over,
                              returns=np.asarray(state.returns(), np.float32)))
            if over:
                break
            state.apply_action(choice)
        games.append(plies)
    length = max(len(g) for g in games)
    out = {}
    for name in games[0][0]:
        out[name] = np.asarray([[p[name] for p in g] + [g[-1][name]] * (length - len(g)) for g in games])
    out["length"] = np.array([len(g) for g in games])
    return out


def _absolute_board(state: env.State):
    """(first player's pieces, second's, kings) in the first player's frame."""
    second = state.current_player == 1
    cur = jnp.where(second, bb.rotate(state.cur), state.cur)
    opp = jnp.where(second, bb.rotate(state.opp), state.opp)
    kings = jnp.where(second, bb.rotate(state.kings), state.kings)
    return jnp.where(second, opp, cur), jnp.where(second, cur, opp), kings


@jax.jit
def replay(actions: jax.Array):
    """c4jax's states along ``actions`` (int32[games, plies]; ply i's action leads to ply
    i + 1): per ply the legal bitboards, boards, player, end and rewards."""

    def record(state):
        first, second, kings = _absolute_board(state)
        return dict(legal=state.legal, first=first, second=second, kings=kings, player=state.current_player,
                    over=state.terminated | state.truncated, truncated=state.truncated, rewards=state.rewards)

    def one_game(game_actions):
        def ply(state, action):
            new = OPENSPIEL_GAME.step(state, action)
            return new, record(new)

        start = OPENSPIEL_GAME.init()
        _, trace = jax.lax.scan(ply, start, game_actions[:-1])
        return jax.tree.map(lambda s, t: jnp.concatenate([s[None], t]), record(start), trace)

    return jax.vmap(one_game)(actions)


def compare(n_games: int, seed: int) -> tuple[dict[str, int], int]:
    """Mismatches per compared quantity over every ply of ``n_games`` random games, and the
    number of plies compared."""
    ref = play_openspiel(n_games, seed)
    got = jax.tree.map(np.asarray, replay(jnp.asarray(ref["action"], jnp.int32)))
    length = ref["length"]
    valid = np.arange(ref["action"].shape[1])[None, :] < length[:, None]
    live = valid & ~ref["over"]
    mismatches = {
        "legal moves": (got["legal"] != ref["legal"]).any(-1) & valid,
        "first player's pieces": (got["first"] != ref["first"]) & valid,
        "second player's pieces": (got["second"] != ref["second"]) & valid,
        "kings": (got["kings"] != ref["kings"]) & valid,
        "player to move": (got["player"] != ref["player"]) & live,
        "game over": (got["over"] != ref["over"]) & valid,
        "truncated": got["truncated"] & valid,
        "rewards": (got["rewards"] != ref["returns"]).any(-1) & valid,
    }
    return {name: int(m.sum()) for name, m in mismatches.items()}, int(valid.sum())


def _check(n_games: int, seed: int) -> None:
    counts, plies = compare(n_games, seed)
    assert plies > 50 * n_games  # random games last far longer than 50 plies
    assert counts == {name: 0 for name in counts}, f"mismatches over {plies} plies of {n_games} games: {counts}"


def test_action_encodings_match_one_to_one():
    """Every OpenSpiel move on the board is one c4jax action, for both players, and no two
    OpenSpiel actions map to the same c4jax action."""
    for player in (0, 1):
        mapped = _TO_OURS[player][_TO_OURS[player] >= 0]
        assert len(mapped) == len(set(mapped.tolist())) == len([k for k in _OUR_SQUARES if k[0] == player])


def test_same_games_as_openspiel():
    _check(N_GAMES, SEED)


@pytest.mark.slow
def test_same_games_as_openspiel_many():
    for chunk in range(N_GAMES_SLOW // N_GAMES):
        _check(N_GAMES, SEED + 1 + chunk)
