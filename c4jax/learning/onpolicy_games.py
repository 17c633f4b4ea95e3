"""The whole-games collection of PPO and REINFORCE (``--collect games``): the thesis' self-play (design.md §7).

A collection plays B games to the end from the kit's random starts (or the game's own), the learner
sampling on both sides (or against ``--opponent`` in some games), with the kit's shaped reward
back-propagated over each game (:mod:`c4jax.learning.backprop`) and negamax returns and advantages.
Where the kit has a symmetry each game is followed by its image. ``collect`` returns samples
``[B, S·T]`` (S = 2 with a mirror): row ``[g, s·T + t]`` is move t of game g (s = 1: its image).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable

import jax
import jax.numpy as jnp
from flax import struct
from jax import Array

from c4jax import games
from c4jax.agents import arena
from c4jax.agents.base import AgentBase
from c4jax.agents.policy import all_columns, masked_log_softmax, sample
from c4jax.games.kit import Symmetry
from c4jax.io.devices import shard_batch
from c4jax.learning import backprop as backprop_lib
from c4jax.learning import losses, rollouts
from c4jax.learning.train_state import TrainState


@struct.dataclass
class Samples:
    """Training rows with leading axes ``[...]`` (``[G, R]`` from ``collect``, ``[N]`` flat); ``valid = False``:
    no loss."""

    obs: Array  # [..., *observation_shape]: the observation before the move, for its mover
    legal: Array  # bool[..., A]: the actions of the policy's log-probabilities and entropy
    action: Array  # int32[...]: the action played
    logp: Array  # float32[...]: log pi_old(a|s) of the collecting network over ``legal``
    value: Array  # float32[...]: V_old(s) of the collecting network
    reward: Array  # float32[...]: the mover's reward of the move
    done: Array  # bool[...]: the move ended the game
    advantage: Array  # float32[...]: the collection's advantage estimate
    target: Array  # float32[...]: the value target (the return)
    valid: Array  # bool[...]: a training row

    @property
    def size(self) -> int:
        return self.valid.shape[0]


def apply(net, params, obs: Array, obs_ndim: int) -> tuple[Array, Array]:
    """``(logits [..., A], value [...])`` of the two-headed ``net`` on ``obs [..., *shape]`` (``obs_ndim`` axes)."""
    lead = obs.shape[:obs.ndim - obs_ndim]
    logits, value = net.apply({"params": params}, obs.reshape((-1,) + obs.shape[len(lead):]))
    return logits.reshape(lead + logits.shape[-1:]), value.reshape(lead)


@struct.dataclass
class _Behaviour(AgentBase):
    """Published-code self-play: a uniform legal action with probability ``explore``, else a policy sample."""

    params: Any
    explore: float
    net: Any = struct.field(pytree_node=False)
    symmetry: Symmetry = struct.field(pytree_node=False)
    legal: Callable = struct.field(pytree_node=False)  # boards -> bool[..., A]: the kit's ``observation_legal``
    mirror_avg: bool = struct.field(pytree_node=False, default=False)
    name: str = struct.field(pytree_node=False, default="behaviour")
    stochastic: bool = struct.field(pytree_node=False, default=True)
    game: Any = struct.field(pytree_node=False, kw_only=True)

    def _act(self, boards: Array, key: Array) -> Array:
        logits, _ = apply(self.net, self.params, boards, 2)
        if self.mirror_avg:
            mirrored, _ = apply(self.net, self.params, self.symmetry.observation(boards), 2)
            logits = 0.5 * (logits + self.symmetry.policy(mirrored))
        explore_key, uniform_key, policy_key = jax.random.split(key, 3)
        legal = self.legal(boards)
        explore = jax.random.uniform(explore_key, boards.shape[:-2]) < self.explore
        uniform = sample(uniform_key, jnp.zeros_like(logits), legal)
        return jnp.where(explore, uniform, sample(policy_key, logits, legal))


def exploring_policy(collection: GameCollection, params, *, explore: float, mirror_avg: bool) -> AgentBase:
    """The published code's behaviour agent on ``collection``'s game."""
    return _Behaviour(params=params, explore=explore, net=collection.net, symmetry=collection.symmetry,
                      legal=collection.kit.observation_legal, mirror_avg=mirror_avg, game=collection.game)


def monte_carlo_targets(collection, params, traj: arena.Trajectory, rewards: Array, values: Array, played: Array,
                        sign: Array, *, gamma, gae_lambda) -> tuple[Array, Array]:
    """``(returns [B, T], advantages [B, S, T])``: negamax returns and GAE(lambda) on ``values`` [B, S, T]."""
    del collection, params
    returns = jax.vmap(losses.negamax_gae, in_axes=(0, 0, 0, None, None, None, None, 0))(
        rewards, jnp.zeros(rewards.shape, jnp.float32), sign, False, gamma, 1.0, 0.0, traj.valid)
    gae = jax.vmap(losses.negamax_gae, in_axes=(0, 0, 0, None, None, None, None, 0))
    advantages = jax.vmap(gae, in_axes=(1, 1, None, None, None, None, None, 1), out_axes=1)(
        collection_copies(rewards, values.shape[1]), values, sign, False, gamma, gae_lambda, 0.0, played)
    return returns, advantages


def one_step_td_targets(collection, params, traj: arena.Trajectory, rewards: Array, values: Array, played: Array,
                        sign: Array, *, gamma, gae_lambda) -> tuple[Array, Array]:
    """``(returns [B, T], advantages [B, 2, T])``: one-step TD on the mirror-averaged value (published code)."""
    del values, played, sign, gae_lambda
    _, v = collection.apply(params, traj.observations)
    _, v_mirrored = collection.apply(params, collection.symmetry.observation(traj.observations))
    v_bar = 0.5 * (v + v_mirrored)  # [B, T]: V̄(s_t)
    returns, advantages = jax.vmap(losses.one_step_td, in_axes=(0, 0, 0, 0, None))(
        rewards, v_bar, traj.valid, traj.done, gamma)
    return returns, collection_copies(advantages, 2)


def next_sign(traj: arena.Trajectory) -> Array:
    """float32[B, T]: +1 where the same player makes the next move, else -1."""
    following = jnp.concatenate([traj.by_a[:, 1:], traj.by_a[:, -1:]], axis=1)
    next_valid = jnp.concatenate([traj.valid[:, 1:], jnp.zeros_like(traj.valid[:, :1])], axis=1)
    return jnp.where(next_valid & (following == traj.by_a), 1.0, -1.0)


def collection_copies(x: Array, copies: int) -> Array:
    """[B, T, ...] -> [B, S, T, ...]."""
    return jnp.stack([x] * copies, axis=1)


@dataclass(frozen=True)
class Strategies:
    """How the whole-games collection plays and learns (:meth:`of`); defaults: the thesis (else design.md §7a)."""

    behaviour: Callable[..., AgentBase] | None = None
    """``(collection, params) -> agent`` playing the learner's moves; ``None``: the policy sampled."""
    play: Callable = rollouts.mixed_rollout
    """The games (a ``rollouts`` function)."""
    backprop: Callable[[arena.Trajectory, float], Array] = backprop_lib.backprop_per_player
    """``(traj, n) -> rewards [B, T]``: a value of ``backprop_lib.BACKPROP``."""
    targets: Callable = monte_carlo_targets
    """``(collection, params, traj, rewards, values, played, sign, *, gamma, gae_lambda) -> (returns, advantages)``."""
    log_prob_columns: Callable[[Array], Array] | None = None
    """``boards -> bool[..., A]``: the actions of the log-probs and entropy; ``None``: the legal ones."""

    @classmethod
    def of(cls, cfg, *, explore: float = 0.0, mirror_avg: bool = False, td_advantage: bool = False,
           unmasked_log_probs: bool = False) -> Strategies:
        """The strategies of ``cfg``'s switches and PPO's own."""
        behaviour = None
        if explore != 0.0 or mirror_avg:
            behaviour = partial(exploring_policy, explore=explore, mirror_avg=mirror_avg)
        return cls(
            behaviour=behaviour,
            play=rollouts.mixed_rollout_no_draws if cfg.replace_draws else rollouts.mixed_rollout,
            backprop=backprop_lib.BACKPROP[cfg.reward_backprop],
            targets=one_step_td_targets if td_advantage else monte_carlo_targets,
            log_prob_columns=all_columns if unmasked_log_probs else None,
        )

    @property
    def published(self) -> bool:
        """Whether a published-code switch (needing Connect Four-like boards) is on."""
        return (self.behaviour is not None or self.targets is one_step_td_targets or self.log_prob_columns is not None
                or self.backprop is backprop_lib.backprop_segments)


def take_first(batch: Samples, n: int) -> Samples:
    """Exactly ``n`` rows: the flat ``batch``'s valid rows in order, then the rest marked invalid (padded if
    ``n > batch.size``)."""
    size = batch.size
    order = jnp.argsort(~batch.valid, stable=True)
    if n <= size:
        index = order[:n]
    else:
        index = jnp.concatenate([order, jnp.zeros((n - size,), order.dtype)])
    out = jax.tree.map(lambda x: x[index], batch)
    return shard_batch(out.replace(valid=out.valid & (jnp.arange(n) < size)))


class GameCollection:
    """Whole self-play games of ``algo.game``; ``ValueError`` when a published switch does not fit it."""

    keys = 2  # the start positions', the games'
    weighted = True  # rows weigh by ``valid`` (padding and an opponent's moves carry no loss)
    value_loss, normalise_advantages, kl = "smooth_l1", False, "k3"  # PPO's loss on these rows (the thesis)

    def __init__(self, algo):
        cfg, game = algo.cfg, algo.game
        self.cfg, self.game, self.net, self.tower = cfg, game, algo.net, bool(algo.tower)
        self.agent_of, self.kit = algo.agent_of, games.kit_of(game)
        self.symmetry = self.kit.symmetries[0] if self.kit.symmetries else None
        self.strategies, self.games = algo.strategies, algo.games  # how, and how many games per collection
        # boards -> the actions of the log-probabilities and entropy (None: the recorded legal actions)
        self.columns = self.strategies.log_prob_columns or self.kit.observation_legal
        if self.strategies.published and (self.tower or self.kit.observation_legal is None or self.symmetry is None):
            raise ValueError(f"the published code's switches (--preset published, design.md §7a) need a CNET, legal "
                             f"actions read from a board and a mirror, which {game.id} with --network {cfg.network} "
                             "has not: use --preset thesis")

    def init(self, tx, key: Array, params) -> TrainState:
        return TrainState.create(params, tx, key)

    def apply(self, params, obs: Array) -> tuple[Array, Array]:
        """``(logits, value)`` on ``obs [..., *observation_shape]`` (a tower's value through ``tanh``)."""
        logits, value = apply(self.net, params, obs, len(self.game.observation_shape))
        return logits, jnp.tanh(value) if self.tower else value

    def forward(self, params, obs: Array, legal: Array) -> tuple[Array, Array, Array]:
        """``(logits, actions of the log-probs and entropy, value)`` of rows ``obs`` with stored ``legal``."""
        logits, value = self.apply(params, obs)
        return logits, self.columns(obs) if self.columns is not None else legal, value

    def starts(self, key: Array, n: int):
        """``n`` start positions: the kit's random ones, else the game's own."""
        if self.kit.random_start is not None:
            return arena.random_initial_states(key, n, self.game)
        return jax.vmap(self.game.init)(jax.random.split(key, n))

    def collect(self, state: TrainState, keys, gae_lambda: float = 1.0):
        """``(state, samples [B, S·T], {"selfplay/length"})`` of ``self.games`` whole games."""
        cfg, s, n = self.cfg, self.strategies, self.games
        start_key, play_key = keys
        params = state.params
        agent = self.agent_of(params, "collect", sampled=True) if s.behaviour is None else s.behaviour(self, params)
        recorded = self.kit.observation_legal is None
        traj, learner_moves = s.play(agent, cfg.opponent_agent, self.starts(start_key, n), cfg.opponent_games(n),
                                     play_key, game=self.game, record_legal=recorded)
        rewards = s.backprop(traj, cfg.reward_backprop_n)  # [B, T]
        copies = 1 if self.symmetry is None else 2
        pair = partial(collection_copies, copies=copies)
        obs, actions = [traj.observations], [traj.actions]
        legal = [traj.legal]
        if self.symmetry is not None:
            obs.append(self.symmetry.observation(traj.observations))
            actions.append(jnp.where(traj.valid, self.symmetry.action(traj.actions), 0))
            legal.append(self.symmetry.policy(traj.legal) if recorded else None)
        obs, actions = jnp.stack(obs, axis=1), jnp.stack(actions, axis=1)
        legal = self.columns(obs) if self.columns is not None else jnp.stack(legal, axis=1)
        played, valid = pair(traj.valid), pair(learner_moves)
        logits, values = self.apply(params, obs)  # [B, S, T, A], [B, S, T]
        log_probs = masked_log_softmax(logits, legal)
        old_logp = jnp.take_along_axis(log_probs, actions[..., None], axis=-1)[..., 0]
        returns, advantages = s.targets(self, params, traj, rewards, values, played, next_sign(traj), gamma=cfg.gamma,
                                        gae_lambda=gae_lambda)
        rows = lambda x: x.reshape(x.shape[:1] + (-1,) + x.shape[3:])  # noqa: E731  [B, S, T, ...] -> [B, S·T, ...]
        samples = Samples(
            obs=rows(obs), legal=rows(legal), action=rows(actions).astype(jnp.int32),
            logp=rows(jnp.where(valid, old_logp, 0.0)), value=rows(jnp.where(valid, values, 0.0)),
            reward=rows(pair(rewards)), done=rows(pair(traj.done)), advantage=rows(jnp.where(valid, advantages, 0.0)),
            target=rows(pair(returns)), valid=rows(valid))
        state = state.replace(episodes=state.episodes + n)
        return state, samples, {"selfplay/length": traj.length.mean().astype(jnp.float32)}

    def buffer(self, samples: Samples) -> tuple[Samples, dict]:
        """PPO's buffer: the first ``cfg.buffer_size`` valid rows of the flat ``samples``."""
        buffer = take_first(samples, self.cfg.buffer_size)
        return buffer, {"buffer/samples": buffer.valid.sum(dtype=jnp.int32).astype(jnp.float32)}

    @staticmethod
    def minibatches(key: Array, valid: Array, size: int) -> tuple[Array, Array]:
        """``(index, weights)``, ``[ceil(N / size), size]`` each: valid rows shuffled first; others weigh 0."""
        n = valid.shape[0]
        num, pad = -(-n // size), -(-n // size) * size - n
        perm = jnp.argsort(jnp.where(valid, jax.random.uniform(key, (n,)), 2.0))
        perm = jnp.concatenate([perm, jnp.zeros((pad,), perm.dtype)])
        weights = (valid[perm] & (jnp.arange(n + pad) < n)).astype(jnp.float32)
        return perm.reshape(num, size), weights.reshape(num, size)

    @staticmethod
    def chunk_metrics(state: TrainState, m: dict) -> dict:
        metrics = {k: v.mean() for k, v in m.items()}
        metrics["selfplay/episodes"] = state.episodes.astype(jnp.float32)
        return metrics
