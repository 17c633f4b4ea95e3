"""The compacting rollout (``arena.rollout(compact=True)``, which a match of another game than Connect
Four plays): each agent is asked only about the games where it is to move, in a batch of one of a
few sizes, and deterministic agents play the very games of the full-batch rollout."""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import struct

from c4jax import agents, games
from c4jax.agents import arena
from c4jax.agents.network_search import AlphaZeroAgent
from c4jax.evaluation import protocol

CHECKERS = games.make("checkers")
C4 = games.make("connect_four")


def test_the_capacities_cover_every_count():
    assert arena.compact_capacities(100) == (4, 12, 30, 60, 100)
    assert arena.compact_capacities(1) == (1,)
    assert arena.compact_capacities(7) == (1, 3, 5, 7)
    for batch in (1, 2, 7, 50, 100, 333):
        caps = arena.compact_capacities(batch)
        assert caps[-1] == batch and list(caps) == sorted(set(caps)) and caps[0] >= 1


@jax.jit
def _random_states(key):
    """20 Checkers positions after up to 9 random moves each (a finished game keeps its last position)."""
    states = jax.vmap(CHECKERS.init)(jax.random.split(key, 20))

    def ply(s, k):
        legal = s.legal_action_mask
        new = jax.vmap(CHECKERS.step)(s, jax.random.categorical(k, jnp.where(legal, 0.0, -jnp.inf)).astype(jnp.int32))
        over = games.base.done(new)
        return jax.tree.map(lambda n, o: jnp.where(arena.broadcast_mask(over, n), o, n), new, s), None

    return jax.lax.scan(ply, states, jax.random.split(key, 9))[0]


@struct.dataclass
class _CostlyNetwork(AlphaZeroAgent):
    """A raw network that says it is costly, so that ``decide`` gathers its games as it does a search's."""

    @property
    def costly(self) -> bool:
        return True


@pytest.mark.parametrize("costly", [False, True])
def test_an_agent_is_asked_only_where_it_moves(costly):
    """``decide`` answers in the chosen games (the full-batch agent's answer, for a deterministic one)
    and 0 elsewhere, whatever the number of chosen games (every capacity, none chosen, all chosen):
    a costly agent through the gathered batches, a cheap one on the whole batch."""
    net, rand = agents.load("checkers/alphazero@0"), agents.load("checkers/random")
    assert not net.costly and not net.keyed
    if costly:
        net = _CostlyNetwork(**{f.name: getattr(net, f.name) for f in dataclasses.fields(net)})
        assert net.costly
    decide = jax.jit(arena.decide, static_argnames=("capacities",))
    for count in (0, 1, 3, 5, 13, 20):
        states = _random_states(jax.random.key(count))
        mover = np.zeros(20, bool)
        mover[np.random.default_rng(count).choice(20, count, replace=False)] = True
        full = np.asarray(net.act_states(states, jax.random.key(0)))
        got = np.asarray(decide(net, states, jnp.asarray(mover), jax.random.key(0),
                                capacities=arena.compact_capacities(20)))
        np.testing.assert_array_equal(got[mover], full[mover])
        assert (got[~mover] == 0).all()
        moves = np.asarray(decide(rand, states, jnp.asarray(mover), jax.random.key(3), capacities=(4, 20)))
        legal = np.asarray(states.legal_action_mask)
        assert legal[np.flatnonzero(mover), moves[mover]].all() and (moves[~mover] == 0).all()


@struct.dataclass
class _SlotIndex:
    """Answers each game with its place in the batch it was asked in: shows how ``decide`` asks."""

    keyed: bool = struct.field(pytree_node=False, default=False)
    costly = True

    def act_states(self, states, key):
        del key
        return jnp.arange(states.legal_action_mask.shape[0], dtype=jnp.int32)


def _play(game, *lines):
    """The states after each line of moves, batched in order."""
    out = []
    for line in lines:
        s = game.init(jax.random.key(0))
        for a in line:
            s = game.step(s, jnp.int32(a))
        out.append(s)
    return jax.tree.map(lambda *xs: jnp.stack(xs), *out)


def test_first_copies_maps_each_position_to_its_first_game():
    """Games that reached the same state (by other move orders too) map to the first of them; games
    outside ``among`` map to themselves and are nobody's copy."""
    c4 = games.make("connect_four")
    states = _play(c4, [3, 2, 4], [4, 2, 3], [3], [2, 3, 4], [4, 2, 3], [3, 2, 4], [3])
    among = jnp.asarray([True, True, True, False, True, False, True])
    np.testing.assert_array_equal(np.asarray(arena.first_copies(states, among)), [0, 0, 2, 3, 0, 5, 2])
    sources = np.asarray(jax.jit(arena.first_copies)(_random_states(jax.random.key(1)), jnp.ones(20, bool)))
    np.testing.assert_array_equal(sources, np.arange(20))  # 20 different Checkers positions
    # any leaf, compared by its bits: 0.5 and 0.25 differ although both are 0 as integers
    leaves = {"half": jnp.asarray([0.5, 0.25, 0.5, 0.5], jnp.bfloat16),
              "b": jnp.asarray([[1, 2], [1, 2], [1, 2], [1, 3]], jnp.int8)}
    np.testing.assert_array_equal(np.asarray(arena.first_copies(leaves, jnp.ones(4, bool))), [0, 1, 0, 3])


@pytest.mark.parametrize("keyed", [False, True])
def test_an_agent_whose_moves_ignore_the_key_is_asked_once_per_distinct_position(keyed):
    """Copies of a position share one answer: of 13 games (12 moving) the agent is asked about the 6
    distinct positions, each game's first copy in order; an agent whose moves depend on the key is
    asked about every moving game."""
    states = _random_states(jax.random.key(2))
    picks = jnp.asarray([0, 0, 1, 1, 1, 2, 3, 3, 4, 5, 5, 5, 2])
    copies = jax.tree.map(lambda x: x[picks], states)
    mover = jnp.ones(13, bool).at[5].set(False)  # the only mover at 2 is game 12, a copy
    got = np.asarray(jax.jit(arena.decide, static_argnames=("capacities",))(
        _SlotIndex(keyed=keyed), copies, mover, jax.random.key(0), capacities=tuple(range(1, 14))))
    # asked: games 0, 2, 6, 8, 9, 12 (the first of each position) / every mover in order
    expected = [0, 1, 2, 3, 4, 0, 5, 6, 7, 8, 9, 10, 11] if keyed else [0, 0, 1, 1, 1, 0, 2, 2, 3, 4, 4, 4, 5]
    np.testing.assert_array_equal(got, expected)


def test_a_search_on_a_cpu_is_asked_in_chunks_of_one_compiled_size():
    """More distinct positions than a chunk: the agent is asked in calls of ``CPU_CHUNK`` games."""
    states = jax.tree.map(lambda *xs: jnp.concatenate(xs), *(_random_states(jax.random.key(k)) for k in (5, 6, 7)))
    mover = jnp.arange(60) % 4 != 1  # 45 moving games
    assert np.array_equal(np.asarray(arena.first_copies(states, mover)), np.arange(60))  # all different
    got = np.asarray(jax.jit(arena.decide, static_argnames=("capacities",))(
        _SlotIndex(), states, mover, jax.random.key(0), capacities=(60,)))
    rank = np.cumsum(np.asarray(mover)) - 1
    expected = rank % arena.CPU_CHUNK if jax.default_backend() == "cpu" else rank
    np.testing.assert_array_equal(got, np.where(np.asarray(mover), expected, 0))


def test_deterministic_agents_play_the_same_checkers_match_compacted_or_not():
    """Multi-jumps make a player move several times in a row, so who is asked changes game by game."""
    a, b = agents.load("checkers/alphazero@0"), agents.load("checkers/dqn")
    moves, _, a_to_move = protocol.seats(CHECKERS)
    # the first 8 openings, each in both seats (16 games of the match's 100)
    moves, a_to_move = moves[:8], np.concatenate([a_to_move[:8], a_to_move[50:58]])
    play = lambda compact: jax.tree.map(np.asarray, protocol._play_game(  # noqa: E731
        a, b, jax.random.key(0), jnp.asarray(moves), jnp.asarray(a_to_move), CHECKERS, compact=compact))
    full, compact = play(False), play(True)
    for k in full:
        np.testing.assert_array_equal(full[k], compact[k], err_msg=k)
    assert full["length"].max() > full["length"].min()  # games of different lengths: some end while others go on


def test_deterministic_agents_play_the_same_connect_four_games_compacted_or_not():
    a, b = agents.load("1steplA"), agents.load("dqn")  # both deterministic: dqn plays greedily
    states = arena.random_initial_states(jax.random.key(3), 24, C4)
    first = jnp.arange(24) % 3 == 0
    full = jax.jit(arena.rollout, static_argnames=("game",))(a, b, states, first, jax.random.key(0), game=C4)
    compact = jax.jit(arena.rollout, static_argnames=("game", "compact"))(a, b, states, first, jax.random.key(0), game=C4,
                                                                    compact=True)
    for k in ("actions", "valid", "by_a", "outcome_a", "rewards"):
        np.testing.assert_array_equal(np.asarray(getattr(full, k)), np.asarray(getattr(compact, k)), err_msg=k)


@pytest.mark.slow
def test_a_compacted_match_of_a_sampling_agent_is_reproducible():
    a, b = agents.load("checkers/random"), agents.load("checkers/alphazero@0")
    first = protocol.match(a, b, jax.random.key(7))
    assert first.games == protocol.match(a, b, jax.random.key(7)).games
    assert first.games != protocol.match(a, b, jax.random.key(8)).games


@pytest.mark.slow
def test_a_search_is_gathered_in_a_full_batch_match_and_a_sampling_opponent_keeps_its_games():
    """``gather_searches``: in a rollout that asks the agents about every game, a costly agent whose
    moves ignore the key is asked only where it moves, and a sampling opponent still samples with
    the keys of every game's place: the same games as without it."""
    search = _CostlyNetwork(**{f.name: getattr(agents.load("alphazero@0"), f.name)
                               for f in dataclasses.fields(agents.load("alphazero@0"))})
    assert arena.gathers(search) and not arena.gathers(agents.load("ppo:sto"))
    assert not arena.gathers(agents.load("ppo@4:det"))  # a guided search plays random playouts: keyed
    states = arena.random_initial_states(jax.random.key(4), 24, C4)
    first = jnp.arange(24) % 2 == 0
    play = jax.jit(functools.partial(arena.rollout, game=C4), static_argnames=("gather_searches",))
    for b in (agents.load("ppo:sto"), agents.load("random")):
        full = play(search, b, states, first, jax.random.key(0))
        gathered = play(search, b, states, first, jax.random.key(0), gather_searches=True)
        for k in ("actions", "valid", "by_a", "outcome_a"):
            np.testing.assert_array_equal(np.asarray(getattr(full, k)), np.asarray(getattr(gathered, k)), err_msg=k)
