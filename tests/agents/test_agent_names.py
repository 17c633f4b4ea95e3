"""What agents declare for the play UI and ``watch``: one canonical name that ``agents.load`` takes
back, which agents can switch games, their scores for states of their game, and what those scores
are (``describe_scores``)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from c4jax import agents, games
from c4jax.agents.baselines import RandomAgent

CHECKERS = games.make("checkers")


@pytest.mark.parametrize("name, canonical", [
    ("random", "random"), ("checkers/random", "checkers/random"), ("Checkers/MCTS20:det", "checkers/mcts20:det"),
    ("checkers/mcts20", "checkers/mcts20:sto"), ("mcts20", "mcts20:sto"), ("2steplA", "2steplA:det"),
])
def test_the_canonical_name_loads_the_same_agent(name, canonical):
    agent = agents.load(name)
    assert agents.canonical_name(agent) == canonical
    again = agents.load(canonical)
    assert again == agent and agents.canonical_name(again) == canonical


def test_a_raw_policy_is_named_at_policy_and_loads_by_that_name():
    policy, zero = agents.load("alphazero@policy:sto"), agents.load("alphazero@0:sto")
    assert policy.name == zero.name == "alphazero@policy:sto" and policy.num_simulations == 0
    assert agents.canonical_name(agents.load("alphazero@0")) == "alphazero@policy:det"


def test_only_agents_without_learned_parameters_switch_games():
    switched = agents.for_game(RandomAgent(), CHECKERS)
    assert switched.game == CHECKERS and agents.canonical_name(switched) == "checkers/random"
    assert agents.for_game(agents.load("mcts20:det"), CHECKERS).name == "mcts20:det"
    assert agents.for_game(agents.load("1steplA"), CHECKERS) is None
    assert agents.for_game(agents.load("supervised"), CHECKERS) is None
    checkers_random = agents.load("checkers/random")
    assert agents.for_game(checkers_random, CHECKERS) is checkers_random


def test_scores_of_states_are_the_scores_of_their_observations():
    game = games.make("connect_four")
    state = jax.device_get(game.step(game.step(game.init(), 3), 3))
    batch = jax.tree.map(lambda x: np.asarray(x)[None], state)
    board = np.asarray(game.observe(state))[None]
    for agent in (agents.load("2steplA"), RandomAgent(), agents.load("supervised")):
        np.testing.assert_array_equal(np.asarray(agent.scores_states(batch)), np.asarray(agent.scores(board)))
        jitted = jax.jit(lambda a, s: a.scores_states(s))(agent, batch)
        np.testing.assert_allclose(np.asarray(jitted), np.asarray(agent.scores(board)), rtol=1e-6)
    ck = jax.tree.map(lambda x: np.asarray(x)[None], jax.device_get(CHECKERS.init()))
    uniform = np.asarray(agents.load("checkers/random").scores_states(ck))[0]
    legal = np.asarray(ck.legal_action_mask)[0]
    assert np.allclose(uniform[legal], 1 / legal.sum()) and np.isneginf(uniform[~legal]).all()


def test_agents_describe_their_scores_in_the_words_of_the_game():
    assert RandomAgent().describe_scores() == ("random", "probability of each column (uniform over the free columns)",
                                               False)
    assert agents.load("supervised").describe_scores().kind == "policy"
    assert agents.load("dqn").describe_scores().kind == "q"
    mcts = agents.load("mcts50").describe_scores()
    assert mcts.kind == "search" and mcts.values and "searched value of the column" in mcts.label
    ck = agents.load("checkers/mcts50").describe_scores("legal move", "legal moves")
    assert ck == ("search", "visit share of each legal move in a 50-simulation pure MCTS (random playouts)", False)
    assert agents.load("alphazero@0").describe_scores().kind == "policy"
    assert agents.from_callable(lambda b: np.zeros((len(b), 7))).describe_scores().kind == "other"
