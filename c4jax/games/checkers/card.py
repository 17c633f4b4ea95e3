"""Checkers' card (:class:`c4jax.games.card.GameCard`); the algorithms' settings are sized for a
2-core CPU (docs/results/checkers)."""

from __future__ import annotations

from types import MappingProxyType

from c4jax.games.card import GameCard

ALPHAZERO = MappingProxyType({
    "run": MappingProxyType(dict(total_updates=16_000)),
    # the outcome alone as the value target (value_q_weight 0); the saved agent searches with proven
    # values (play_solve) at 500 simulations
    "az": MappingProxyType(dict(games=32, num_simulations=16, max_considered=16, random_start_frac=0.0,
                                temperature_moves=16, buffer_size=200_000, batch_size=128, updates_per_iteration=32,
                                iterations_per_eval=50, eval_simulations=32, play_simulations=500, tower_blocks=2,
                                tower_channels=32, value_q_weight=0.0)),
})

# Double DQN on the game's own rewards (--collect streams, the trainer's defaults for such a game) with
# these sizes: 64 games side by side, 4 plies each per iteration, 4 updates per iteration
DQN = MappingProxyType({
    "run": MappingProxyType(dict(total_updates=100_000)),
    "dqn": MappingProxyType(dict(envs=64, steps=4, updates_per_iteration=4, batch_size=128, buffer_size=100_000,
                                 learning_starts=5_000, learning_rate=3e-4, eps_decay=20_000.0,
                                 iterations_per_eval=500, tower_blocks=2, tower_channels=32)),
})

# the supervised stage plays 256 games per batch (a game records up to max_steps plies), each after 8 random
# moves, so that the deterministic teacher's games do not repeat (docs/results/checkers)
SUPERVISED = MappingProxyType({"supervised": MappingProxyType(dict(generation_batch=256, opening_plies=8))})

CARD = GameCard(
    title="Checkers",
    num_actions=256,  # from-square x direction x step (c4jax.games.checkers.env)
    # the supervised stage imitates the shipped AlphaZero network's own policy, without search
    # (pure MCTS's random playouts of Checkers games cost too much for a dataset)
    teacher="alphazero@0",
    view="c4jax.games.checkers.view",  # the play UI's page and watch's drawings
    defaults=MappingProxyType({"alphazero": ALPHAZERO, "dqn": DQN, "supervised": SUPERVISED}),
)
