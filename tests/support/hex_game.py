"""A game on a board of hexagons for the tests of drawn geometry: Hex on 3 x 3 cells (``hexgame/``).

Player 0 (Red) joins the top and bottom rows, player 1 (Blue) the left and right columns; an action is a
cell (``3 * row + col``); observations are ``[3, 3, 2]``: the mover's stones, the opponent's (who is to move
is their count's parity). The view is the guide's (docs/guide/extend.md, the ``# hexgame/view.py`` block):
``GridView`` with ``c4jax.games.geometry.hexes(3, 3)``. ``registered_hex(root)`` writes the package under
``root``, registers it as ``"hex"`` and undoes both on exit (:func:`guide_games.registered`).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from guide_games import guide_files, registered

GAME = '''\
from dataclasses import dataclass

import jax
import jax.numpy as jnp
from flax import struct

N = 3
CELLS = N * N
ROW, COL = jnp.arange(CELLS) // N, jnp.arange(CELLS) % N
# cells that touch on a Hex board: (r, c±1), (r±1, c), (r-1, c+1), (r+1, c-1)
DR, DC = ROW[:, None] - ROW[None, :], COL[:, None] - COL[None, :]
TOUCH = ((jnp.abs(DR) + jnp.abs(DC) == 1) | ((DR == -DC) & (jnp.abs(DR) == 1))).astype(jnp.float32)


@struct.dataclass
class State:
    board: jax.Array  # int8[9]: 1 player 0's stone, -1 player 1's
    current_player: jax.Array
    legal_action_mask: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array


def joined(own, start, goal):
    """Whether the stones ``own`` join a cell of ``start`` to one of ``goal`` (bool[9] each)."""
    reach = own & start
    for _ in range(CELLS):
        reach = own & (reach | (TOUCH @ reach.astype(jnp.float32) > 0))  # float: ONNX Runtime multiplies no ints
    return jnp.any(reach & goal)


@dataclass(frozen=True)
class Hex:
    id: str = "hex"
    num_actions: int = CELLS
    num_players: int = 2
    observation_shape: tuple = (N, N, 2)
    max_steps: int = CELLS

    def init(self, key=None) -> State:
        return State(board=jnp.zeros(CELLS, jnp.int8), current_player=jnp.int32(0),
                     legal_action_mask=jnp.ones(CELLS, jnp.bool_), rewards=jnp.zeros(2, jnp.float32),
                     terminated=jnp.bool_(False), truncated=jnp.bool_(False))

    def step(self, state: State, action, key=None) -> State:
        action = jnp.asarray(action, jnp.int32)
        legal = state.legal_action_mask[jnp.clip(action, 0, CELLS - 1)] & (action >= 0) & (action < CELLS)
        mark = jnp.where(state.current_player == 0, 1, -1).astype(jnp.int8)
        board = jnp.where(legal & (jnp.arange(CELLS) == action), mark, state.board)
        won = jnp.where(state.current_player == 0, joined(board == 1, ROW == 0, ROW == N - 1),
                        joined(board == -1, COL == 0, COL == N - 1))
        over = won | ~legal  # Hex has no draws; an illegal move loses
        mover = jnp.where(won, 1.0, -1.0) * over
        rewards = jnp.where(state.current_player == 0, jnp.stack([mover, -mover]), jnp.stack([-mover, mover]))
        after = State(board=board, current_player=jnp.where(over, state.current_player, 1 - state.current_player),
                      legal_action_mask=(board == 0) & ~over, rewards=rewards.astype(jnp.float32),
                      terminated=over, truncated=jnp.bool_(False))
        finished = state.terminated | state.truncated
        return jax.tree.map(lambda old, new: jnp.where(finished, old, new), state, after)

    def observe(self, state: State) -> jax.Array:
        mark = jnp.where(state.current_player == 0, 1, -1)
        cells = state.board.reshape(N, N)
        return jnp.stack([cells == mark, cells == -mark], axis=-1).astype(jnp.int8)
'''

KIT = '''\
from c4jax.games.kit import GameKit, MatchRules
from hexgame.game import Hex

KIT = GameKit(game=Hex(), title="Hex", view="hexgame.view:VIEW", observation_range=(0, 1),
              match=MatchRules(alternating=True))
'''


def files() -> dict[str, str]:
    """The package's files: the rules and kit above, the view from the guide."""
    return {"hexgame/game.py": GAME, "hexgame/kit.py": KIT, **guide_files("hexgame")}


@contextlib.contextmanager
def registered_hex(root: Path):
    """Hex written under ``root`` and registered as ``"hex"``; yields its game."""
    with registered(root, "hexgame", "hex", files()) as game:
        yield game
