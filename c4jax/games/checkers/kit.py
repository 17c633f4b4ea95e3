"""Checkers' kit (:class:`c4jax.games.kit.GameKit`): the rules of design.md "Checkers" and the
algorithms' settings that differ on Checkers (sized for a 2-core CPU, docs/results/checkers).

Checkers has no symmetry that keeps its observations and actions (the board is seen from the
mover's side), no random start positions and no yardstick; evaluations play Random and pure MCTS. The supervised stage
imitates the shipped AlphaZero network's raw policy.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from c4jax.games.checkers import bitboard, env
from c4jax.games.checkers.card import CARD
from c4jax.games.checkers.game import GAME
from c4jax.games.kit import GameKit


def other_observation(state: env.State):
    """The observation of the player who is not to move: the board turned round, the sides swapped
    (no piece bound to jump: that is the mover's)."""
    turned = state.replace(cur=bitboard.rotate(state.opp), opp=bitboard.rotate(state.cur),
                           kings=bitboard.rotate(state.kings), jumper=jnp.zeros_like(state.jumper))
    return env.observe(turned)


def _observation_range() -> tuple[np.ndarray, np.ndarray]:
    """Plane 0 holds the pieces (-3 .. 3, kings and men of both sides), plane 1 the piece that must jump on (0 / 1)."""
    low, high = np.full(env.OBSERVATION_SHAPE, -3, np.int8), np.full(env.OBSERVATION_SHAPE, 3, np.int8)
    low[..., 1], high[..., 1] = 0, 1
    return low, high


KIT = GameKit(game=GAME, other_observation=other_observation, observation_range=_observation_range(),
              **CARD.kit_fields())  # title, teacher, view, the algorithms' defaults
