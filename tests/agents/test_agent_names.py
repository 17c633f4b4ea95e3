"""What agents declare for the play UI and ``watch``: one canonical name that ``agents.load`` takes
back, which agents can switch games, their scores for states of their game, and what those scores
are (``describe_scores``)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from c4jax import agents, games
from c4jax.agents.baselines import RandomAgent

C4 = games.make(games.DEFAULT)

CHECKERS = games.make("checkers")


@pytest.mark.parametrize("name, canonical", [
    ("random", "random"), ("checkers/random", "checkers/random"), ("Checkers/MCTS20:det", "checkers/mcts20:det"),
    ("checkers/mcts20", "checkers/mcts20:det"), ("mcts20", "mcts20:det"), ("mcts20:STO", "mcts20:sto"),
    ("2steplA", "2steplA:det"),
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
    switched = agents.for_game(RandomAgent(game=C4), CHECKERS)
    assert switched.game == CHECKERS and agents.canonical_name(switched) == "checkers/random"
    assert agents.for_game(agents.load("mcts20:det"), CHECKERS).name == "checkers/mcts20:det"
    assert agents.for_game(agents.load("1steplA"), CHECKERS) is None
    assert agents.for_game(agents.load("supervised"), CHECKERS) is None
    checkers_random = agents.load("checkers/random")
    assert agents.for_game(checkers_random, CHECKERS) is checkers_random


def test_scores_of_states_are_the_scores_of_their_observations():
    game = games.make("connect_four")
    state = jax.device_get(game.step(game.step(game.init(), 3), 3))
    batch = jax.tree.map(lambda x: np.asarray(x)[None], state)
    board = np.asarray(game.observe(state))[None]
    for agent in (agents.load("2steplA"), RandomAgent(game=C4), agents.load("supervised")):
        np.testing.assert_array_equal(np.asarray(agent.scores_states(batch)), np.asarray(agent.scores(board)))
        jitted = jax.jit(lambda a, s: a.scores_states(s))(agent, batch)
        np.testing.assert_allclose(np.asarray(jitted), np.asarray(agent.scores(board)), rtol=1e-6)
    ck = jax.tree.map(lambda x: np.asarray(x)[None], jax.device_get(CHECKERS.init()))
    uniform = np.asarray(agents.load("checkers/random").scores_states(ck))[0]
    legal = np.asarray(ck.legal_action_mask)[0]
    assert np.allclose(uniform[legal], 1 / legal.sum()) and np.isneginf(uniform[~legal]).all()


def test_agents_describe_their_scores_in_the_words_of_the_game():
    assert RandomAgent(game=C4).describe_scores() == ("random", "probability of each column (uniform over the free columns)",
                                               False)
    assert agents.load("supervised").describe_scores().kind == "policy"
    assert agents.load("dqn").describe_scores().kind == "q"
    mcts = agents.load("mcts50").describe_scores()
    assert mcts.kind == "search" and mcts.values and "searched value of the column" in mcts.label
    ck = agents.load("checkers/mcts50").describe_scores("legal move", "legal moves")
    assert ck.kind == "search" and ck.values and "searched value of the legal move" in ck.label
    assert agents.load("alphazero@0").describe_scores().kind == "policy"
    assert agents.from_callable(lambda b: np.zeros((len(b), 7))).describe_scores().kind == "other"


def _variants(name: str) -> list[str]:
    return [name, f"{name}:sto", f"{name}:det"]


def test_every_name_loads_an_agent_whose_name_loads_it_back():
    """load(load(x).name) is the same player, for every listed name and pattern of both games."""
    names = agents.known_names() + agents.known_names("checkers")
    names += ["minimax2", "4steplA", "mcts7nosolve-c0.5", "mcts7solve", "alphazero@0", "alphazero@policy",
              "alphazero@3nosolve", "ppo@3", "dqn@2solve", "checkers/mcts7-c2", "checkers/alphazero@0",
              "checkers/dqn@2", "checkers/ppo@0"]
    checked = 0
    for spec in [v for n in names for v in _variants(n)]:
        try:
            agent = agents.load(spec)
        except (ValueError, ImportError):  # a mode the agent lacks (random:det), an extra not installed
            continue
        again = agents.load(agent.name)
        assert again.name == agent.name == agents.canonical_name(agent), spec
        assert type(again) is type(agent) and agents.game_of(again) == agents.game_of(agent), spec
        assert again.stochastic == agent.stochastic and getattr(again, "num_simulations", None) == \
            getattr(agent, "num_simulations", None), spec
        checked += 1
    assert checked > 60
    assert agents.load("checkers/random").name == "checkers/random"
    assert agents.load("checkers/mcts5").name == "checkers/mcts5:det"


def test_a_bare_search_name_plays_the_most_visited_move():
    assert agents.load("mcts10").name == "mcts10:det" and not agents.load("mcts10").stochastic
    assert agents.load("mcts10:sto").stochastic and agents.load("checkers/mcts10:sto").name == "checkers/mcts10:sto"
    assert agents.load("mcts10") == agents.load("mcts10:det")


def test_unknown_names_are_listed_as_they_are_spelled():
    with pytest.raises(ValueError, match="unknown agent") as e:
        agents.load("nobody")
    assert "1steplA" in str(e.value) and "1stepla" not in str(e.value)
    assert "1steplA" in agents.known_names() and "mcts1000" in agents.known_names()


def test_a_dqn_tower_plays_its_q_values():
    dqn = agents.load("checkers/dqn")
    assert dqn.name == "checkers/dqn:det" and dqn.output == "q" and dqn.describe_scores().kind == "q"
    states = jax.tree.map(lambda x: np.asarray(x)[None], jax.device_get(CHECKERS.init()))
    q = np.asarray(dqn.scores_states(states))[0]
    legal = np.asarray(states.legal_action_mask)[0]
    assert np.isneginf(q[~legal]).all() and int(np.argmax(q)) == int(dqn.act_states(states, jax.random.key(0))[0])
    assert not np.isclose(q[legal].sum(), 1.0)  # Q-values, not probabilities
    with pytest.raises(ValueError, match="no sampled"):
        agents.load("checkers/dqn:sto")
    assert agents.load("checkers/dqn@2:sto").name == "checkers/dqn@2solve:sto"  # a search samples its visits
    from c4jax.agents import onnx_export
    meta = onnx_export.metadata(onnx_export.exportable(dqn))
    assert meta["kind"] == "network" and meta["output"] == "q" and "Q-values per action" in meta["output_description"]
    assert meta["agent"] == "checkers/dqn:det"


@pytest.mark.parametrize("name, old", [("checkers/alphazero", "checkers/alphazero_v1"), ("checkers/dqn", "checkers/dqn_v1")])
def test_a_replaced_agent_stays_loadable_under_its_new_name(name, old):
    from c4jax.io import checkpoint

    new_agent, old_agent = agents.load(name), agents.load(old)
    assert old_agent.name.startswith(old) and new_agent.name.startswith(name + (":" if "dqn" in name else "@"))
    assert (type(old_agent), old_agent.output) == (type(new_agent), new_agent.output)  # the same kind of player
    meta_new = checkpoint.read_metadata(agents.checkpoint_path(name), game=None)
    meta_old = checkpoint.read_metadata(agents.checkpoint_path(old), game=None)
    assert meta_old["name"] == old and meta_new["name"] == name and meta_old["agent"] == meta_new["agent"]
    assert meta_old["checksum"] != meta_new["checksum"]  # another network


@pytest.mark.slow
def test_searches_give_their_values_on_any_game():
    from types import SimpleNamespace

    from c4jax.play import answers

    state = jax.device_get(CHECKERS.init())
    batch = jax.tree.map(lambda x: np.asarray(x)[None], state)
    legal = np.asarray(batch.legal_action_mask)[0]
    for name in ("checkers/mcts8", "checkers/alphazero@4", "checkers/ppo@4"):
        agent = agents.load(name)
        info = agent.describe_scores("legal move", "legal moves")
        assert info.values, name
        shares, values = answers.agent_numbers(SimpleNamespace(agent=agent, info=info, view=SimpleNamespace(
            GAME=CHECKERS)), state)
        np.testing.assert_allclose(shares, np.asarray(agent.scores_states(batch))[0], rtol=1e-5)
        assert np.isfinite(values[legal]).all() and np.isnan(values[~legal]).all(), name
        assert (np.abs(values[legal]) <= 1).all(), name
