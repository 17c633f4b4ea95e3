"""The Agent protocol every player implements, and the jitted entry points they share.

An agent plays the ``1`` stones of public boards (design.md §1): ``int8[B, 6, 7]``,
row 0 on top. Every agent is a ``flax.struct`` dataclass: its arrays (network
parameters) are pytree leaves and its settings are static, so an agent can be
passed as an argument to a jitted function (never closed over), and ``scores``
and ``act`` are jittable and batched.

``c4jax.agents.registry.load(name)`` builds any agent from its name.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from c4jax.agents.policy import ILLEGAL_SCORE
from c4jax.games.connect_four.board import COLS, LINES, ROWS, check_boards
from c4jax.games.connect_four.game import GAME as CONNECT_FOUR


@runtime_checkable
class Agent(Protocol):
    name: str  # e.g. "1steplA:det"
    stochastic: bool  # act() samples (depends on the key)

    def scores(self, boards: Array) -> Array:
        """float32[B, 7]: what the agent thinks of each column (illegal: -inf)."""

    def act(self, boards: Array, key: Array) -> Array:
        """int32[B]: a legal column for each board."""


def _is_traced(x) -> bool:
    return isinstance(x, jax.core.Tracer)


def typed_key(key) -> Array:
    """``key`` as a typed PRNG key: a legacy ``jax.random.PRNGKey`` (uint32 key data) is wrapped with
    ``jax.random.wrap_key_data``; a typed key (``jax.random.key``) is returned as it is."""
    if jax.dtypes.issubdtype(getattr(key, "dtype", None), jax.dtypes.prng_key):
        return key
    return jax.random.wrap_key_data(key)


def playable(boards) -> tuple[np.ndarray, np.ndarray]:
    """``(boards, finished)`` of concrete public boards ``[B, 6, 7]``: the boards validated
    (``ValueError`` on a malformed one, as :func:`check_boards` says) with every finished game (the
    opponent has four in a row, or the board is full) replaced by the empty board, and
    ``bool[B]``, which ones were finished."""
    arr = check_boards(boards, batched=True, allow_finished=True)
    flat = arr.reshape(-1, ROWS * COLS)
    finished = (flat[:, LINES] == -1).all(axis=-1).any(axis=-1) | (flat != 0).all(axis=-1)
    if finished.any():
        arr = np.where(finished[:, None, None], np.int8(0), arr)
    return arr, finished


@jax.jit
def _jit_scores(agent, boards):
    return agent._scores(boards)


@jax.jit
def _jit_act(agent, boards, key):
    return agent._act(boards, key)


class AgentBase:
    """Shared public entry points; subclasses implement ``_scores`` and ``_act`` (pure, batched).

    ``game`` is the game the agent plays (Connect Four unless a subclass says otherwise).

    Called with concrete arrays (numpy, lists, jax arrays outside ``jit``), boards are
    validated (``ValueError`` on a wrong shape or dtype, values outside {-1, 0, 1} or
    impossible positions) and the call runs jitted. A finished game in the batch (the
    opponent has four in a row, or the board is full), as a batched loop over games meets
    once some have ended, gets action 0 from ``act`` and ``-inf`` in every column from
    ``scores``; the agent plays the other boards as usual (it is handed the empty board in
    place of each finished one and never sees a finished game). Called on tracers inside a user's ``jit`` the pure implementation is
    inlined and boards are not inspected.
    """

    game = CONNECT_FOUR  # a class attribute, not a pytree field (a subclass may make it a static field)

    def scores(self, boards) -> Array:
        if _is_traced(boards):
            return self._scores(boards)
        boards, finished = playable(boards)
        out = _jit_scores(self, boards)
        return jnp.where(finished[:, None], ILLEGAL_SCORE, out) if finished.any() else out

    def act(self, boards, key) -> Array:
        key = typed_key(key)  # agents take typed keys and legacy PRNGKey ones alike
        if _is_traced(boards) or _is_traced(key):
            return self._act(boards, key)
        boards, finished = playable(boards)
        out = _jit_act(self, boards, key)
        return jnp.where(finished, 0, out).astype(out.dtype) if finished.any() else out

    def act_states(self, states, key: Array) -> Array:
        """int32[B]: a legal action for each game state ``states`` ([B]) of the agent's game
        (pure and batched, for use inside ``jit``: what :func:`c4jax.agents.arena.rollout` calls).
        By default the agent plays the observation of each state (``_act``); agents that
        need the whole state (search) override it."""
        return self._act(jax.vmap(self.game.observe)(states), key)

    def _scores(self, boards: Array) -> Array:  # pragma: no cover - abstract
        raise NotImplementedError

    def _act(self, boards: Array, key: Array) -> Array:  # pragma: no cover - abstract
        raise NotImplementedError
