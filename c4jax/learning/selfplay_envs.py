"""What PPO and DQN by self-play on any game share (:mod:`c4jax.learning.selfplay_ppo`,
:mod:`c4jax.learning.selfplay_dqn`): games that run side by side and restart when they end, the
mover's reward and the sign of the next state's value, and the network (a residual tower whose
agent plays through :class:`c4jax.agents.network_search.AlphaZeroAgent`)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import optax
from flax import struct
from jax import Array

from c4jax.agents.network_search import AlphaZeroAgent
from c4jax.games import base as games
from c4jax.learning.algorithm import Algorithm
from c4jax.learning.optim import adam_l2
from c4jax.learning.train_state import TrainState
from c4jax.nets import tower as towers


@struct.dataclass
class Ply:
    """One ply of every running game: who moved, what it got, and how the next state counts for it."""

    after: Any  # the states right after the move (before a finished game restarts)
    reward: Array  # float32[E]: the mover's reward
    done: Array  # bool[E]: the move ended the game
    sign: Array  # float32[E]: +1 when the same player moves next (a multi-jump), -1 when the opponent does


def play_ply(game, envs, action: Array, plies: Array, key: Array) -> tuple[Ply, Any, Array]:
    """``action`` in each of the games ``envs`` [E]; returns the :class:`Ply`, the games to go on
    with (a finished game restarted from ``game.init``) and their plies so far."""
    player = envs.current_player
    after = jax.vmap(game.step)(envs, action)
    reward = jnp.take_along_axis(after.rewards, player[:, None].astype(jnp.int32), axis=-1)[:, 0]
    done = games.done(after)
    fresh = jax.vmap(game.init)(jax.random.split(key, done.shape[0]))
    envs = jax.tree.map(lambda f, a: jnp.where(done.reshape((-1,) + (1,) * (a.ndim - 1)), f, a), fresh, after)
    ply = Ply(after=after, reward=reward.astype(jnp.float32), done=done,
              sign=jnp.where(after.current_player == player, 1.0, -1.0))
    return ply, envs, jnp.where(done, 0, plies + 1)


def finished_games(ply: Ply, plies_before: Array) -> tuple[Array, Array]:
    """``(games finished, their total length in plies)`` at this ply, for the metrics."""
    return ply.done.sum(), jnp.where(ply.done, plies_before + 1, 0).sum()


class TowerSelfPlay(Algorithm):
    """The loop-facing part of a self-play trainer on ``game`` with a residual ``tower``: its
    network, an Adam optimiser with gradient clipping, the agent the evaluations play (the raw
    network through :class:`AlphaZeroAgent`), and how checkpoints describe it."""

    heads = "two"

    def __init__(self, game, tower: tuple[int, int], learning_rate: float, weight_decay: float, max_grad_norm: float):
        games.check_game(game)
        self.game, self.tower = game, tuple(tower)
        self.net = towers.two_headed(128, self.tower, game)
        self.tx = optax.chain(optax.clip_by_global_norm(max_grad_norm), adam_l2(learning_rate, weight_decay))
        self.network_meta = {"tower": list(self.tower)}
        # the raw network; name@N searches with it, with proven values (the project's PUCT search, whose
        # cost grows about linearly in N where mctx's grows like N squared: docs/results/checkers)
        self.agent_meta = {"search": {"simulations": 0, "solve": True}}
        self.chunk = jax.jit(self._chunk)
        self.compile_key = (type(self), self.cfg, game)  # the subclass sets cfg, all its settings, first

    def fresh_params(self, key: Array):
        return towers.init_params(key, tower=self.tower, game=self.game)

    def agent_of(self, params, label: str, sampled: bool = False, symmetric: bool = False, *,
                 width: int | None = None) -> AlphaZeroAgent:
        """The raw network over the legal actions: sampled from its policy, or its best action (the
        tower's own width; the run's ``width`` is unused)."""
        del symmetric, width
        return AlphaZeroAgent(params=params, label=label, tower=self.tower, num_simulations=0,
                              deterministic=not sampled, game=self.game)

    def initial_games(self, key: Array, envs: int) -> tuple[Any, Array]:
        """``envs`` fresh games and their ply counters."""
        return jax.vmap(self.game.init)(jax.random.split(key, envs)), jnp.zeros(envs, jnp.int32)

    def _chunk(self, state: TrainState):  # pragma: no cover - abstract
        raise NotImplementedError
