"""The contract every game implements: a two-player, zero-sum, turn-based game as pure functions,
duck-typed (any object with these attributes is a game).

A **state** is a ``flax.struct`` dataclass (a pytree) of one game; a batch adds a leading axis. Every
state has

- ``current_player``: ``int32[]``, 0 or 1; a player may move several times in a row (a Checkers
  multi-jump), so code never assumes that turns alternate;
- ``legal_action_mask``: ``bool[num_actions]``, all ``False`` once the game is over;
- ``rewards``: ``float32[num_players]``, each player's reward for the step that made this state (+1 win,
  -1 loss, 0 otherwise). Finished states are absorbing; a step counts only from an unfinished state;
- ``terminated`` / ``truncated``: ``bool[]``, ended by the rules / by a length cap.

A **game** object is hashable and immutable (a static argument of ``jit``) and has ``id``,
``num_actions``, ``num_players`` (2), ``observation_shape``, ``max_steps`` (a bound on any game's steps)
and ``init(key) -> State``, ``step(state, action, key=None) -> State`` (an illegal action ends the game
with -1 for its mover) and ``observe(state) -> Array`` (the player to move's view, of
``observation_shape``)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import jax
import jax.numpy as jnp
from jax import Array


@runtime_checkable
class Game(Protocol):
    id: str
    num_actions: int
    num_players: int
    observation_shape: tuple[int, ...]
    max_steps: int

    def init(self, key: Array | None = None) -> Any: ...

    def step(self, state: Any, action: Array, key: Array | None = None) -> Any: ...

    def observe(self, state: Any) -> Array: ...


def done(state) -> Array:
    """bool[...]: the game is over (terminated or truncated)."""
    return state.terminated | state.truncated


def mover_reward(before, after) -> Array:
    """float32[...]: the reward of the step ``before -> after`` for its mover (0 if ``before`` was finished)."""
    reward = jnp.take_along_axis(after.rewards, before.current_player[..., None].astype(jnp.int32), axis=-1)[..., 0]
    return jnp.where(done(before), 0.0, reward).astype(jnp.float32)


def discount(before, after) -> Array:
    """float32[...]: 0 once ``after`` is over, -1 when the player to move changed, +1 when the same
    player moves again."""
    same = after.current_player == before.current_player
    return jnp.where(done(after), 0.0, jnp.where(same, 1.0, -1.0)).astype(jnp.float32)


def check_game(game) -> Game:
    """``game`` if it has every attribute of :class:`Game`, else a ``TypeError`` naming the missing ones."""
    missing = [n for n in ("id", "num_actions", "num_players", "observation_shape", "max_steps", "init", "step",
                           "observe") if not hasattr(game, n)]
    if missing:
        raise TypeError(f"{game!r} is not a game: it has no {', '.join(missing)} (c4jax.games.base.Game)")
    if game.num_players != 2:
        raise ValueError(f"{game.id}: only two-player games are supported, got num_players={game.num_players}")
    return game


def random_legal_action(key: Array, legal_action_mask: Array) -> Array:
    """int32[]: a uniformly random legal action (0 when none is legal)."""
    logits = jnp.where(legal_action_mask, 0.0, -jnp.inf)
    return jnp.where(legal_action_mask.any(), jax.random.categorical(key, logits), 0).astype(jnp.int32)


def random_positions(game, key: Array, n: int, max_plies: int = 80):
    """``n`` random unfinished positions of ``game`` (a batch of states): each plays a uniformly
    drawn number (below ``max_plies``) of random legal moves, skipping any that would end the game."""

    def one(k: Array):
        k_plies, k_moves = jax.random.split(k)
        plies = jax.random.randint(k_plies, (), 0, max_plies)

        def ply(i, state):
            action = random_legal_action(jax.random.fold_in(k_moves, i), state.legal_action_mask)
            after = game.step(state, action)
            keep = (i < plies) & ~done(after)
            return jax.tree.map(lambda a, b: jnp.where(keep, a, b), after, state)

        return jax.lax.fori_loop(0, max_plies, ply, game.init())

    return jax.jit(jax.vmap(one))(jax.random.split(key, n))
