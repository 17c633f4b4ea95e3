"""Connect Four observations of other libraries as c4jax boards: PettingZoo's ``connect_four_v3`` and
pgx's ``connect_four``. Neither library is imported; the functions take their arrays.

Both observe a position as two planes of the 6 x 7 grid, row 0 on top: plane 0 the observing
player's stones, plane 1 the opponent's (pgx: ``bool[6, 7, 2]``, ``state.observation``, the player to
move's; PettingZoo: ``{"observation": int8[6, 7, 2], "action_mask": int8[7]}``, the observing
agent's). The c4jax board (``int8[6, 7]``, 1 = player to move) is plane 0 minus plane 1. Every
function is pure ``jax.numpy`` and takes one observation or a batch (any leading axes):

    board = interop.board_from_pgx(state.observation)          # int8[6, 7] or int8[B, 6, 7]
    board = interop.board_from_pettingzoo(env.last()[0])      # the agent to move's observation
    agents.load("dqn").act(board[None], key)                  # a c4jax agent's move in their game

A PettingZoo observation of the agent not to move gives the board of a position where it would move.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from jax import Array

from c4jax.games.connect_four.env import COLS, ROWS
from c4jax.games.connect_four.env import EnvState, from_board

PLANES = (ROWS, COLS, 2)  # the trailing shape of both libraries' observations


def board_from_planes(planes) -> Array:
    """``int8[..., 6, 7]``: the c4jax board of two-plane observations ``[..., 6, 7, 2]`` (plane 0: the
    player to move's stones, plane 1: the opponent's; bool or 0/1 integers)."""
    planes = jnp.asarray(planes)
    if planes.shape[-3:] != PLANES:
        raise ValueError(f"a Connect Four observation is [..., {ROWS}, {COLS}, 2], got shape {planes.shape}")
    planes = planes.astype(jnp.int8)
    return planes[..., 0] - planes[..., 1]


def board_from_pgx(observation) -> Array:
    """The c4jax board of pgx ``connect_four`` observations (``state.observation``, ``bool[..., 6, 7, 2]``)."""
    return board_from_planes(observation)


def board_from_pettingzoo(observation: Any) -> Array:
    """The c4jax board of PettingZoo ``connect_four_v3`` observations: the dict that ``env.last()`` /
    ``env.observe(agent)`` return (its ``"observation"``, ``int8[..., 6, 7, 2]``), or that array itself."""
    if isinstance(observation, dict):
        if "observation" not in observation:
            raise ValueError(f"a PettingZoo observation dict has an 'observation' entry, got {sorted(observation)}")
        observation = observation["observation"]
    return board_from_planes(observation)


def legal_from_pettingzoo(observation: Any) -> Array:
    """``bool[..., 7]``: the legal columns of PettingZoo observations (their ``"action_mask"``; all False
    for an agent that is not to move)."""
    return jnp.asarray(observation["action_mask"]).astype(bool)


def state_from_pgx(state: Any = None, *, observation: Any = None) -> EnvState:
    """The c4jax game state (:class:`c4jax.games.connect_four.env.EnvState`) of one pgx
    ``connect_four`` position: its ``pgx.State`` (anything with an ``observation``:
    ``state_from_pgx(pgx_state)``) or that state's observation (``state_from_pgx(pgx_state.observation)``
    or ``observation=...``). A concrete one is validated (:func:`c4jax.games.connect_four.env.from_board`);
    ``jax.vmap`` it for a batch."""
    if (state is None) == (observation is None):
        raise TypeError("state_from_pgx takes a pgx state or its observation (one of the two)")
    if observation is None:
        observation = getattr(state, "observation", state)  # a pgx.State, else an observation array
    return from_board(board_from_pgx(observation))


def state_from_pettingzoo(observation: Any) -> EnvState:
    """The c4jax game state of one PettingZoo observation of the agent to move (validated as
    :func:`state_from_pgx`)."""
    return from_board(board_from_pettingzoo(observation))
