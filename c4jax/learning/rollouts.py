"""Self-play batches of the RL trainers: the learner against itself and against a fixed opponent
in one batch, and the published code's replacement of drawn games (design.md §7a).

Built on :func:`c4jax.agents.arena.rollout`; the trajectories record the game kit's shaped reward
(``GameKit.shaped_reward``) where it has one, else the game's own rewards.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import struct
from jax import Array

from c4jax import games
from c4jax.agents import arena
from c4jax.agents.arena import Trajectory, broadcast_mask
from c4jax.agents.base import AgentBase


@struct.dataclass
class _PerGame(AgentBase):
    """``other`` plays game b where ``use_other[b]``, ``base`` elsewhere."""

    base: AgentBase
    other: AgentBase
    use_other: Array  # bool[B]
    name: str = struct.field(pytree_node=False, default="per-game")
    stochastic: bool = struct.field(pytree_node=False, default=True)
    game: Any = struct.field(pytree_node=False, kw_only=True)

    def act_states(self, states, key: Array) -> Array:
        key_base, key_other = jax.random.split(key)
        return jnp.where(self.use_other, self.other.act_states(states, key_other),
                         self.base.act_states(states, key_base))


def mixed_rollout(learner, opponent, states, n_vs: int, key: Array, *, game,
                  record_legal: bool = False) -> tuple[Trajectory, Array]:
    """Games of ``learner`` against itself and against a fixed ``opponent``, in one batch.

    The first ``n_vs`` of the B games are ``learner`` against ``opponent``, the learner
    moving first in a random half of them (per game, from ``key``); the other games are
    self-play. ``opponent=None`` or ``n_vs=0`` is plain self-play.

    Returns ``(trajectory, learner_moves)``: ``learner_moves`` (bool[B, T]) marks the
    moves the learner made (every move of a self-play game). Agent A of the trajectory
    is the learner; it records each move's shaped reward of ``game``'s kit (its own reward where the
    kit has none), and with ``record_legal`` the legal actions before each move.
    """
    reward_fn = games.kit_of(game).shaped_reward
    batch = states.terminated.shape[0]
    if opponent is None or n_vs == 0:
        traj = arena.rollout(learner, None, states, True, key, game=game, reward_fn=reward_fn,
                             record_legal=record_legal)
        return traj, traj.valid
    seat_key, play_key = jax.random.split(key)
    vs = jnp.arange(batch) < n_vs
    learner_first = jax.random.bernoulli(seat_key, 0.5, (batch,)) | ~vs
    traj = arena.rollout(learner, _PerGame(learner, opponent, vs, game=game), states, learner_first, play_key, game=game,
                         reward_fn=reward_fn, record_legal=record_legal)
    return traj, traj.valid & (traj.by_a | ~vs[:, None])


def mixed_rollout_no_draws(learner, opponent, states, n_vs: int, key: Array, max_rounds: int = 8, *,
                           game, record_legal: bool = False) -> tuple[Trajectory, Array]:
    """``mixed_rollout`` with every drawn game discarded and replaced by a game from the empty
    board (the published training code), as in the same seat arrangement.

    A replacement that is drawn again is replaced again, up to ``max_rounds`` rounds in all
    (a bound for ``jit``; a draw left after them is kept). Round 0 is exactly
    ``mixed_rollout(..., key)``; round r > 0 plays all B games again from empty boards with
    ``fold_in(key, r)`` and takes the games that are still draws from it.
    """
    traj, moves = mixed_rollout(learner, opponent, states, n_vs, key, game=game, record_legal=record_legal)
    empty = arena.initial_states(states.terminated.shape[0], game)

    def drawn(t: Trajectory) -> Array:
        return t.outcome_a == 0

    def cond(c):
        r, t, _ = c
        return (r < max_rounds) & jnp.any(drawn(t))

    def body(c):
        r, t, m = c
        new_t, new_m = mixed_rollout(learner, opponent, empty, n_vs, jax.random.fold_in(key, r), game=game,
                                     record_legal=record_legal)
        d = drawn(t)
        t = jax.tree.map(lambda a, b: jnp.where(broadcast_mask(d, a), a, b), new_t, t)
        return r + 1, t, jnp.where(d[:, None], new_m, m)

    _, traj, moves = jax.lax.while_loop(cond, body, (jnp.int32(1), traj, moves))
    return traj, moves
