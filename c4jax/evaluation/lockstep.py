"""Every match of a round robin in one jitted program (design.md §9), for a game whose player to move
alternates at every ply (:func:`fits`): all games of all pairs are one batch, and at each ply every
agent decides the games where it is to move in one call (:func:`seat_indices`). Deterministic agents
play the games of per-match calls; agent ``k`` samples at ply ``t`` with ``fold_in(fold_in(key, t), k)``.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct
from jax import Array

from c4jax.agents import arena
from c4jax.evaluation import protocol
from c4jax.games import base as games, kit_of
from c4jax.io import devices as devs

GAMES = protocol.GAMES_PER_MATCH


def fits(game) -> bool:
    """Whether a round robin of ``game`` can be one program (its kit's ``match.alternating``)."""
    return kit_of(game).match.alternating


def seat_indices(n_agents: int, pairs: Sequence[tuple[int, int]],
                 a_to_move: np.ndarray | None = None) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """For each agent, sorted int32 game indices (``p * 100 + i`` for game ``i`` of pair ``p``) where it
    is to move at even plies and at odd plies (sets of the same size). ``a_to_move`` bool[100]: A is to
    move after game ``i``'s opening (default: games 0..49). In a self-match ``(k, k)`` agent ``k`` moves
    in all its games at every ply."""
    a_first = np.arange(GAMES) < protocol.NUM_OPENINGS if a_to_move is None else np.asarray(a_to_move, bool)
    even: list[list[np.ndarray]] = [[] for _ in range(n_agents)]
    odd: list[list[np.ndarray]] = [[] for _ in range(n_agents)]
    for p, (i, j) in enumerate(pairs):
        games_p = p * GAMES + np.arange(GAMES)
        if i == j:
            even[i].append(games_p)
            odd[i].append(games_p)
            continue
        even[i].append(games_p[a_first])  # A is to move after the opening there: it moves at even plies
        odd[i].append(games_p[~a_first])
        even[j].append(games_p[~a_first])
        odd[j].append(games_p[a_first])
    cat = lambda parts: np.sort(np.concatenate(parts)).astype(np.int32) if parts else np.zeros(0, np.int32)  # noqa: E731
    return [cat(e) for e in even], [cat(o) for o in odd]


@struct.dataclass
class _Carry:
    t: Array
    state: object
    returns: Array  # float32[G, 2]
    actions: Array  # int32[T, G]
    valid: Array  # bool[T, G]


def _layout(n_agents: int, pairs: tuple[tuple[int, int], ...], game):
    """The openings' states of every game, A's player in each, and each agent's seat indices."""
    moves, _, a_to_move = protocol.seats(game)
    both = protocol.match_states(game, jnp.asarray(moves))
    n_pairs = len(pairs)
    states = jax.tree.map(lambda x: jnp.tile(x, (n_pairs,) + (1,) * (x.ndim - 1)), both)
    a_to_move_all = jnp.tile(jnp.asarray(a_to_move), n_pairs)
    a_player = jnp.where(a_to_move_all, states.current_player, 1 - states.current_player)
    even, odd = seat_indices(n_agents, pairs, a_to_move)
    return states, a_player, even, odd


@functools.partial(jax.jit, static_argnames=("n_agents", "pairs", "game"))
def _start(n_agents: int, pairs: tuple[tuple[int, int], ...], game) -> tuple[_Carry, Array]:
    """The carry before the first ply and A's player in each game (int32[G])."""
    states, a_player, _, _ = _layout(n_agents, pairs, game)
    n_games, steps = len(pairs) * GAMES, game.max_steps
    start = _Carry(t=jnp.int32(0), state=states, returns=jnp.zeros((n_games, 2), jnp.float32),
                   actions=jnp.zeros((steps, n_games), jnp.int32), valid=jnp.zeros((steps, n_games), jnp.bool_))
    return start, a_player


@functools.partial(jax.jit, static_argnames=("pairs", "game"), donate_argnames=("carry",))
def _advance(agent_list: tuple, key: Array, carry: _Carry, stop: Array, pairs: tuple[tuple[int, int], ...],
             game) -> tuple[_Carry, Array]:
    """Play the plies ``carry.t .. stop - 1`` (fewer once every game is over); returns the carry and
    the number of games over (int32). Ply ``t`` uses ``fold_in(key, t)``, however the plies are split."""
    _, _, even, odd = _layout(len(agent_list), pairs, game)
    n_games = len(pairs) * GAMES
    players = [k for k in range(len(agent_list)) if len(even[k])]

    def cond(c: _Carry) -> Array:
        return (c.t < stop) & ~jnp.all(games.done(c.state))

    def body(c: _Carry) -> _Carry:
        live = ~games.done(c.state)
        ply_key = jax.random.fold_in(key, c.t)
        action = jnp.zeros((n_games,), jnp.int32)
        for k in players:
            idx = jnp.where(c.t % 2 == 0, jnp.asarray(even[k]), jnp.asarray(odd[k]))
            mine = jax.tree.map(lambda x: x[idx], c.state)
            agent_key = jax.random.fold_in(ply_key, k)
            if getattr(agent_list[k], "keyed", True):  # its moves depend on where each game sits in the batch
                chosen = agent_list[k].act_states(devs.shard_batch(mine), agent_key)
            else:  # asked only about its games still running (arena.decide), each device about its share
                chosen = devs.split_rows(_decide, (agent_list[k], agent_key), (mine, live[idx]),
                                         fill=(jax.tree.map(lambda x: x[:1], mine), jnp.zeros(1, jnp.bool_)))
            action = action.at[idx].set(chosen.astype(jnp.int32))
        new = jax.vmap(game.step)(c.state, action)
        returns = c.returns + jnp.where(live[:, None], new.rewards, 0.0)
        return _Carry(t=c.t + 1, state=new, returns=returns,
                      actions=c.actions.at[c.t].set(jnp.where(live, action, 0)),
                      valid=c.valid.at[c.t].set(live))

    out = jax.lax.while_loop(cond, body, carry)
    return out, jnp.sum(games.done(out.state), dtype=jnp.int32)


def _decide(shared: tuple, rows: tuple) -> Array:
    """int32[R]: ``arena.decide`` of ``shared = (agent, key)`` on ``rows = (states, running)``."""
    agent, key = shared
    states, live = rows
    return arena.decide(agent, states, live, key, arena.compact_capacities(live.shape[0]))


@functools.partial(jax.jit, static_argnames=("game",))
def _finish(carry: _Carry, a_player: Array, game) -> dict:
    outcome_a = jnp.take_along_axis(carry.returns, a_player[:, None], axis=-1)[:, 0]
    return {"actions": carry.actions.T, "valid": carry.valid.T, "outcome_a": outcome_a,
            "length": protocol.game_lengths(game, carry.state, carry.valid.T)}


def _play(agent_list: tuple, key: Array, pairs: tuple[tuple[int, int], ...], game,
          progress: Callable[[int, int, int, int], None] | None = None) -> dict:
    """Every game of every pair, one ply per call of one compiled program; after each call
    ``progress(plies, max_plies, games_over, games)``."""
    carry, a_player = _start(len(agent_list), pairs, game)
    if devs.batch_devices() > 1:  # the games' states whole on every device, each deciding its share
        carry, key = jax.device_put((carry, key), devs.replicated(jax.sharding.get_mesh()))
    n_games, steps = len(pairs) * GAMES, game.max_steps
    t = 0
    if progress is not None:
        progress(0, steps, 0, n_games)
    while t < steps:
        carry, over = _advance(agent_list, key, carry, jnp.int32(min(t + 1, steps)), pairs, game)
        t, over = int(carry.t), int(over)
        if progress is not None:
            progress(t if over < n_games else steps, steps, over, n_games)
        if over == n_games:
            break
    return _finish(carry, a_player, game)


def play_pairs(agent_list: Sequence, pairs: Sequence[tuple[int, int]], key: Array,
               labels: Sequence[str] | None = None, *, game=None,
               progress: Callable[[int, int, int, int], None] | None = None,
               devices: int = 1) -> list[protocol.MatchResult]:
    """The protocol match of every pair ``(i, j)`` of ``agent_list`` (agent ``i`` as A), all in one
    compiled program; ``labels`` name the agents in the results (default: their names). ``game``:
    default the first agent's. ``progress(plies played, most plies, games over, games)`` before the
    first ply and after each. ``devices``: the first N devices (0 = all) share every key-independent
    agent's decisions; the games are the same on any number. ``ValueError`` for a pair outside the
    agents or a game that does not :func:`fit <fits>`."""
    pairs = tuple((int(i), int(j)) for i, j in pairs)
    if not pairs:
        return []
    for i, j in pairs:
        if not (0 <= i < len(agent_list) and 0 <= j < len(agent_list)):
            raise ValueError(f"pair {(i, j)} names an agent outside the {len(agent_list)} given")
    game = protocol.game_of(agent_list[0], game)
    if not fits(game):
        raise ValueError(f"{game.id}: a round robin in one program needs a game whose player to move alternates "
                         "at every ply (its kit's match.alternating); play it match by match")
    labels = list(labels) if labels is not None else [protocol.agent_name(a) for a in agent_list]
    n_devices = len(devs.select(devices))
    with contextlib.nullcontext() if n_devices == 1 else jax.set_mesh(devs.make_mesh(n_devices)):
        out = jax.device_get(_play(tuple(agent_list), key, pairs, game, progress))
    moves, a_first, _ = protocol.seats(game)
    results = []
    for p, (i, j) in enumerate(pairs):
        part = {k: v[p * GAMES:(p + 1) * GAMES] for k, v in out.items()}
        results.append(protocol.match_result(part, a_first, moves, labels[i], labels[j]))
    return results
