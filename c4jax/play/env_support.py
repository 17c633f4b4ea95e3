"""What the PettingZoo and Gymnasium environments need of a game, with neither library imported: the
observation bounds, each player's view of a state (the kit's ``other_observation``, pgx's
``observe(state, player_id)``, else the mover's observation), the ``"ansi"`` text and the jitted start and
step programs, one pair per game."""

from __future__ import annotations

import functools
import operator
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from c4jax import games
from c4jax.games.base import Game, done

AGENTS = ("player_0", "player_1")  # PettingZoo's names of the players 0 and 1 (state.current_player)

RENDER_MODES = ("ansi",)  # render() returns the game's text diagram


def check_action(action, num_actions: int) -> int:
    """``action`` as an int, or a ``ValueError`` when it is not an integer in ``0 .. num_actions - 1``."""
    try:
        value = operator.index(action)
    except TypeError:
        raise ValueError(f"an action is an integer in 0..{num_actions - 1}, got {action!r}") from None
    if not 0 <= value < num_actions:
        raise ValueError(f"an action is an integer in 0..{num_actions - 1}, got {value}")
    return value


def resolve_game(game) -> games.Game:
    """A game object of ``game`` (a name of :func:`c4jax.games.make` or a game object)."""
    return games.make(game) if isinstance(game, str) else games.check_game(game)


def other_view(game: Game, state) -> Array:
    """The observation of ``state`` by the player who is not to move (pure; module docstring)."""
    other = games.kit_of(game).other_observation
    if other is not None:
        return other(state)
    pgx_env = getattr(game, "env", None)
    if game.id.startswith("pgx:") and hasattr(pgx_env, "observe"):
        return pgx_env.observe(state, 1 - state.current_player)
    return game.observe(state)


def observation_bounds(game: Game) -> tuple[np.ndarray, np.ndarray, np.dtype]:
    """``(low, high, dtype)`` of the game's observations, ``low`` and ``high`` of its shape: its kit's
    ``observation_range``, else its dtype's (bool: 0..1, float: unbounded); ``ValueError`` for integer
    observations without one."""
    dtype = np.dtype(jax.eval_shape(game.observe, jax.eval_shape(game.init, jax.random.key(0))).dtype)
    bounds = games.kit_of(game).observation_range
    if bounds is not None:
        low, high = bounds
    elif dtype == np.bool_:
        low, high = 0, 1
    elif np.issubdtype(dtype, np.integer):
        raise ValueError(f"game {game.id!r}: its observations are {dtype} and its kit has no observation_range, "
                         "which the observation space's bounds need")
    else:
        low, high = -np.inf, np.inf
    low = np.broadcast_to(np.asarray(low, dtype), game.observation_shape).copy()
    high = np.broadcast_to(np.asarray(high, dtype), game.observation_shape).copy()
    return low, high, dtype


def render_text(game: Game, state) -> str:
    """The text diagram of one state: its view's (Connect Four's ``X``/``O`` grid, Checkers' printed
    board), or for a game without a view the observation of the player to move and who that is."""
    if games.kit_of(game).view is not None:
        return games.view(game).render(state)
    state = jax.device_get(state)
    status = "game over" if bool(done(state)) else f"{AGENTS[int(state.current_player)]} to move"
    return f"{np.asarray(game.observe(state))}\n{status}"


class Summary(NamedTuple):
    """A state and what the environments read of it, in one transfer: ``views[0]`` the observation
    of the player to move, ``views[1]`` the other player's."""

    state: Any
    views: Array
    mask: Array  # bool[num_actions]: the legal actions of the player to move
    rewards: Array  # float32[2]: per player, of the step that made the state
    terminated: Array
    truncated: Array
    current_player: Array


class Programs(NamedTuple):
    init: Any  # key -> Summary
    step: Any  # (state, action, key) -> Summary


def summarize(game: Game, state) -> Summary:
    """The :class:`Summary` of one state (pure)."""
    views = jnp.stack([game.observe(state), other_view(game, state)])
    return Summary(state, views, state.legal_action_mask, state.rewards, state.terminated, state.truncated,
                   jnp.asarray(state.current_player, jnp.int32))


@functools.lru_cache(maxsize=None)
def programs(game: Game) -> Programs:
    """The jitted ``init(key)`` and ``step(state, action, key)`` of ``game``, each returning a
    :class:`Summary`; one pair per game."""
    init = jax.jit(lambda key: summarize(game, game.init(key)))
    step = jax.jit(lambda state, action, key: summarize(game, game.step(state, action, key)))
    return Programs(init, step)


def host(summary: Summary) -> Summary:
    """The summary with everything but the state fetched to numpy in one transfer."""
    rest = jax.device_get(summary._replace(state=None))
    return rest._replace(state=summary.state)


def seed_key(rng: np.random.Generator) -> Array:
    """A JAX key drawn from a numpy generator (the environments' ``np_random``)."""
    return jax.random.key(int(rng.integers(0, 2**31)))
