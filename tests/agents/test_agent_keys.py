"""Every registered agent takes typed keys (jax.random.key) and legacy ones (jax.random.PRNGKey)
alike, called on concrete arrays and inside a user's jit, and plays the same moves with both."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from c4jax import agents
from c4jax.games.connect_four import perfect
from c4jax.games.connect_four import env

# known_names() lists one example of each pattern ("mcts1000"): a smaller search is the same agent.
# A trained network with '@N' searches guided by it (c4jax.agents.guided); one stands for all of them
# (a Q network's prior, sampled visits: the key matters); tests/agents/test_guided.py plays ppo@16.
SMALLER = {"mcts1000": "mcts16", "openspiel-mcts1000": "openspiel-mcts16"}
NAMES = sorted({SMALLER.get(n, n) for n in agents.known_names()} | {"dqn@8:sto"})
# The searches' own test (tests/agents/test_search.py, typed and legacy keys) covers these two in the default
# run; each compiles searches of its own, so here they run with `pytest -m slow`.
SEARCHES = {"mcts16", "alphazero"}
# slow: the same agent classes with typed and legacy keys run in the default run: 4steplA is
# the kit's lookahead player at depth 4, [3stepla] the same class at depth 3; dqn@8:sto is a SearchAgent with
# sampled visits and rollouts, as test_search.py::test_typed_and_legacy_keys_give_the_same_searches's
# mcts32 is (test_guided.py plays the guided search itself)
SLOW = SEARCHES | {"4stepla", "dqn@8:sto"}


def _boards() -> np.ndarray:
    s = env.init()
    out = [np.asarray(env.observe(s))]
    for col in (3, 3, 2, 4):
        s = env.step(s, col)
        out.append(np.asarray(env.observe(s)))
    return np.stack(out)


def test_the_names_cover_every_kind_of_agent():
    kinds = {"random", "1steplA", "4steplA", "mcts16", "supervised", "ppo", "dqn", "alphazero", "dqn@8:sto"}
    assert kinds <= set(NAMES)
    assert ("perfect" in NAMES) == perfect.solver_available()


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in NAMES])
def test_every_agent_acts_with_typed_and_legacy_keys(name):
    """The agent as ``agents.load(name)`` gives it (its default mode): the same moves from a typed key
    and from the legacy key with the same data, on concrete boards and inside a jitted function."""
    boards = _boards()
    agent = agents.load(name)
    legal = boards[:, 0, :] == 0
    for seed in (0, 1):
        typed = np.asarray(agent.act(boards, jax.random.key(seed)))
        legacy = np.asarray(agent.act(boards, jax.random.PRNGKey(seed)))
        np.testing.assert_array_equal(typed, legacy)
        assert typed.shape == (len(boards),) and legal[np.arange(len(boards)), typed].all()
    jitted = jax.jit(lambda a, b, k: a.act(b, k))
    in_jit = np.asarray(jitted(agent, jnp.asarray(boards), jax.random.PRNGKey(1)))
    np.testing.assert_array_equal(in_jit, np.asarray(jitted(agent, jnp.asarray(boards), jax.random.key(1))))
