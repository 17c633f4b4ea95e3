"""Checkers' kit (:class:`c4jax.games.kit.GameKit`): the rules of design.md "Checkers" and the
algorithms' settings that differ on Checkers (sized for a 2-core CPU, docs/results/checkers).

Checkers has no symmetry that keeps its observations and actions (the board is seen from the
mover's side), no random start positions and no yardstick; evaluations play Random and pure MCTS.
"""

from __future__ import annotations

from types import MappingProxyType

from c4jax.games.checkers.game import GAME
from c4jax.games.kit import GameKit

ALPHAZERO = MappingProxyType({
    "run": MappingProxyType(dict(total_updates=16_000)),
    # the outcome alone as the value target (value_q_weight 0); the saved agent searches with proven
    # values (play_solve) at 500 simulations
    "az": MappingProxyType(dict(games=32, num_simulations=16, max_considered=16, random_start_frac=0.0,
                                temperature_moves=16, buffer_size=200_000, batch_size=128, updates_per_iteration=32,
                                iterations_per_eval=50, eval_simulations=32, play_simulations=500, tower_blocks=2,
                                tower_channels=32, value_q_weight=0.0)),
})

KIT = GameKit(game=GAME, title="Checkers", view="c4jax.games.checkers.view", defaults=MappingProxyType({"alphazero": ALPHAZERO}))
