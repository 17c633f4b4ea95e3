"""AlphaZero's self-play with proven values (``--method puct --solve``, c4jax/learning/alphazero.py):
the project's own PUCT search with MCTS-Solver backs a proven win up as an exact root value."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from c4jax.games.connect_four import env
from c4jax.games.connect_four.game import GAME as C4
from c4jax.learning import alphazero as azl
from c4jax.nets import cnet
from c4jax.learning.config import validate

PARAMS = cnet.init_params(jax.random.key(0), width=8, heads="two")


def _selfplay(cfg, games=8):
    return jax.jit(azl.selfplay, static_argnums=(3, 4))(PARAMS, jax.random.key(5),
                                                   jax.vmap(lambda _: env.init())(jnp.arange(games)), cfg, C4)


def test_the_winning_move_of_a_game_was_a_proven_win_of_its_search():
    # value target = the root value alone; no sampled plies, so every move is the search's choice
    cfg = azl.AlphaZeroConfig(num_simulations=16, width=8, method="puct", solve=True, value_q_weight=1.0,
                              temperature_moves=0, dirichlet_fraction=0.0)
    samples, valid, final, returns = _selfplay(cfg)
    valid, value = np.asarray(valid), np.asarray(samples.value)
    won = [g for g in range(valid.shape[0]) if returns[g, 0] != 0]
    assert won, "no game was won"
    for g in won:
        last = int(valid[g].sum()) - 1  # the ply of the winning move: its search took a proven win
        assert value[g, last] == 1.0
        np.testing.assert_allclose(np.asarray(samples.policy[g, last]).sum(), 1.0, atol=1e-6)


def test_solve_needs_puct():
    with pytest.raises(ValueError, match="--solve .* needs --method puct"):
        validate(azl.AlphaZeroConfig(solve=True))
