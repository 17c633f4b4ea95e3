"""c4jax.evaluation.lockstep: all of a round robin's matches in one program play the games that
one-match-per-call plays (deterministic agents), with each agent asked only where it is to move."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from c4jax import agents, evaluation
from c4jax.evaluation import lockstep, protocol


def test_the_seat_indices_give_every_game_one_mover_per_ply():
    pairs = [(0, 1), (0, 2), (1, 2), (1, 1)]
    even, odd = lockstep.seat_indices(3, pairs)
    for k in range(3):
        assert len(even[k]) == len(odd[k])
        assert not set(even[k]) & set(odd[k]) or k == 1  # agent 1's self-match: both parities
    for ply_sets in (even, odd):
        games = np.concatenate(ply_sets)
        np.testing.assert_array_equal(np.sort(games), np.arange(len(pairs) * protocol.GAMES_PER_MATCH))
    # in pair 0 A (agent 0) is the first player in games 0..49, so it moves at even plies there
    assert set(range(50)) <= set(even[0]) and set(range(50, 100)) <= set(odd[0])


@pytest.mark.slow
def test_deterministic_agents_play_the_per_match_games_and_the_openings_are_found_inside_the_program():
    names = ["1steplA", "2steplA", "dqn"]
    loaded = [agents.load(n) for n in names]
    pairs = [(0, 1), (2, 0), (2, 2)]
    key = jax.random.key(5)
    protocol.game_openings.cache_clear()  # a fresh process: the round robin's jit asks first
    results = lockstep.play_pairs(loaded, pairs, key, labels=names)
    assert len(protocol.game_openings(loaded[0].game)[0]) == 50
    for (i, j), r in zip(pairs, results):
        m = protocol.match(loaded[i], loaded[j], key)
        assert (r.agent_a, r.agent_b) == (names[i], names[j])
        assert [g.moves for g in r.games] == [g.moves for g in m.games]
        assert [(g.outcome_a, g.length, g.a_first, g.opening) for g in r.games] == \
               [(g.outcome_a, g.length, g.a_first, g.opening) for g in m.games]


def test_stochastic_agents_are_reproducible_and_a_tournament_is_filled_either_way():
    names = ["random", "1steplA"]
    one = evaluation.round_robin(names, jax.random.key(1), progress=False)
    again = evaluation.round_robin(names, jax.random.key(1), progress=False)
    per_match = evaluation.round_robin(names, jax.random.key(1), progress=False, per_match=True)
    assert one.to_dict() == again.to_dict()
    assert [(m.agent_a, m.agent_b) for m in one.matches] == [(m.agent_a, m.agent_b) for m in per_match.matches]
    assert all(m.total.games == 100 for m in one.matches)
    # 1StepLA beats random in both, by the same wide margin (random samples other moves)
    assert one.result("1steplA:det", "random").win_rate > 0.9 and per_match.result("1steplA:det", "random").win_rate > 0.9


def test_bad_pairs_are_refused():
    with pytest.raises(ValueError, match="outside"):
        lockstep.play_pairs([agents.load("random")], [(0, 1)], jax.random.key(0))


def test_a_game_whose_turns_do_not_alternate_is_played_match_by_match():
    checkers = [agents.load("checkers/random"), agents.load("checkers/random")]
    assert lockstep.fits(agents.load("random").game) and not lockstep.fits(checkers[0].game)
    with pytest.raises(ValueError, match="alternates"):
        lockstep.play_pairs(checkers, [(0, 1)], jax.random.key(0))


def test_only_agents_whose_moves_ignore_the_key_are_asked_about_their_running_games_alone():
    # keyed agents keep every game in its place in the batch (and its key); the others are compacted
    assert not agents.load("alphazero@8").keyed and not agents.load("dqn").keyed
    assert agents.load("mcts8:det").keyed and agents.load("ppo:sto").keyed and agents.load("random").keyed
    names = ["dqn", "ppo:sto"]  # a greedy network, compacted, against one that samples with its games' keys
    loaded = [agents.load(n) for n in names]
    key = jax.random.key(2)
    (r,) = lockstep.play_pairs(loaded, [(0, 1)], key, labels=names)
    (again,) = lockstep.play_pairs(loaded, [(0, 1)], key, labels=names)
    assert r.total.games == 100 and [g.moves for g in r.games] == [g.moves for g in again.games]


def test_progress_is_reported_after_every_ply_and_does_not_change_the_games():
    names = ["random:sto", "1steplA:sto", "1steplA:det"]
    loaded = [agents.load(n) for n in names]
    pairs = [(0, 1), (0, 2), (1, 2)]
    seen = []
    with_progress = lockstep.play_pairs(loaded, pairs, jax.random.key(3), labels=names,
                                        progress=lambda *a: seen.append(a))
    without = lockstep.play_pairs(loaded, pairs, jax.random.key(3), labels=names)
    assert [m.to_dict() for m in with_progress] == [m.to_dict() for m in without]
    plies = [p for p, _, _, _ in seen]
    steps, games = seen[-1][1], seen[-1][3]
    assert len(seen) > 5 and plies[0] == 0 and plies == sorted(set(plies)) and plies[-1] == steps, seen
    assert games == len(pairs) * protocol.GAMES_PER_MATCH and seen[-1][2] == games
    assert [over for _, _, over, _ in seen] == sorted(over for _, _, over, _ in seen)
