"""Connect Four observations of PettingZoo's ``connect_four_v3`` and pgx's ``connect_four`` as c4jax boards,
with neither library imported. Both are two planes ``[..., 6, 7, 2]``, row 0 on top: plane 0 the observing
player's stones, plane 1 the opponent's; the board is plane 0 minus plane 1. Pure ``jax.numpy``, one
observation or a batch:

    board = interop.board_from_pettingzoo(env.last()[0])      # int8[6, 7]
    agents.load("dqn").act(board[None], key)"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from jax import Array

from c4jax.games.connect_four.env import COLS, ROWS
from c4jax.games.connect_four.env import EnvState, from_board

PLANES = (ROWS, COLS, 2)  # the trailing shape of both libraries' observations


def board_from_planes(planes) -> Array:
    """``int8[..., 6, 7]`` of two-plane observations ``[..., 6, 7, 2]`` (bool or 0/1 integers)."""
    planes = jnp.asarray(planes)
    if planes.shape[-3:] != PLANES:
        raise ValueError(f"a Connect Four observation is [..., {ROWS}, {COLS}, 2], got shape {planes.shape}")
    planes = planes.astype(jnp.int8)
    return planes[..., 0] - planes[..., 1]


def board_from_pgx(observation) -> Array:
    """The board of pgx observations (``state.observation``, ``bool[..., 6, 7, 2]``)."""
    return board_from_planes(observation)


def board_from_pettingzoo(observation: Any) -> Array:
    """The board of PettingZoo observations: the dict ``env.last()`` returns, or its
    ``"observation"`` array."""
    if isinstance(observation, dict):
        if "observation" not in observation:
            raise ValueError(f"a PettingZoo observation dict has an 'observation' entry, got {sorted(observation)}")
        observation = observation["observation"]
    return board_from_planes(observation)


def state_from_pgx(state: Any = None, *, observation: Any = None) -> EnvState:
    """The :class:`~c4jax.games.connect_four.env.EnvState` of one pgx position: its state (or
    anything with an ``observation``) or its observation, validated when concrete (``vmap`` for a batch)."""
    if (state is None) == (observation is None):
        raise TypeError("state_from_pgx takes a pgx state or its observation (one of the two)")
    if observation is None:
        observation = getattr(state, "observation", state)  # a pgx.State, else an observation array
    return from_board(board_from_pgx(observation))


def state_from_pettingzoo(observation: Any) -> EnvState:
    """The state of one PettingZoo observation of the agent to move (validated)."""
    return from_board(board_from_pettingzoo(observation))
