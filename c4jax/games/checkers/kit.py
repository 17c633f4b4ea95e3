"""Checkers' kit (:class:`c4jax.games.kit.GameKit`): no symmetry, random starts or yardstick."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from c4jax.games.checkers import bitboard, env
from c4jax.games.checkers.card import CARD
from c4jax.games.checkers.game import GAME
from c4jax.games.kit import GameKit


def other_observation(state: env.State):
    """The observation of the player not to move: the board turned round, sides swapped,
    no jumper."""
    turned = state.replace(cur=bitboard.rotate(state.opp), opp=bitboard.rotate(state.cur),
                           kings=bitboard.rotate(state.kings), jumper=jnp.zeros_like(state.jumper))
    return env.observe(turned)


def _observation_range() -> tuple[np.ndarray, np.ndarray]:
    """Plane 0: -3 .. 3; plane 1: 0 .. 1."""
    low, high = np.full(env.OBSERVATION_SHAPE, -3, np.int8), np.full(env.OBSERVATION_SHAPE, 3, np.int8)
    low[..., 1], high[..., 1] = 0, 1
    return low, high


KIT = GameKit(game=GAME, other_observation=other_observation, observation_range=_observation_range(),
              **CARD.kit_fields())  # title, teacher, view, the algorithms' defaults
