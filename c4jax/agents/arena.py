"""Batched games between two agents (or one agent against itself), in one jitted call.

``rollout`` plays B games from given start states to the end with a
``lax.while_loop`` that stops as soon as every game is over, and records every
move in fixed-size, time-padded arrays (42 moves at most) with a validity mask.
Supervised data generation, the RL trainers and the tournament all build on it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct
from jax import Array

from c4jax.games.connect_four import env
from c4jax.agents.base import AgentBase
from c4jax.io.devices import shard_batch

MAX_MOVES = env.MAX_MOVES


@struct.dataclass
class Trajectory:
    """B recorded games; move t of game b is at [b, t]. Padding after the end has valid=False."""

    boards: Array  # int8[B, 42, 6, 7]: the board before the move, from the mover's point of view
    actions: Array  # int32[B, 42]: the column played
    rewards: Array  # float32[B, 42]: design.md §2 shaped reward of the move, for its mover
    done: Array  # bool[B, 42]: the move ended the game
    valid: Array  # bool[B, 42]: the move was played
    by_a: Array  # bool[B, 42]: agent A made the move (else agent B)
    final: env.EnvState  # [B]: the finished games
    outcome_a: Array  # float32[B]: +1 agent A won, -1 agent A lost, 0 draw

    @property
    def length(self) -> Array:
        """int32[B]: moves played in each game (from its start state)."""
        return self.valid.sum(axis=-1, dtype=jnp.int32)

    @property
    def first_mover_outcome(self) -> Array:
        """float32[B]: outcome for whoever made move 0 (what ``env.backprop_rewards`` takes)."""
        return jnp.where(self.by_a[:, 0], self.outcome_a, -self.outcome_a)


@struct.dataclass
class _Carry:
    t: Array  # int32[]
    state: env.EnvState  # [B]
    key: Array
    record: dict  # name -> [42, B, ...] time-major buffers


def rollout(agent_a, agent_b, states: env.EnvState, a_moves_first: Array, key: Array) -> Trajectory:
    """Play the games ``states`` ([B]) to the end and record them.

    Args:
      agent_a, agent_b: agents (``act(boards, key)``); ``agent_b=None`` is self-play
        (``agent_a`` on both sides, one forward pass per move).
      states: EnvState with a leading batch axis B (e.g. ``jax.vmap(env.init)`` or
        ``jax.vmap(env.random_initial_state)``).
      a_moves_first: bool[B]: agent A makes the first move of game b.
      key: PRNG key for the agents' sampling.

    Jit it with the agents as arguments: ``jax.jit(rollout)(a, b, states, first, key)``.
    Traced under a mesh with a batch axis (``c4jax.io.devices``), the games are split over
    its devices.
    """
    batch = states.done.shape[0]
    states = shard_batch(states)
    a_moves_first = shard_batch(jnp.broadcast_to(jnp.asarray(a_moves_first, jnp.bool_), (batch,)))
    a_sign = jnp.where(states.first_player_to_move == a_moves_first, 1, -1)
    record = {
        "boards": jnp.zeros((MAX_MOVES, batch, env.ROWS, env.COLS), jnp.int8),
        "actions": jnp.zeros((MAX_MOVES, batch), jnp.int32),
        "rewards": jnp.zeros((MAX_MOVES, batch), jnp.float32),
        "done": jnp.zeros((MAX_MOVES, batch), jnp.bool_),
        "valid": jnp.zeros((MAX_MOVES, batch), jnp.bool_),
        "by_a": jnp.zeros((MAX_MOVES, batch), jnp.bool_),
    }
    record = shard_batch(record, axis=1)  # time-major: the games are axis 1

    def _cond(c: _Carry) -> Array:
        return (c.t < MAX_MOVES) & ~jnp.all(c.state.done)

    def _step(c: _Carry) -> _Carry:
        key, key_a, key_b = jax.random.split(c.key, 3)
        boards = jax.vmap(env.observe)(c.state)
        a_turn = (c.t % 2 == 0) == a_moves_first
        action = agent_a.act(boards, key_a)
        if agent_b is not None:
            action = jnp.where(a_turn, action, agent_b.act(boards, key_b))
        new = jax.vmap(env.step)(c.state, action)
        rows = {
            "boards": boards,
            "actions": action,
            "rewards": new.reward,
            "done": new.done,
            "valid": ~c.state.done,
            "by_a": a_turn,
        }
        record = {k: v.at[c.t].set(jnp.where(_bcast(~c.state.done, v[c.t]), rows[k], v[c.t]))
                  for k, v in c.record.items()}
        return _Carry(t=c.t + 1, state=new, key=key, record=record)

    out = jax.lax.while_loop(_cond, _step, _Carry(t=jnp.int32(0), state=states, key=key, record=record))
    rec = {k: jnp.swapaxes(v, 0, 1) for k, v in out.record.items()}
    outcome_a = (out.state.winner * a_sign).astype(jnp.float32)
    return Trajectory(**rec, final=out.state, outcome_a=outcome_a)


def _bcast(mask: Array, like: Array) -> Array:
    return mask.reshape(mask.shape + (1,) * (like.ndim - mask.ndim))


def random_initial_states(key: Array, batch: int) -> env.EnvState:
    """[batch] design.md §3 random start positions."""
    return jax.vmap(env.random_initial_state)(jax.random.split(key, batch))


def initial_states(batch: int) -> env.EnvState:
    """[batch] empty boards."""
    return jax.vmap(env.init)(jnp.zeros(batch))


BACKPROP_VARIANTS = ("per_player", "segments")


def backprop_rewards(traj: Trajectory, n: float = 3.0, variant: str = "per_player") -> Array:
    """float32[B, 42]: back-propagated rewards of every recorded move.

    ``variant``: ``"per_player"`` (design.md §2: each player's own moves numbered 1..T) or
    ``"segments"`` (the published code, design.md §7a: absolute turn numbers, one segment per
    ±1 shaped reward; ``env.backprop_rewards_segments``).
    """
    if variant == "per_player":
        return jax.vmap(env.backprop_rewards, in_axes=(0, 0, 0, None))(
            traj.rewards, traj.valid, traj.first_mover_outcome, n
        )
    if variant == "segments":
        stones = jnp.sum(traj.boards[:, 0] != 0, axis=(-2, -1), dtype=jnp.int32)
        return jax.vmap(env.backprop_rewards_segments, in_axes=(0, 0, 0, None))(traj.rewards, traj.valid, stones, n)
    raise ValueError(f"reward back-propagation must be one of {BACKPROP_VARIANTS}, got {variant!r}")


# --------------------------------------------------------------------------- games against a fixed opponent

@struct.dataclass
class _PerGame(AgentBase):
    """``other`` plays game b where ``use_other[b]``, ``base`` elsewhere."""

    base: AgentBase
    other: AgentBase
    use_other: Array  # bool[B]
    name: str = struct.field(pytree_node=False, default="per-game")
    stochastic: bool = struct.field(pytree_node=False, default=True)

    def _act(self, boards: Array, key: Array) -> Array:
        key_base, key_other = jax.random.split(key)
        return jnp.where(self.use_other, self.other._act(boards, key_other), self.base._act(boards, key_base))


def mixed_rollout(learner, opponent, states: env.EnvState, n_vs: int, key: Array) -> tuple[Trajectory, Array]:
    """Games of ``learner`` against itself and against a fixed ``opponent``, in one batch.

    The first ``n_vs`` of the B games are ``learner`` against ``opponent``, the learner
    moving first in a random half of them (per game, from ``key``); the other games are
    self-play. ``opponent=None`` or ``n_vs=0`` is plain self-play.

    Returns ``(trajectory, learner_moves)``: ``learner_moves`` (bool[B, 42]) marks the
    moves the learner made (every move of a self-play game). Agent A of the trajectory
    is the learner.
    """
    batch = states.done.shape[0]
    if opponent is None or n_vs == 0:
        traj = rollout(learner, None, states, True, key)
        return traj, traj.valid
    seat_key, play_key = jax.random.split(key)
    vs = jnp.arange(batch) < n_vs
    learner_first = jax.random.bernoulli(seat_key, 0.5, (batch,)) | ~vs
    traj = rollout(learner, _PerGame(learner, opponent, vs), states, learner_first, play_key)
    return traj, traj.valid & (traj.by_a | ~vs[:, None])


def mixed_rollout_no_draws(learner, opponent, states: env.EnvState, n_vs: int, key: Array,
                           max_rounds: int = 8) -> tuple[Trajectory, Array]:
    """``mixed_rollout`` with every drawn game discarded and replaced by a game from the empty
    board (the published training code, design.md §7a), as in the same seat arrangement.

    A replacement that is drawn again is replaced again, up to ``max_rounds`` rounds in all
    (a bound for ``jit``; a draw left after them is kept). Round 0 is exactly
    ``mixed_rollout(..., key)``; round r > 0 plays all B games again from empty boards with
    ``fold_in(key, r)`` and takes the games that are still draws from it.
    """
    traj, moves = mixed_rollout(learner, opponent, states, n_vs, key)
    empty = initial_states(states.done.shape[0])

    def drawn(t: Trajectory) -> Array:
        return t.final.winner == 0

    def cond(c):
        r, t, _ = c
        return (r < max_rounds) & jnp.any(drawn(t))

    def body(c):
        r, t, m = c
        new_t, new_m = mixed_rollout(learner, opponent, empty, n_vs, jax.random.fold_in(key, r))
        d = drawn(t)
        t = jax.tree.map(lambda a, b: jnp.where(_bcast(d, a), a, b), new_t, t)
        return r + 1, t, jnp.where(d[:, None], new_m, m)

    _, traj, moves = jax.lax.while_loop(cond, body, (jnp.int32(1), traj, moves))
    return traj, moves
