"""DQN by self-play on any two-player zero-sum game of the protocol (:class:`c4jax.games.base.Game`).

The thesis' DQN (:mod:`c4jax.learning.dqn`) plays Connect Four's CNET boards with design.md §2's
shaped reward; this one needs only the game's own rewards (+1 win, 0 draw, -1 loss), as the MCTS thesis
trains DQN on Checkers (its Q network has one output per action, illegal actions filtered).

``envs`` games run side by side, each starting again as soon as it ends; every iteration plays
``steps`` plies of all of them with an ε-greedy policy over the legal actions (ε falls linearly
from ``epsilon_start`` to ``epsilon_end`` over ``epsilon_decay_updates`` updates), stores the
transitions in a replay buffer, then makes ``updates_per_iteration`` Adam steps on minibatches
drawn from it. Q is from the point of view of the player to move, so the target of a move is
the negamax form of Double DQN: with ``sign = -1`` when the opponent moves next and ``+1`` when
the same player moves again (a Checkers multi-jump),

    y = r + γ (1 - done) sign Q_target(s', argmax_{a' legal} Q(s', a'))

on the legal actions of ``s'`` (:func:`c4jax.learning.losses.negamax_td_target`, the thesis' DQN
target with a per-move sign); the loss is the Huber loss of ``Q(s, a)`` to ``y``. The target
network follows the online one by Polyak averaging (``tau``).

The network is the residual tower of AlphaZero's agents (:mod:`c4jax.nets.tower`): Q is
``tanh`` of its policy head (a game's values are in [-1, 1]); its value head learns
``V(s) = max_a Q_target(s, a)``, so that the saved agent, which plays greedily through
:class:`c4jax.agents.network_search.AlphaZeroAgent` (``@0``), can also search (``@N``) with
a prior ``softmax(Q)`` and that value.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Annotated, Any, ClassVar

import jax
import jax.numpy as jnp
import optax
import tyro
from flax import struct
from jax import Array

from c4jax.learning import buffer as rb
from c4jax.learning import losses
from c4jax.learning import ranges
from c4jax.learning.optim import apply_gradients
from c4jax.learning.selfplay_envs import TowerSelfPlay, finished_games, play_ply
from c4jax.learning.train_state import TrainState


@dataclass(frozen=True)
class SelfPlayDQNConfig:
    """DQN by self-play on a game's own rewards (:mod:`c4jax.learning.selfplay_dqn`)."""

    envs: int = 64
    """Games played side by side; each starts again as soon as it ends."""
    steps: int = 4
    """Plies of every game per iteration (envs x steps transitions into the buffer)."""
    updates_per_iteration: int = 4
    """Adam steps per iteration."""
    batch_size: int = 128
    """Transitions per Adam step."""
    buffer_size: int = 100_000
    """Replay buffer capacity in transitions."""
    learning_starts: int = 5_000
    """Transitions in the buffer before the first update (iterations before that only play)."""
    gamma: float = 1.0
    """Discount per ply (1: the game's result, undiscounted)."""
    tau: float = 0.005
    """Polyak step of the target network after every update."""
    epsilon_start: float = 1.0
    """ε of the ε-greedy self-play at the first update."""
    epsilon_end: float = 0.05
    """ε after --epsilon-decay-updates updates."""
    epsilon_decay_updates: int = 20_000
    """Updates over which ε falls linearly."""
    huber_delta: float = 1.0
    """Huber loss threshold."""
    value_weight: float = 0.5
    """Weight of the value head's loss (squared error to max_a Q_target(s, a))."""
    learning_rate: float = 3e-4
    """Adam learning rate."""
    weight_decay: float = 0.0
    """L2 penalty added to the gradient."""
    max_grad_norm: float = 1.0
    """Gradients are clipped to this global norm."""
    eval_every: int = 0
    """Updates between evaluations (and checkpoints), a multiple of --updates-per-iteration; 0 = 500
    iterations' (the iterations before --learning-starts make none). Saved as the number of iterations
    (iterations_per_eval)."""
    iterations_per_eval: Annotated[int, tyro.conf.Suppress] = 500
    """Iterations between evaluations, which --eval-every sets."""
    tower_blocks: int = 2
    """Residual blocks of the network (:mod:`c4jax.nets.tower`)."""
    tower_channels: int = 32
    """Filters of every 3x3 convolution of the network."""

    RANGES: ClassVar[dict] = {
        "envs": ranges.ONE_OR_MORE, "steps": ranges.ONE_OR_MORE, "updates_per_iteration": ranges.ONE_OR_MORE,
        "batch_size": ranges.ONE_OR_MORE, "buffer_size": ranges.ONE_OR_MORE, "learning_starts": ranges.NON_NEGATIVE,
        "gamma": ranges.UNIT, "tau": ranges.Range(0, 1, low_open=True), "epsilon_start": ranges.UNIT,
        "epsilon_end": ranges.UNIT, "epsilon_decay_updates": ranges.ONE_OR_MORE, "huber_delta": ranges.POSITIVE,
        "value_weight": ranges.NON_NEGATIVE, "learning_rate": ranges.POSITIVE, "weight_decay": ranges.NON_NEGATIVE,
        "max_grad_norm": ranges.POSITIVE, "eval_every": ranges.at_least(0, "(0 = 500 iterations)"),
        "iterations_per_eval": ranges.ONE_OR_MORE, "tower_blocks": ranges.ONE_OR_MORE,
        "tower_channels": ranges.ONE_OR_MORE,
    }

    SMOKE: ClassVar[dict] = {
        "envs": 4, "steps": 2, "batch_size": 8, "buffer_size": 64, "learning_starts": 8, "updates_per_iteration": 1,
        "iterations_per_eval": 4, "tower_blocks": 1, "tower_channels": 4, "total_updates": 4,
    }

    def __post_init__(self):
        if not ranges.checking():
            return
        ranges.check(self)
        if self.envs * self.steps > self.buffer_size:
            raise ValueError(f"--buffer-size ({self.buffer_size}) must hold one iteration's transitions "
                             f"(--envs x --steps = {self.envs * self.steps})")
        if self.learning_starts > self.buffer_size:
            raise ValueError(f"--learning-starts ({self.learning_starts}) cannot exceed --buffer-size "
                             f"({self.buffer_size})")
        ranges.eval_every_to_units(self, "iterations_per_eval", self.updates_per_iteration,
                                   "iteration (--updates-per-iteration)")

    @property
    def tower(self) -> tuple[int, int]:
        return (self.tower_blocks, self.tower_channels)


@struct.dataclass
class Transition:
    obs: Array  # the observation of the player to move
    legal: Array  # bool[A]: its legal actions
    action: Array  # int32
    reward: Array  # float32: the mover's reward
    done: Array  # bool: the move ended the game
    sign: Array  # float32: +1 when the same player moves next, -1 when the opponent does
    next_obs: Array  # the observation after the move (meaningless when done)
    next_legal: Array  # bool[A]: the legal actions after the move


@struct.dataclass
class SelfPlayDQNState(TrainState):
    target: Any  # the target network's parameters
    buffer: rb.Buffer
    envs: Any  # game states [E], mid-game
    plies: Array  # int32[E]: plies played in each running game


class SelfPlayDQN(TowerSelfPlay):
    """DQN by self-play on ``game`` as an :class:`~c4jax.learning.algorithm.Algorithm`."""

    name = "dqn"
    output = "q"
    default_mode = "det"  # the evaluations and the saved agent play greedily on Q

    def __init__(self, cfg: SelfPlayDQNConfig, game):
        self.cfg = cfg
        super().__init__(game, cfg.tower, cfg.learning_rate, cfg.weight_decay, cfg.max_grad_norm)
        self.update_step, self.update_step_name = cfg.updates_per_iteration, "iteration (--updates-per-iteration)"
        self.eval_updates = cfg.iterations_per_eval * cfg.updates_per_iteration

    def chunk_of(self, units: int):
        return jax.jit(partial(self._chunk, units=units))

    def short_block(self, state, updates: int) -> int:
        """The iterations that make ``updates`` updates: those still filling the buffer first."""
        # an iteration adds envs x steps transitions, then learns once the buffer holds --learning-starts
        missing = self.cfg.learning_starts - int(state.buffer.size)
        only_fill = max(0, -(-missing // (self.cfg.envs * self.cfg.steps)) - 1)
        return only_fill + updates // self.update_step

    def init(self, key: Array, params) -> SelfPlayDQNState:
        env_key, key = jax.random.split(key)
        envs, plies = self.initial_games(env_key, self.cfg.envs)
        obs = self.game.observe(self.game.init(jax.random.key(0)))
        a = self.game.num_actions
        example = Transition(obs=jnp.zeros(obs.shape, obs.dtype), legal=jnp.zeros(a, jnp.bool_), action=jnp.int32(0), reward=jnp.float32(0),
                             done=jnp.bool_(False), sign=jnp.float32(0), next_obs=jnp.zeros(obs.shape, obs.dtype),
                             next_legal=jnp.zeros(a, jnp.bool_))
        return SelfPlayDQNState.create(params, self.tx, key, target=params, buffer=rb.init(example, self.cfg.buffer_size),
                                       envs=envs, plies=plies)

    def _q(self, params, obs: Array) -> tuple[Array, Array]:
        """``(Q[..., A], V[...])``: tanh of the policy and value heads."""
        logits, value = self.net.apply({"params": params}, obs)
        return jnp.tanh(logits), jnp.tanh(value)

    def epsilon(self, updates: Array) -> Array:
        cfg = self.cfg
        frac = jnp.minimum(updates.astype(jnp.float32) / cfg.epsilon_decay_updates, 1.0)
        return cfg.epsilon_start + frac * (cfg.epsilon_end - cfg.epsilon_start)

    def _play(self, state: SelfPlayDQNState, key: Array):
        game, eps = self.game, self.epsilon(state.updates)

        def ply(carry, k):
            envs, plies, finished, lengths = carry
            explore_key, random_key, reset_key = jax.random.split(k, 3)
            obs = jax.vmap(game.observe)(envs)
            legal = envs.legal_action_mask
            q, _ = self._q(state.params, obs)
            greedy = jnp.argmax(jnp.where(legal, q, -jnp.inf), axis=-1)
            uniform = jax.random.categorical(random_key, jnp.where(legal, 0.0, -jnp.inf))
            explore = jax.random.uniform(explore_key, greedy.shape) < eps
            action = jnp.where(explore, uniform, greedy).astype(jnp.int32)
            ply_, envs, next_plies = play_ply(game, envs, action, plies, reset_key)
            row = Transition(obs=obs, legal=legal, action=action, reward=ply_.reward, done=ply_.done, sign=ply_.sign,
                             next_obs=jax.vmap(game.observe)(ply_.after), next_legal=ply_.after.legal_action_mask)
            n, total = finished_games(ply_, plies)
            return (envs, next_plies, finished + n, lengths + total), row

        start = (state.envs, state.plies, jnp.int32(0), jnp.int32(0))
        (envs, plies, finished, lengths), rows = jax.lax.scan(ply, start, jax.random.split(key, self.cfg.steps))
        flat = jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), rows)
        return flat, envs, plies, finished, lengths

    def _loss(self, params, target, batch: Transition):
        cfg = self.cfg
        q, value = self._q(params, batch.obs)
        q_next_online, _ = self._q(params, batch.next_obs)
        q_next_target, _ = self._q(target, batch.next_obs)
        y = jax.vmap(losses.negamax_td_target, in_axes=(0, 0, 0, 0, 0, None, 0))(
            batch.reward, batch.sign, batch.done, q_next_target, batch.next_legal, cfg.gamma, q_next_online)
        q_taken = jnp.take_along_axis(q, batch.action[:, None], axis=-1)[:, 0]
        td_loss = optax.huber_loss(q_taken, y, delta=cfg.huber_delta).mean()
        q_target_now, _ = self._q(target, batch.obs)  # V(s) = max over the legal actions of s of Q_target
        v_target = jax.lax.stop_gradient(jnp.max(jnp.where(batch.legal, q_target_now, -1.0), axis=-1))
        value_loss = jnp.mean((value - v_target) ** 2)
        loss = td_loss + cfg.value_weight * value_loss
        return loss, {"train/loss": loss, "train/td_loss": td_loss, "train/value_loss": value_loss,
                      "train/q_taken": q_taken.mean()}

    def _update(self, state: SelfPlayDQNState, key: Array):
        batch = rb.sample(state.buffer, key, self.cfg.batch_size)
        grads, metrics = jax.grad(self._loss, has_aux=True)(state.params, state.target, batch)
        params, opt_state = apply_gradients(self.tx, state.params, state.opt_state, grads)
        target = optax.incremental_update(params, state.target, self.cfg.tau)
        return state.replace(params=params, opt_state=opt_state, target=target, updates=state.updates + 1), metrics

    def _iteration(self, state: SelfPlayDQNState, _):
        cfg = self.cfg
        key, play_key, update_key = jax.random.split(state.key, 3)
        rows, envs, plies, finished, lengths = self._play(state, play_key)
        state = state.replace(key=key, envs=envs, plies=plies, episodes=state.episodes + finished,
                              buffer=rb.add(state.buffer, rows, jnp.ones(rows.action.shape, jnp.bool_)))
        ready = state.buffer.size >= cfg.learning_starts

        def learn(s):
            return jax.lax.scan(self._update, s, jax.random.split(update_key, cfg.updates_per_iteration))

        def wait(s):
            zeros = {k: jnp.zeros(cfg.updates_per_iteration) for k in
                     ("train/loss", "train/td_loss", "train/value_loss", "train/q_taken")}
            return s, zeros

        state, m = jax.lax.cond(ready, learn, wait, state)
        metrics = {k: v.mean() for k, v in m.items()}
        metrics.update({"selfplay/finished": finished.astype(jnp.float32),
                        "selfplay/length_sum": lengths.astype(jnp.float32), "train/learning": ready.astype(jnp.float32)})
        return state, metrics

    def _chunk(self, state: SelfPlayDQNState, units: int | None = None):
        """``iterations_per_eval`` iterations (``units``: that many)."""
        length = self.cfg.iterations_per_eval if units is None else units
        state, m = jax.lax.scan(self._iteration, state, None, length=length)
        finished, length_sum = m.pop("selfplay/finished").sum(), m.pop("selfplay/length_sum").sum()
        learning = m.pop("train/learning")
        metrics = {k: (v * learning).sum() / jnp.maximum(learning.sum(), 1.0) for k, v in m.items()}
        metrics["selfplay/length"] = length_sum / jnp.maximum(finished, 1.0)
        metrics["selfplay/episodes"] = state.episodes.astype(jnp.float32)
        metrics["selfplay/epsilon"] = self.epsilon(state.updates)
        metrics["buffer/size"] = state.buffer.size.astype(jnp.float32)
        return state, metrics
