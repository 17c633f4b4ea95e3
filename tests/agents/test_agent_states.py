"""Agents over game states: every agent answers ``scores_states(states)`` ``[B, num_actions]`` for
states of its own game (illegal actions exactly ``-inf``), and for Connect Four the board API
(``scores(boards)``) is the same answer on the states' observations."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from c4jax import agents, games


def _mid_game_states(game, batch: int, plies: int, seed: int = 0):
    """[batch] states of ``game`` after ``plies`` random legal moves (none finished)."""
    step = jax.jit(jax.vmap(game.step))
    states = jax.vmap(game.init)(jax.random.split(jax.random.key(seed), batch))
    for k in jax.random.split(jax.random.key(seed + 1), plies):
        logits = jnp.where(states.legal_action_mask, 0.0, -jnp.inf)
        states = step(states, jax.random.categorical(k, logits).astype(jnp.int32))
    assert not bool((states.terminated | states.truncated).any())
    return states


@pytest.mark.parametrize("name,game", [("random", "connect_four"), ("1steplA", "connect_four"),
                                       ("dueling_dqn", "connect_four"), ("ppo:sto", "connect_four"),
                                       ("checkers/random", "checkers"), ("checkers/dqn", "checkers")])
def test_scores_states_are_the_game_s_actions_with_illegal_ones_minus_inf(name, game):
    g = games.make(game)
    states = _mid_game_states(g, batch=4, plies=5)
    agent = agents.load(name)
    scores = np.asarray(agent.scores_states(states))
    assert scores.shape == (4, g.num_actions) and scores.dtype == np.float32
    legal = np.asarray(states.legal_action_mask)
    np.testing.assert_array_equal(np.isneginf(scores), ~legal)
    assert np.isfinite(scores[legal]).all()
    inside = jax.jit(lambda a, s: a.scores_states(s))(agent, states)  # inlined inside a user's jit
    np.testing.assert_allclose(np.asarray(inside), scores, rtol=1e-6)
    if game == "connect_four":  # the board API: the same scores of the states' observations
        boards = jax.vmap(g.observe)(states)
        np.testing.assert_allclose(np.asarray(agent.scores(boards)), scores, rtol=1e-6)


def test_scores_states_of_another_game_or_of_boards_is_a_clear_error():
    checkers = _mid_game_states(games.make("checkers"), batch=2, plies=1)
    with pytest.raises(ValueError, match=r"batch \[B\] of connect_four states: legal_action_mask of shape \(B, 7\)"):
        agents.load("random").scores_states(checkers)
    with pytest.raises(ValueError, match="expected a batch of checkers states"):
        agents.load("checkers/random").scores_states(np.zeros((2, 6, 7), np.int8))
