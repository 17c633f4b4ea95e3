"""Back-propagation of a whole game's outcome over its moves (design.md §2, §7a): moves whose shaped
reward is 0 get a share of the game's result, growing towards its end.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
from jax import Array

from c4jax.agents.arena import Trajectory


def backprop_per_player(traj: Trajectory, n: float = 3.0) -> Array:
    """float32[B, T]: :func:`backprop_episode` of every game of a rollout (movers from ``traj.by_a``)."""
    first_player = traj.by_a == traj.by_a[:, :1]
    return jax.vmap(backprop_episode, in_axes=(0, 0, 0, None, 0))(traj.rewards, traj.valid, traj.first_mover_outcome,
                                                                  n, first_player)


def backprop_segments(traj: Trajectory, n: float = 3.0) -> Array:
    """float32[B, T]: :func:`backprop_episode_segments` of every game of a rollout."""
    stones = jnp.sum(traj.observations[:, 0] != 0, axis=(-2, -1), dtype=jnp.int32)
    return jax.vmap(backprop_episode_segments, in_axes=(0, 0, 0, None))(traj.rewards, traj.valid, stones, n)


# --reward-backprop NAME: the back-propagation a trainer applies to its rollouts
BACKPROP = {"per_player": backprop_per_player, "segments": backprop_segments}
BACKPROP_VARIANTS = tuple(BACKPROP)


def backprop_rewards(traj: Trajectory, n: float = 3.0, variant: str = "per_player") -> Array:
    """float32[B, T]: the rollout's rewards back-propagated by the ``variant`` of :data:`BACKPROP`
    (``"per_player"``: the thesis, ``"segments"``: the published code); ``ValueError`` for another."""
    if variant not in BACKPROP:
        raise ValueError(f"reward back-propagation must be one of {BACKPROP_VARIANTS}, got {variant!r}")
    return BACKPROP[variant](traj, n)


def backprop_episode(rewards: Array, valid: Array, first_mover_outcome: Array, n: float = 3.0,
                     first_player: Array | None = None) -> Array:
    """float32[L]: the thesis' reward back-propagation over one finished episode.

    ``rewards`` float32[L] (each mover's shaped reward), ``valid`` bool[L] (a prefix), ``first_mover_outcome``
    float32[] (+1/0/-1 for the player of move 0), ``first_player`` bool[L] (move t is that player's; ``None``:
    alternating). A player's t-th own move (1-based) of its T gets ``z * (t / T) ** n`` (z: its outcome)
    where its shaped reward is 0; non-zero rewards are kept; invalid moves get 0.
    """
    chex.assert_rank([rewards, valid, first_mover_outcome], [1, 1, 0])
    chex.assert_equal_shape([rewards, valid])
    index = jnp.arange(rewards.shape[0])
    length = valid.sum()
    if first_player is None:
        first_player = index % 2 == 0
    player = jnp.where(first_player, 0, 1)  # 0: the first mover of the episode, 1: the other player
    own_t = jnp.cumsum(player[:, None] == jnp.arange(2), axis=0, dtype=jnp.int32)[index, player]
    first_moves = jnp.sum(first_player & valid, dtype=jnp.int32)
    own_total = jnp.where(player == 0, first_moves, length - first_moves)
    z = jnp.where(player == 0, first_mover_outcome, -first_mover_outcome)
    prop = z * (own_t / jnp.maximum(own_total, 1)) ** n
    out = jnp.where(rewards == 0.0, prop, rewards)
    return jnp.where(valid, out, 0.0).astype(jnp.float32)


def backprop_episode_segments(rewards: Array, valid: Array, start_stones: Array, n: float = 3.0) -> Array:
    """float32[L]: the published code's reward back-propagation over one episode.

    ``rewards`` float32[L] (each mover's shaped reward), ``valid`` bool[L] (a prefix), ``start_stones``
    int32[] (stones before move 0; move k is turn ``start_stones + 1 + k``). Each move whose reward has
    the last move's magnitude (turn T, reward R) ends a segment: turn i gets ``|R| (i / T) ** n`` if its
    mover is R's winner, else ``-|R| ((i + 1) / T) ** n``, rounded to 4 decimals. As in the published
    code, segment offsets count from the episode's first move and only still-zero slots are written.
    Non-zero rewards are kept; invalid moves get 0.
    """
    chex.assert_rank([rewards, valid, start_stones], [1, 1, 0])
    chex.assert_equal_shape([rewards, valid])
    rewards = jnp.where(valid, rewards.astype(jnp.float32), 0.0)
    size = rewards.shape[0]
    length = valid.sum()
    first_turn = start_stones.astype(jnp.int32) + 1
    max_reward = jnp.abs(rewards[jnp.maximum(length - 1, 0)])
    offsets = jnp.arange(size)

    def _move(j, carry):
        out, seg_turn = carry  # seg_turn: first turn of the current segment
        turn = first_turn + j
        r = rewards[j]
        split = valid[j] & (jnp.abs(jnp.abs(r) - max_reward) < 1e-4)
        i = seg_turn + offsets  # the turn each slot's value is computed for
        same = (turn - i) % 2 == 0
        winner = jnp.where(same, r > 0, r < 0)
        t = jnp.where(winner, i, i + 1).astype(jnp.float32)
        value = jnp.abs(r) * (t / turn.astype(jnp.float32)) ** n
        value = jnp.round(jnp.where(winner, value, -value), 4)
        write = split & (i < turn) & (jnp.abs(out) < 1e-4)
        out = jnp.where(write, value, out)
        return out, jnp.where(split, turn + 1, seg_turn)

    out, _ = jax.lax.fori_loop(0, size, _move, (rewards, first_turn))
    return jnp.where(valid, out, 0.0).astype(jnp.float32)
