"""Search at play time for any network agent (c4jax.agents.guided): ``name@N`` names, the prior of
policy and Q networks, root visits, a peaked prior, ``@0``, bad names and a protocol match.

Compiling a search takes seconds on a CPU, so the tests share programs: every search of a
stand-in network runs one jitted program (the prior is an array leaf), and the shipped PPO's
search is compiled once, inside the match.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import struct

from c4jax import agents, evaluation
from c4jax.agents import guided, search
from c4jax.agents.network import NetworkAgent
from c4jax.agents.network_search import AlphaZeroAgent
from c4jax.agents.policy import masked_logits
from c4jax.games.connect_four import env
from c4jax.games.connect_four.game import GAME
from c4jax import games as c4games

C4 = c4games.make(c4games.DEFAULT)

N = 16


@struct.dataclass
class FixedPrior:
    """A stand-in network of any game: the same prior logits for every state (what a network of
    another game needs to guide a search: a ``game`` and ``prior_logits_states``)."""

    logits: Any  # float32[A]
    label: str = struct.field(pytree_node=False, default="fixed")
    game: Any = struct.field(pytree_node=False, default=GAME)

    def prior_logits_states(self, states, q_temperature):
        del q_temperature
        logits = jnp.broadcast_to(self.logits, states.legal_action_mask.shape)
        return masked_logits(logits, states.legal_action_mask)


def _states():
    """The empty board, a middle game and one column full (column 3)."""
    boards, s = [], env.init()
    boards.append(s)
    for col in (3, 3, 2, 4, 3, 3):
        s = env.step(s, col)
    boards.append(s)
    for col in (3, 3):
        s = env.step(s, col)
    boards.append(s)
    return jax.tree.map(lambda *x: jnp.stack(x), *boards)


_search = jax.jit(lambda agent, states, keys: agent.search(states, keys))


def test_names_load_network_agents_with_search():
    ppo, dqn, sup = (agents.load(n) for n in ("ppo@16", "dqn@16", "supervised@8:sto"))
    expected = ((ppo, 16, "ppo", "policy"), (dqn, 16, "dqn", "q"), (sup, 8, "supervised", "policy"))
    for agent, n, label, output in expected:
        assert isinstance(agent, guided.GuidedSearchAgent) and isinstance(agent.network, NetworkAgent)
        assert (agent.num_simulations, agent.network.label, agent.network.output) == (n, label, output)
    assert (ppo.name, dqn.name, sup.name) == ("ppo@16:det", "dqn@16:det", "supervised@8:sto")
    assert not ppo.stochastic and sup.stochastic  # a search plays its most visited move by default
    assert agents.load("DUELING_DQN@4:sto").name == "dueling_dqn@4:sto"  # a Q network samples the visits
    assert agents.load(f"{agents.checkpoints_dir() / 'reinforce'}@4").name.endswith("reinforce@4:det")
    az = agents.load("alphazero@8")  # a search checkpoint keeps its own search (the shipped one: proven values)
    assert isinstance(az, AlphaZeroAgent) and az.num_simulations == 8
    assert az.solve and not ppo.solve and not agents.load("alphazero@8nosolve").solve
    # '@<N>solve': proven values in the search, the network's own (AlphaZero) or a guided one
    az_solve, ppo_solve = agents.load("alphazero@8solve"), agents.load("ppo@16SOLVE:sto")
    assert isinstance(az_solve, AlphaZeroAgent) and (az_solve.num_simulations, az_solve.solve) == (8, True)
    assert az_solve.name == "alphazero@8solve:det"
    assert isinstance(ppo_solve, guided.GuidedSearchAgent) and ppo_solve.solve
    assert ppo_solve.name == "ppo@16solve:sto"
    checkers = agents.load("checkers/alphazero@4solve")
    assert checkers.solve and checkers.game.id == "checkers" and checkers.name == "checkers/alphazero@4solve:det"


def test_at_zero_is_the_raw_network():
    raw, zero = agents.load("ppo:det"), agents.load("ppo@0:det")
    assert isinstance(zero, NetworkAgent) and zero.name == raw.name == "ppo:det"
    boards = np.stack([np.asarray(env.observe(s)) for s in [env.init(), env.step(env.step(env.init(), 3), 2)]])
    np.testing.assert_array_equal(np.asarray(zero.act(boards, jax.random.key(0))),
                                  np.asarray(raw.act(boards, jax.random.key(0))))
    assert agents.load("dqn@0").name == "dqn:det"


@pytest.mark.parametrize("name,message", [
    ("ppo@x", "number of search simulations"),
    ("ppo@-1", "number of search simulations"),
    ("ppo@", "number of search simulations"),
    ("ppo@solve", "number of search simulations"),
    ("ppo@8solves", "number of search simulations"),
    ("alphazero@0solve", "need a search"),
    ("alphazero@0nosolve", "need a search"),
    ("ppo@8nosolves", "number of search simulations"),
    ("ppo@nosolve", "number of search simulations"),
    ("checkers/alphazero@0solve", "need a search"),
    ("random@16solve", "trained agents"),
    (f"ppo@{search.MAX_SIMULATIONS + 1}", f"at most {search.MAX_SIMULATIONS}"),
    (f"alphazero@{search.MAX_SIMULATIONS + 1}", f"at most {search.MAX_SIMULATIONS}"),
    ("random@16", "trained agents"),
    ("1steplA@16", "trained agents"),
    ("mcts100@16", "simulations in its name"),
    ("nosuchagent@16", "unknown agent"),
])
def test_bad_names_are_clear_errors(name, message):
    with pytest.raises(ValueError, match=message):
        agents.load(name)


def test_the_prior_of_policy_and_q_networks():
    boards = np.stack([np.asarray(env.observe(s)) for s in [env.init(), jax.tree.map(lambda x: x[2], _states())]])
    legal = boards[:, 0, :] == 0
    ppo = agents.load("ppo")
    probs = jax.nn.softmax(ppo.prior_logits(boards, guided.Q_TEMPERATURE), axis=-1)
    np.testing.assert_allclose(np.where(legal, probs, 0.0), np.where(legal, ppo.scores(boards), 0.0), atol=1e-5)
    dqn = agents.load("dqn")
    logits = np.asarray(dqn.prior_logits(boards, 0.5))
    q = np.asarray(dqn.scores(boards))
    np.testing.assert_allclose(logits[legal], q[legal] / 0.5, rtol=1e-5)
    assert (logits[~legal] == np.finfo(np.float32).min).all()  # column 3 of the full board


@pytest.mark.slow
def test_root_visits_and_a_peaked_prior():
    """N simulations give the root N visits, on legal actions only; a prior peaked on column 0
    pulls most visits there (the same program as the uniform prior: only the leaf changes)."""
    states, keys = _states(), jax.random.split(jax.random.key(0), 3)
    uniform = guided.guided(FixedPrior(jnp.zeros(7)), N)
    peaked = uniform.replace(network=FixedPrior(jnp.zeros(7).at[0].set(8.0)))
    for agent in (uniform, peaked):
        out = _search(agent, states, keys)
        assert out.visit_counts.sum(-1).tolist() == [N] * 3
        assert out.tree.node_visits[:, 0].tolist() == [N + 1] * 3
        assert int(out.visit_counts[2, 3]) == 0  # column 3 is full on the third board
    assert np.argmax(np.asarray(out.visit_counts), -1).tolist() == [0, 0, 0]
    assert int(out.visit_counts[0, 0]) > N // 2
    first = np.asarray(search.best_column(out, states.legal_action_mask))
    again = np.asarray(search.best_column(_search(peaked, states, keys), states.legal_action_mask))
    np.testing.assert_array_equal(first, again)  # ':det' plays the most visited column: the same key, the same move


@pytest.mark.slow
def test_solve_proves_and_plays_a_win_under_a_prior_against_it():
    """x wins at column 3; the prior prefers column 0. With proven values the search plays the win
    (all visit shares on it) once the winning edge is expanded; N = 16 with a uniform prior."""
    board = np.zeros((6, 7), np.int8)
    board[5, :3], board[4, :2], board[5, 6] = 1, -1, -1
    states = jax.vmap(env.from_board)(jnp.asarray(board)[None])
    agent = guided.guided(FixedPrior(jnp.zeros(7).at[0].set(1.0)), N, solve=True)
    out = _search(agent, states, jax.random.split(jax.random.key(0), 1))
    assert float(out.proven[0, 3]) == 1.0 and float(out.tree.proven[0, 0]) == 1.0
    assert search.best_column(out, states.legal_action_mask).tolist() == [3]
    assert np.isclose(float(out.visit_probs[0, 3]), 1.0)
    assert float(jnp.abs(_search(agent.replace(solve=False), states, jax.random.split(jax.random.key(0), 1)).proven).sum()) == 0


def test_guided_agent_checks_its_network_and_simulations():
    with pytest.raises(TypeError, match="cannot guide a search"):
        guided.GuidedSearchAgent(network=agents.load("random"), num_simulations=8, game=C4)
    with pytest.raises(ValueError, match="simulations"):
        guided.guided(FixedPrior(jnp.zeros(7)), 0)
    with pytest.raises(ValueError, match="q_temperature"):
        guided.guided(FixedPrior(jnp.zeros(7)), 8, q_temperature=0.0)


@pytest.mark.slow
def test_a_protocol_match_plays_legal_reproducible_games():
    agent, key = agents.load("ppo@16"), jax.random.key(0)
    result = evaluation.match(agent, agents.load("random"), key)
    assert result.agent_a == "ppo@16:det" and result.total.wins + result.draws + result.losses == 100
    assert all(g.length == len(g.moves) for g in result.games)  # nobody played a full column
    assert result.win_rate >= 0.9, result.to_dict(games=False)
    again = evaluation.match(agent, agents.load("random"), key)
    assert [g.moves for g in again.games] == [g.moves for g in result.games]
