"""Self-play batches of the RL trainers: the learner against itself and a fixed opponent in one batch,
and the published code's replacement of drawn games (design.md §7a).
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
    """``(trajectory, learner_moves bool[B, T])`` of B games from ``states``: the first ``n_vs`` against
    ``opponent`` (the learner first in a random half), the rest self-play. Agent A is the learner; rewards
    are the kit's shaped reward; ``record_legal`` records the legal actions."""
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
    """:func:`mixed_rollout` with each drawn game replaced by a game from the empty board (the published code),
    for up to ``max_rounds`` rounds (round r > 0 uses ``fold_in(key, r)``); a draw left after them is kept."""
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
