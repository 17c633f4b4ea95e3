"""Batched games between two agents (or one agent against itself), in one jitted call, for any game.

:func:`rollout` plays B games from given start states to the end in a ``lax.while_loop`` and
records every move in time-padded arrays of ``game.max_steps`` moves with a validity mask. Agents
act on the states (``agent.act_states``); whose turn it is comes from each state's
``current_player``, so a player may move several times in a row.
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
from flax import struct
from jax import Array

from c4jax import games as game_registry
from c4jax.games import base as games
from c4jax.io.devices import shard_batch

# reward_fn(before[B], after[B], action[B]) -> float32[B]: the reward a rollout records for each move
RewardFn = Callable[[object, object, Array], Array]


@struct.dataclass
class Trajectory:
    """B recorded games; move t of game b is at [b, t]. Padding after the end has valid=False."""

    observations: Array  # [B, T, *observation_shape]: the observation before the move, for its mover (C4: int8[6, 7] boards)
    actions: Array  # int32[B, T]: the action played
    rewards: Array  # float32[B, T]: the move's reward for its mover (``reward_fn``; default: the game's)
    done: Array  # bool[B, T]: the move ended the game
    valid: Array  # bool[B, T]: the move was played
    by_a: Array  # bool[B, T]: agent A made the move (else agent B)
    final: object  # game state [B]: the finished games
    outcome_a: Array  # float32[B]: agent A's total reward (+1 won, -1 lost, 0 draw)
    legal: Array | None = None  # bool[B, T, A]: the legal actions before the move (``record_legal``; else None)

    @property
    def length(self) -> Array:
        """int32[B]: moves played in each game (from its start state)."""
        return self.valid.sum(axis=-1, dtype=jnp.int32)

    @property
    def first_mover_outcome(self) -> Array:
        """float32[B]: outcome for whoever made move 0."""
        return jnp.where(self.by_a[:, 0], self.outcome_a, -self.outcome_a)


@struct.dataclass
class _Carry:
    t: Array  # int32[]
    state: object  # game state [B]
    returns: Array  # float32[B, 2]: each player's summed reward so far
    key: Array
    record: dict  # name -> [T, B, ...] time-major buffers


def compact_capacities(batch: int) -> tuple[int, ...]:
    """The batch sizes a compacting rollout asks an agent with: about 4%, 12%, 30%, 60% and 100% of ``batch``."""
    return tuple(sorted({max(1, -(-batch * n // 100)) for n in (4, 12, 30, 60)} | {batch}))


def first_copies(states, among: Array) -> Array:
    """int32[B]: for each game where ``among`` [B] is true, the first such game whose state is the same
    to the bit (every leaf of the state pytree); every other game maps to itself. O(B log B)."""
    batch = among.shape[0]
    columns = []
    for x in jax.tree.leaves(states):
        if jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
            x = jax.random.key_data(x)
        if jnp.issubdtype(x.dtype, jnp.floating):  # compared by their bits, not their values
            x = jax.lax.bitcast_convert_type(x, jnp.dtype(f"uint{8 * x.dtype.itemsize}"))
        if x.dtype.itemsize == 8:  # two 32-bit words each
            x = jax.lax.bitcast_convert_type(x, jnp.uint32)
        columns += list(x.reshape(batch, -1).astype(jnp.uint32).T)
    order = jnp.arange(batch, dtype=jnp.int32)
    # the games of ``among`` first, equal states next to each other, each run in the games' order
    keys = [(~among).astype(jnp.uint32)] + columns + [order]
    ranked = jax.lax.sort(keys, num_keys=len(keys))
    among_s, cols_s, index_s = ranked[0] == 0, jnp.stack(ranked[1:-1], axis=1), ranked[-1]
    same = jnp.concatenate([jnp.zeros(1, jnp.bool_), among_s[1:] & among_s[:-1]
                            & jnp.all(cols_s[1:] == cols_s[:-1], axis=1)])
    run_start = jax.lax.cummax(jnp.where(same, 0, order))  # position of the first game of each run
    return jnp.zeros(batch, jnp.int32).at[index_s].set(index_s[run_start])


def decide(agent, states, mover: Array, key: Array, capacities: tuple[int, ...]) -> Array:
    """int32[B]: ``agent``'s actions in the games where ``mover`` [B] is true (0 elsewhere), asking it
    only about those (not at all when there are none).

    A ``keyed`` agent is asked in the smallest of ``capacities`` that holds them; a costly unkeyed one
    once per distinct state (on a CPU ``CPU_CHUNK`` games per call); a cheap unkeyed one about all B.
    Without the attributes an agent counts as costly and keyed."""
    batch = mover.shape[0]
    keyed = getattr(agent, "keyed", True)
    if not getattr(agent, "costly", True) and not keyed:
        return jnp.where(mover, agent.act_states(states, key).astype(jnp.int32), 0)
    source = jnp.arange(batch, dtype=jnp.int32) if keyed else first_copies(states, mover)
    asked = mover & (source == jnp.arange(batch))
    if not keyed and jax.default_backend() == "cpu":
        actions = _in_chunks(agent, states, asked, key, min(CPU_CHUNK, batch))
    else:
        actions = _in_capacities(agent, states, asked, key, capacities)
    return jnp.where(mover, actions[source], 0)


CPU_CHUNK = 32  # games per call of a search on a CPU, where its cost per game hardly changes above it


def _answer(agent, states, asked: Array, slots: Array, key: Array, actions: Array) -> Array:
    """``actions`` with the agent's answers for the games ``slots`` (``B``: an empty slot, answer dropped)."""
    batch = asked.shape[0]
    picked = jax.tree.map(lambda x: x[jnp.where(slots < batch, slots, jnp.argmax(asked))], states)
    return actions.at[slots].set(agent.act_states(picked, key).astype(jnp.int32), mode="drop")


def _in_capacities(agent, states, asked: Array, key: Array, capacities: tuple[int, ...]) -> Array:
    """int32[B]: the agent's actions in the ``asked`` games (0 elsewhere), in one call of the smallest
    of ``capacities`` that holds them."""
    batch = asked.shape[0]

    def ask(cap: int):
        return lambda _: _answer(agent, states, asked, jnp.nonzero(asked, size=cap, fill_value=batch)[0], key,
                                 jnp.zeros(batch, jnp.int32))

    def nobody(_):  # no game of this agent's to move: it is not asked at all
        return jnp.zeros(batch, jnp.int32)

    count = asked.sum()
    which = jnp.minimum(jnp.searchsorted(jnp.asarray(capacities), count), len(capacities) - 1)  # first cap >= count
    return jax.lax.switch(jnp.where(count == 0, 0, which + 1), [nobody] + [ask(c) for c in capacities], None)


def _in_chunks(agent, states, asked: Array, key: Array, chunk: int) -> Array:
    """int32[B]: the agent's actions in the ``asked`` games (0 elsewhere), ``chunk`` of them per call."""
    batch = asked.shape[0]
    order = jnp.concatenate([jnp.nonzero(asked, size=batch, fill_value=batch)[0], jnp.full(chunk, batch, jnp.int32)])

    def one(i, actions):
        return _answer(agent, states, asked, jax.lax.dynamic_slice(order, (i * chunk,), (chunk,)), key, actions)

    return jax.lax.fori_loop(0, -(-asked.sum() // chunk), one, jnp.zeros(batch, jnp.int32))


def gathers(agent) -> bool:
    """Whether ``agent`` is costly and not keyed (AlphaZero's search): :func:`decide` then gives the
    very moves it makes when asked about every game."""
    return getattr(agent, "costly", True) and not getattr(agent, "keyed", True)


def rollout(agent_a, agent_b, states, a_moves_first: Array, key: Array, *, game,
            reward_fn: RewardFn | None = None, compact: bool = False, gather_searches: bool = False,
            record_legal: bool = False) -> Trajectory:
    """Play the games ``states`` ([B]) of ``game`` to the end and record them.

    Args:
      agent_a, agent_b: agents (``act_states(states, key)``); ``agent_b=None`` is self-play.
      states: game states [B].
      a_moves_first: bool[B]: agent A is the player to move in ``states[b]`` (else agent B).
      key: PRNG key for the agents' sampling.
      game: the game (:class:`c4jax.games.base.Game`; static).
      reward_fn: the reward recorded for each move (default: :func:`c4jax.games.base.mover_reward`).
      compact: ask each agent only about the games where it is to move (:func:`decide`); stochastic
        agents then play other games than with ``compact=False``. Not under ``vmap``.
      gather_searches: with ``compact=False``, still ask an agent that :func:`gathers` only about
        the games where it is to move (the same games). Not under ``vmap``.
      record_legal: also record the legal actions before each move (``Trajectory.legal``).

    Jit it with the agents as arguments and the game bound; under a mesh the games are split.
    """
    batch = states.terminated.shape[0]
    steps = game.max_steps
    states = shard_batch(states)
    a_moves_first = shard_batch(jnp.broadcast_to(jnp.asarray(a_moves_first, jnp.bool_), (batch,)))
    a_player = jnp.where(a_moves_first, states.current_player, 1 - states.current_player)
    observations = jax.vmap(game.observe)(states)
    record = {
        "observations": jnp.zeros((steps,) + observations.shape, observations.dtype),
        "actions": jnp.zeros((steps, batch), jnp.int32),
        "rewards": jnp.zeros((steps, batch), jnp.float32),
        "done": jnp.zeros((steps, batch), jnp.bool_),
        "valid": jnp.zeros((steps, batch), jnp.bool_),
        "by_a": jnp.zeros((steps, batch), jnp.bool_),
    }
    if record_legal:
        record["legal"] = jnp.zeros((steps,) + states.legal_action_mask.shape, jnp.bool_)
    record = shard_batch(record, axis=1)  # time-major: the games are axis 1
    reward_of = reward_fn if reward_fn is not None else (lambda before, after, action: games.mover_reward(before, after))

    def _cond(c: _Carry) -> Array:
        return (c.t < steps) & ~jnp.all(games.done(c.state))

    def _step(c: _Carry) -> _Carry:
        key, key_a, key_b = jax.random.split(c.key, 3)
        live = ~games.done(c.state)
        obs = jax.vmap(game.observe)(c.state)
        a_turn = c.state.current_player == a_player
        if agent_b is not None and (compact or (gather_searches and (gathers(agent_a) or gathers(agent_b)))):
            caps = compact_capacities(batch)

            def ask(agent, mover, k):
                if compact or gathers(agent):
                    return decide(agent, c.state, mover, k, caps)
                return agent.act_states(c.state, k)  # every game, each with its key and place as without

            action = jnp.where(a_turn, ask(agent_a, live & a_turn, key_a), ask(agent_b, live & ~a_turn, key_b))
        else:
            action = agent_a.act_states(c.state, key_a)
            if agent_b is not None:
                action = jnp.where(a_turn, action, agent_b.act_states(c.state, key_b))
        new = jax.vmap(game.step)(c.state, action)
        rows = {
            "observations": obs,
            "actions": action,
            "rewards": reward_of(c.state, new, action),
            "done": games.done(new),
            "valid": live,
            "by_a": a_turn,
            "legal": c.state.legal_action_mask,
        }
        record = {k: v.at[c.t].set(jnp.where(broadcast_mask(live, v[c.t]), rows[k], v[c.t]))
                  for k, v in c.record.items()}
        returns = c.returns + jnp.where(live[:, None], new.rewards, 0.0)
        return _Carry(t=c.t + 1, state=new, returns=returns, key=key, record=record)

    start = _Carry(t=jnp.int32(0), state=states, returns=jnp.zeros((batch, 2), jnp.float32), key=key, record=record)
    out = jax.lax.while_loop(_cond, _step, start)
    rec = {k: jnp.swapaxes(v, 0, 1) for k, v in out.record.items()}
    outcome_a = jnp.take_along_axis(out.returns, a_player[:, None], axis=-1)[:, 0]
    return Trajectory(**rec, final=out.state, outcome_a=outcome_a.astype(jnp.float32))


def broadcast_mask(mask: Array, like: Array) -> Array:
    """``mask`` ([B] or [T, B]) with trailing unit axes, to select per game in arrays like ``like``."""
    return mask.reshape(mask.shape + (1,) * (like.ndim - mask.ndim))


def random_initial_states(key: Array, batch: int, game) -> object:
    """[batch] random start positions of ``game``, as its kit makes them (``GameKit.random_start``)."""
    start = game_registry.kit_of(game).random_start
    if start is None:
        raise ValueError(f"{game.id} has no random start positions")
    return jax.vmap(start)(jax.random.split(key, batch))


def initial_states(batch: int, game) -> object:
    """[batch] start positions of ``game`` (Connect Four's: empty boards)."""
    return jax.vmap(game.init)(jax.random.split(jax.random.key(0), batch))
