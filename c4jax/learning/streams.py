"""Games played side by side, each restarting when it ends: what the per-ply stream collections of DQN and
PPO / REINFORCE share."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import struct
from jax import Array

from c4jax.games import base as games


@struct.dataclass
class Ply:
    """One ply of every running game: who moved, what it got, and how the next state counts for it."""

    after: Any  # the states right after the move (before a finished game restarts)
    reward: Array  # float32[E]: the mover's reward
    done: Array  # bool[E]: the move ended the game
    sign: Array  # float32[E]: +1 when the same player moves next (a multi-jump), -1 when the opponent does


def play_ply(game, envs, action: Array, plies: Array, key: Array) -> tuple[Ply, Any, Array]:
    """``(Ply, games with finished ones restarted, plies so far)`` after ``action`` in each of the games ``envs`` [E]."""
    player = envs.current_player
    after = jax.vmap(game.step)(envs, action)
    reward = jnp.take_along_axis(after.rewards, player[:, None].astype(jnp.int32), axis=-1)[:, 0]
    done = games.done(after)
    fresh = jax.vmap(game.init)(jax.random.split(key, done.shape[0]))
    envs = jax.tree.map(lambda f, a: jnp.where(done.reshape((-1,) + (1,) * (a.ndim - 1)), f, a), fresh, after)
    ply = Ply(after=after, reward=reward.astype(jnp.float32), done=done,
              sign=jnp.where(after.current_player == player, 1.0, -1.0))
    return ply, envs, jnp.where(done, 0, plies + 1)


def finished_games(ply: Ply, plies_before: Array) -> tuple[Array, Array]:
    """``(games finished, their total length in plies)`` at this ply, for the metrics."""
    return ply.done.sum(), jnp.where(ply.done, plies_before + 1, 0).sum()
