"""Back-propagation of a whole game's outcome over its moves (design.md §2, §7a): the thesis' RL
trainers record each move's shaped reward (the game kit's ``shaped_reward``) and give the moves whose
shaped reward is 0 a share of the game's result, growing towards its end.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
from jax import Array

from c4jax.agents.arena import Trajectory


def backprop_per_player(traj: Trajectory, n: float = 3.0) -> Array:
    """float32[B, T]: the thesis' back-propagation of a rollout's rewards, each player's own moves
    numbered 1..T (:func:`backprop_episode`; who made each move from ``traj.by_a``)."""
    first_player = traj.by_a == traj.by_a[:, :1]
    return jax.vmap(backprop_episode, in_axes=(0, 0, 0, None, 0))(traj.rewards, traj.valid, traj.first_mover_outcome,
                                                                  n, first_player)


def backprop_segments(traj: Trajectory, n: float = 3.0) -> Array:
    """float32[B, T]: the published code's back-propagation of a rollout's rewards:
    absolute turn numbers, one segment per ±1 shaped reward (:func:`backprop_episode_segments`)."""
    stones = jnp.sum(traj.observations[:, 0] != 0, axis=(-2, -1), dtype=jnp.int32)
    return jax.vmap(backprop_episode_segments, in_axes=(0, 0, 0, None))(traj.rewards, traj.valid, stones, n)


# --reward-backprop NAME: the back-propagation a trainer applies to its rollouts
BACKPROP = {"per_player": backprop_per_player, "segments": backprop_segments}
BACKPROP_VARIANTS = tuple(BACKPROP)


def backprop_rewards(traj: Trajectory, n: float = 3.0, variant: str = "per_player") -> Array:
    """float32[B, T]: back-propagated rewards of every recorded move of a rollout
    (recorded with a kit's ``shaped_reward``), by the ``variant`` of :data:`BACKPROP`:
    ``"per_player"`` (the thesis) or ``"segments"`` (the published code)."""
    if variant not in BACKPROP:
        raise ValueError(f"reward back-propagation must be one of {BACKPROP_VARIANTS}, got {variant!r}")
    return BACKPROP[variant](traj, n)


def backprop_episode(rewards: Array, valid: Array, first_mover_outcome: Array, n: float = 3.0,
                     first_player: Array | None = None) -> Array:
    """The thesis' reward back-propagation over one finished episode (vmap for a batch).

    Args:
      rewards: float32[L]: shaped reward of each move, from its mover's point of view.
      valid: bool[L]: the move was played (a prefix of True).
      first_mover_outcome: float32[]: +1 if the player who made move 0 won, -1 if it
        lost, 0 for a draw.
      n: exponent of ``r_t = r_T * (t / T) ** n``.
      first_player: bool[L]: move t was made by the player who made move 0 (``None``: the players
        alternate, as in Connect Four).

    Returns:
      float32[L]: each player's t-th own move (1-based) of its T moves gets
      ``z * (t / T) ** n`` (z = that player's outcome) when its shaped reward is 0;
      non-zero shaped rewards are kept; invalid moves get 0.
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
    """The reward back-propagation of the published training code, one episode.

    Turns are absolute: move k of the episode is turn ``start_stones + 1 + k`` (the stones of
    a random start board count). The game is split at every move whose shaped reward has the
    magnitude of the last move's (±1 after a win), and each segment ending at such a move
    (turn T, reward R) back-propagates R to the zero-reward moves before it: turn i gets
    ``|R| * (i / T) ** n`` when its mover is R's "winner" (the mover of turn T if R > 0,
    the other player if R < 0) and ``-|R| * ((i + 1) / T) ** n`` otherwise (the loser's
    turn is taken as one later), rounded to 4 decimals. As in the published code, segment
    offsets are counted from the first move of the episode: the first segment is
    written in place, a later segment's values land on the episode's first moves
    (only where those are still exactly 0), so zero rewards after the first split
    stay 0. Non-zero shaped rewards are kept; invalid moves get 0.

    Args:
      rewards: float32[L]: shaped reward of each move, from its mover's point of view.
      valid: bool[L]: the move was played (a prefix of True).
      start_stones: int32[]: stones on the board before move 0.
      n: the exponent.
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
