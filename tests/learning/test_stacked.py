"""The loop's jitted chunk is compiled once per process for algorithms with equal settings."""

from __future__ import annotations

import dataclasses

from c4jax import games
from c4jax.learning import stacked
from c4jax.learning.placement import ONE_DEVICE
from c4jax.learning.alphazero import AlphaZero, AlphaZeroConfig
from c4jax.learning.dqn import DQN, DQNConfig
from c4jax.learning.ppo import PPO, PPOConfig


C4 = games.make(games.DEFAULT)


def _chunk(algo, k=1):
    return stacked.make_chunk(algo, k, ONE_DEVICE, None)[0]


def test_equal_settings_share_one_chunk_and_other_settings_do_not():
    for make, other in [(lambda: DQN(DQNConfig(), game=C4), lambda: DQN(DQNConfig(dueling=True), game=C4)),
                        (lambda: PPO(PPOConfig(), C4), lambda: PPO(PPOConfig(), C4, freeze_conv=False)),
                        (lambda: AlphaZero(AlphaZeroConfig(), game=C4), lambda: AlphaZero(AlphaZeroConfig(num_simulations=8), game=C4))]:
        first = _chunk(make())
        assert _chunk(make()) is first  # a resumed run, or the next run of a sweep, in the same process
        assert _chunk(make(), k=2) is not first  # K seeds vmapped are another program
        assert _chunk(other()) is not first
    checkers = games.make("checkers")
    cfg = PPOConfig(collect="streams", network="tower", minibatch_size=512)
    first = _chunk(PPO(cfg, checkers))
    assert _chunk(PPO(cfg, checkers)) is first
    assert _chunk(PPO(dataclasses.replace(cfg, learning_rate=3e-4), checkers)) is not first


def test_an_algorithm_that_plays_a_loaded_opponent_compiles_its_own_chunk():
    """The opponent's weights are constants of the program: two runs against agents of the same
    name (a checkpoint that may have changed in between) never share it."""
    algo = DQN(DQNConfig(opponent="2steplA"), game=C4)
    assert algo.compile_key is None
    assert _chunk(algo) is not _chunk(DQN(DQNConfig(opponent="2steplA"), game=C4))
