"""Vanilla, Dueling and Double DQN for two-player self-play on any game (design.md §7).

One network plays both sides ε-greedily into a replay buffer and learns Q from the point of view of
the player to move with the negamax target ``y = r + γ·sign·max_{legal a'} Q_target(s', a')``
(:func:`c4jax.learning.losses.negamax_td_target`). The config's fields choose the
:class:`Strategies`; experience comes from whole games (:mod:`c4jax.learning.dqn_games`) or per-ply
streams (:mod:`c4jax.learning.dqn_streams`); the network is the CNET where the kit allows, else a
residual tower (:mod:`c4jax.nets.tower`) whose value head learns ``max_a Q_target``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

import jax
import jax.numpy as jnp
import optax
from jax import Array

from c4jax import games
from c4jax.learning import buffer as rb
from c4jax.learning import config, losses
from c4jax.agents.network_search import AlphaZeroAgent
from c4jax.nets import tower as towers
from c4jax.nets.cnet import CNet
from c4jax.agents.policy import all_columns
from c4jax.games.base import check_game
from c4jax.learning.algorithm import Algorithm
from c4jax.learning.dqn_games import GameCollection, mirror_avg_q, q_values, whole_games_fit
from c4jax.learning.dqn_streams import StreamCollection
from c4jax.learning.settings.dqn import STREAMS as STREAMS
from c4jax.learning.settings.dqn import DQNConfig as DQNConfig
from c4jax.learning.optim import adam_l2, apply_gradients, make_optimizer
from c4jax.learning.train_state import where_seeds
from c4jax.learning import rollouts
from c4jax.learning import backprop as backprop_lib


def epsilon(cfg: DQNConfig, episodes: Array) -> Array:
    """float32: ε after ``episodes`` (games or updates): exponential decay, or linear with ``eps_schedule="linear"``."""
    if cfg.eps_schedule == "linear":
        frac = jnp.minimum(episodes / cfg.eps_decay, 1.0)
        return cfg.eps_start + frac * (cfg.eps_end - cfg.eps_start)
    return cfg.eps_end + (cfg.eps_start - cfg.eps_end) * jnp.exp(-episodes / cfg.eps_decay)


# --- strategies: what the published code's switches choose, as functions -------------------------


def tanh_q(apply, params, obs: Array) -> Array:
    """float32[..., A]: Q(s) of a residual tower ``apply``, ``tanh`` of its policy head."""
    return jnp.tanh(apply({"params": params}, obs)[0])


def target_network(params, target_params):
    """The weights that value s' in the TD target: the target network's."""
    del params
    return target_params


def online_network(params, target_params):
    """The weights that value s' in the TD target: the online network's, not differentiated."""
    del target_params
    return jax.lax.stop_gradient(params)


def _negamax_targets(batch, q_next: Array, legal_next: Array, gamma, q_select: Array | None) -> Array:
    sign_axis = None if isinstance(batch.sign, float) else 0
    select_axis = None if q_select is None else 0
    return jax.vmap(losses.negamax_td_target, in_axes=(0, sign_axis, 0, 0, 0, None, select_axis))(
        batch.reward, batch.sign, batch.done, q_next, legal_next, gamma, q_select)


def _next_legal(batch, legal) -> Array:
    return batch.next_legal if legal is None else legal(batch.next_obs)


def max_td_target(apply, params, target_params, batch, gamma, *, net=target_network, q=q_values,
                  legal=None) -> Array:
    """float32[N]: ``y = r + gamma sign max_{a'} Q(s', a')`` (``y = r`` at the end), Q by ``q`` of the weights
    ``net`` chooses, the max over ``legal(next_obs)`` (``None``: the stored ``next_legal``)."""
    q_next = q(apply, net(params, target_params), batch.next_obs)
    return _negamax_targets(batch, q_next, _next_legal(batch, legal), gamma, None)


def double_td_target(apply, params, target_params, batch, gamma, *, net=target_network, q=q_values,
                     legal=None) -> Array:
    """float32[N]: Double DQN's ``y = r + gamma sign Q_net(s', argmax_{a'} Q_online(s', a'))``; as :func:`max_td_target`."""
    q_next_target = q(apply, net(params, target_params), batch.next_obs)
    legal_next = _next_legal(batch, legal)
    q_next_online = q(apply, params, batch.next_obs)
    return _negamax_targets(batch, q_next_target, legal_next, gamma, q_next_online)


def squared_error(q: Array, y: Array) -> Array:
    """float32[...]: ``(q - y) ** 2`` elementwise."""
    return jnp.square(q - y)


def episode_clock(state) -> Array:
    """What ε decays with: the self-play games played."""
    return state.episodes


def update_clock(state) -> Array:
    """What ε decays with: the updates done."""
    return state.updates


def keep_target(state, reset):
    """The old-network rule leaves the target network alone."""
    del reset
    return state


def reset_target(state, reset):
    """The target network becomes the current weights where ``reset`` (bool[K], one per seed)."""
    return state.replace(target_params=where_seeds(reset, state.params, state.target_params))


@dataclass(frozen=True)
class Strategies:
    """How DQN plays, learns and follows the old-network rule, chosen once from a :class:`DQNConfig`
    (:meth:`of`); the defaults are the thesis (alternatives: design.md §7a)."""

    behaviour_q: Callable = q_values
    """``(apply, params, boards) -> Q`` that ε-greedy self-play acts on."""
    epsilon_clock: Callable = episode_clock
    """``state -> count`` that ε decays with."""
    td_target: Callable = max_td_target
    """``(apply, params, target_params, batch, gamma) -> y``."""
    error: Callable = squared_error
    """``(q, y) -> loss`` per transition."""
    play: Callable = rollouts.mixed_rollout
    """The games (a ``rollouts`` function)."""
    backprop: Callable = backprop_lib.backprop_per_player
    """``(traj, n) -> rewards [B, T]``: a value of ``backprop_lib.BACKPROP``."""
    sync_target: Callable = keep_target
    """``(state, reset) -> state`` after the old-network rule."""

    @classmethod
    def of(cls, cfg: DQNConfig, game, tower: bool = False) -> Strategies:
        """The strategies of ``cfg`` on ``game``; ``tower``: the network is a residual tower, else a CNET."""
        kit = games.kit_of(game)
        mirror_avg = partial(mirror_avg_q, symmetry=kit.symmetries[0]) if kit.symmetries else None
        if tower:
            q = tanh_q
        else:
            q = mirror_avg if cfg.target_mirror_avg else q_values
        if cfg.collect == "streams":
            legal = None
        else:
            legal = all_columns if cfg.target_unmasked else kit.observation_legal
        td_target = partial(double_td_target if cfg.double else max_td_target,
                            net=online_network if cfg.target_online else target_network, q=q, legal=legal)
        return cls(
            behaviour_q=mirror_avg if cfg.selfplay_mirror_avg else q_values,
            epsilon_clock=update_clock if cfg.eps_per_update else episode_clock,
            td_target=td_target,
            error=partial(optax.huber_loss, delta=cfg.huber_delta) if cfg.loss == "huber" else squared_error,
            play=rollouts.mixed_rollout_no_draws if cfg.replace_draws else rollouts.mixed_rollout,
            backprop=backprop_lib.BACKPROP[cfg.reward_backprop],
            sync_target=reset_target if cfg.reset_target_on_old else keep_target,
        )


class DQN(Algorithm):
    """DQN on ``game``; ``name`` is 'dqn' or 'dueling_dqn'. ``ValueError`` when ``cfg`` does not fit the game."""

    output = "q"
    default_mode = "det"

    def __init__(self, cfg: DQNConfig, game, freeze_conv: bool = True):
        self.cfg = cfg = config.settle(cfg)
        self.game = check_game(game)
        kit = games.kit_of(self.game)
        if cfg.collect == "games" and not whole_games_fit(self.game):
            raise ValueError(f"--collect games plays the thesis' whole games (CNET boards, random starts, a mirror), "
                             f"which {self.game.id}'s kit has not: use --collect streams")
        self.name = "dueling_dqn" if cfg.dueling else "dqn"
        self.tower = () if kit.cnet else (cfg.tower_blocks, cfg.tower_channels)
        if self.tower:
            self.heads = "two"
            self.net = towers.Tower(blocks=cfg.tower_blocks, channels=cfg.tower_channels,
                                    num_actions=self.game.num_actions, encoding=towers.encoding_for(self.game),
                                    dueling=cfg.dueling)
            base = adam_l2(cfg.learning_rate, cfg.weight_decay)
            self.network_meta = {"tower": list(self.tower)}
            # the raw network; name@N searches with it, with proven values (the project's PUCT search)
            self.agent_meta = {"search": {"simulations": 0, "solve": True}}
        else:
            self.heads = "dueling" if cfg.dueling else "one"
            self.net = CNet(width=cfg.width, heads=self.heads)
            base = make_optimizer(cfg.learning_rate, cfg.weight_decay, freeze_conv)
        self.tx = optax.chain(optax.clip_by_global_norm(cfg.max_grad_norm), base) if cfg.max_grad_norm > 0 else base
        self.strategies = Strategies.of(cfg, self.game, tower=bool(self.tower))
        self.collection = StreamCollection(cfg, self.game) if cfg.collect == "streams" else GameCollection(cfg, self.game)
        c = self.collection
        self.batch_fields, self.batch_sizes = c.batch_fields, c.batch_sizes
        self.update_step, self.eval_updates = c.update_step, c.eval_updates
        self.chunk = jax.jit(self._chunk)
        self.compile_key = None if cfg.opponent_agent is not None else (type(self), cfg, freeze_conv, self.game)

    def chunk_of(self, units: int):
        return jax.jit(partial(self._chunk, units=units))

    def block_end(self, updates: int) -> int:
        return self.collection.block_end(updates)

    def short_block(self, state, updates: int) -> int:
        return self.collection.short_block(state, updates)

    def init(self, key: Array, params):
        return self.collection.init(self.tx, key, params)

    def collect(self, state):
        return self.collection.collect(self, state)

    def fresh_params(self, key: Array):
        """A residual tower's initial parameters (``None`` for a CNET)."""
        if not self.tower:
            return None
        return self.net.init(key, jnp.zeros((1,) + tuple(self.game.observation_shape), jnp.int8))["params"]

    def saved_params(self, params):
        """A dueling tower folded into a plain tower (:func:`c4jax.nets.tower.fold_dueling`)."""
        return towers.fold_dueling(params) if self.tower else params

    def agent_of(self, params, label: str, sampled: bool = False, symmetric: bool = False, *,
                 width: int | None = None):
        """A CNET's :class:`~c4jax.agents.network.NetworkAgent`; a tower's :class:`AlphaZeroAgent` without search."""
        if not self.tower:
            return super().agent_of(params, label, sampled, symmetric, width=width)
        return AlphaZeroAgent(params=self.saved_params(params), label=label, tower=self.tower, num_simulations=0,
                              deterministic=not sampled, game=self.game)

    def sync_target(self, state, reset):
        """``Strategies.sync_target`` after the host loop's old-network rule."""
        return self.strategies.sync_target(state, reset)

    def behaviour_epsilon(self, state) -> Array:
        """The self-play ε of ``state``."""
        return epsilon(self.cfg, self.strategies.epsilon_clock(state).astype(jnp.float32))

    # --- jitted pieces ------------------------------------------------------------------

    def q_and_value(self, params, obs: Array) -> tuple[Array, Array | None]:
        """``(Q[..., A], V[...])`` of the network: a tower's ``tanh`` of its heads; a CNET's Q and ``None``."""
        out = self.net.apply({"params": params}, obs)
        if not self.tower:
            return out, None
        logits, value = out
        return jnp.tanh(logits), jnp.tanh(value)

    def loss(self, params, target_params, batch):
        """``(loss, aux)``: the TD loss of ``batch``; a tower adds ``value_weight`` × its value head's
        squared error to ``max_{legal a} Q_target(s, a)``."""
        q, value = self.q_and_value(params, batch.obs)
        q_sa = jnp.take_along_axis(q, batch.action[:, None], axis=-1)[:, 0]
        y = self.strategies.td_target(self.net.apply, params, target_params, batch, self.cfg.gamma)
        err = self.strategies.error(q_sa, y).mean()
        aux = {"q": q_sa.mean(), "target": y.mean()}
        if value is None:
            return err, aux
        q_target_now, _ = self.q_and_value(target_params, batch.obs)
        v_target = jax.lax.stop_gradient(jnp.max(jnp.where(batch.legal, q_target_now, -1.0), axis=-1))
        value_loss = jnp.mean((value - v_target) ** 2)
        return err + self.cfg.value_weight * value_loss, {**aux, "td_loss": err, "value_loss": value_loss}

    def update(self, state, key: Array):
        """One gradient step on a minibatch drawn with ``key``, then the target network's update."""
        batch = rb.sample(state.buffer, key, self.cfg.batch_size)
        (loss, aux), grads = jax.value_and_grad(self.loss, has_aux=True)(state.params, state.target_net(), batch)
        params, opt_state = apply_gradients(self.tx, state.params, state.opt_state, grads)
        n = state.updates + 1
        if self.cfg.tau < 1.0:
            target = optax.incremental_update(params, state.target_net(), self.cfg.tau)
        else:
            copy = n % self.cfg.target_update_every == 0
            target = jax.tree.map(lambda p, t: jnp.where(copy, p, t), params, state.target_net())
        return state.with_target(target).replace(params=params, opt_state=opt_state, updates=n), {"loss": loss, **aux}

    def _chunk(self, state, units: int | None = None):
        return self.collection.chunk(self, state, units)
