"""Pure, jitted building blocks shared by REINFORCE-with-baseline and PPO (design.md §7).

- ``collect``: batched self-play of a two-headed CNET sampling its own masked policy on the
  default game (whose kit says CNET reads its boards), turned into a flat, fixed-size
  :class:`Batch` of transitions, each episode followed by its mirror image (the kit's first
  symmetry: boards flipped left-right, each action mapped to its image).
- ``take_first``: PPO's fixed-size buffer (e.g. 2,000 transitions).
- ``ppo_update``: epochs x shuffled minibatches of the buffer, as one ``lax.scan``.
- ``reinforce_update`` / ``reinforce_updates``: one gradient step per episode (+ mirror).
- ``Strategies``: the behaviour policy, games, reward back-propagation, value targets and
  advantages, and log-prob columns of a collection, chosen once from a config (design.md §7a).
- ``OnPolicyConfig``: the fields REINFORCE's and PPO's configs share, among them the two strategies
  every game chooses from: how experience is collected (``collect``: these whole games, the thesis,
  or per-ply streams with the game's own rewards, :mod:`c4jax.learning.onpolicy_streams`) and the
  network (``network``: the CNET, or the residual tower).

Under a mesh with a batch axis (``--devices N``, ``c4jax.io.devices``) the self-play games,
the PPO buffer and its minibatches are split over the devices (the gradients of a minibatch
are then averaged over them); a REINFORCE update is one episode and its mirror (``2 T`` rows),
computed whole on every device.

The optimiser (``c4jax.learning.optim.make_optimizer``) keeps the frozen conv block
untouched; the supervised -> RL transfer of design.md §5 is ``c4jax.learning.loop.initial_params``;
the host loop (``c4jax.learning.loop``) owns evaluation, the "old network" rule,
logging and files.

Batch layout. ``collect`` over B games of at most T plies (the game's ``max_steps``) returns
``N = 2 * B * T`` rows laid out game by game: rows ``[2T g, 2T g + T)`` are game g's moves in
order (time-padded, padding has ``valid = False``) and rows ``[2T g + T, 2T g + 2T)`` its mirror. ``take_first``
keeps that order, so a PPO buffer holds whole episodes each followed by its mirror
(only the last one may be cut), as the thesis' buffer does.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, ClassVar

import jax
import jax.numpy as jnp
import optax
from flax import struct
from jax import Array

from c4jax import games
from c4jax.learning import losses
from c4jax.agents import arena
from c4jax.nets.cnet import CNet
from c4jax.agents.base import DEFAULT_GAME, AgentBase, observation_legal
from c4jax.agents.network import NetworkAgent
from c4jax.games.kit import Symmetry
from c4jax.agents.policy import all_columns, masked_log_softmax, sample
from c4jax.io.devices import shard_batch
from c4jax.learning.algorithm import Algorithm
from c4jax.learning import ranges
from c4jax.learning.config import SelfPlayConfig
from c4jax.learning.optim import apply_gradients, make_optimizer
from c4jax.learning.train_state import TrainState
from c4jax.learning import rollouts
from c4jax.learning import backprop as backprop_lib

COLLECTIONS = ("games", "streams")
NETWORKS = ("cnet", "tower")
# the whole-games collection's switches (design.md §2, §7a), with the values that leave them off
GAMES_ONLY = {"reward_backprop": "per_player", "replace_draws": False, "opponent": "self"}


@dataclass(frozen=True)
class OnPolicyConfig(SelfPlayConfig):
    """The fields REINFORCE and PPO share (defaults: the thesis, design.md §7, on the default game; a game's kit
    gives its own, ``GameKit.defaults``)."""

    collect: str = "games"
    """How self-play makes training rows: 'games' (the thesis: whole games from design.md §3 random starts
    on CNET boards, design.md §2's shaped reward, each game followed by its mirror) or 'streams' (--envs games
    side by side, --steps plies each per collection, the game's own rewards: any game)."""
    network: str = "cnet"
    """'cnet' (the thesis' two-headed CNET of --width; the games whose kit says it reads their boards) or
    'tower' (the residual tower of --tower-blocks and --tower-channels; --collect streams)."""
    envs: int = 64
    """--collect streams: games played side by side; each starts again as soon as it ends."""
    steps: int = 64
    """--collect streams: plies of every game per collection (envs x steps rows)."""
    max_grad_norm: float = 0.0
    """Clip the gradients to this global norm (0: no clipping)."""
    tower_blocks: int = 2
    """--network tower: residual blocks (:mod:`c4jax.nets.tower`)."""
    tower_channels: int = 32
    """--network tower: filters of every 3x3 convolution."""

    RANGES: ClassVar[dict] = {"envs": ranges.ONE_OR_MORE, "steps": ranges.ONE_OR_MORE,
                              "max_grad_norm": ranges.NON_NEGATIVE, "tower_blocks": ranges.ONE_OR_MORE,
                              "tower_channels": ranges.ONE_OR_MORE}

    def __post_init__(self):
        super().__post_init__()
        if not ranges.checking():
            return
        if self.collect not in COLLECTIONS:
            raise ValueError(f"--collect must be one of {COLLECTIONS}, got {self.collect!r}")
        if self.network not in NETWORKS:
            raise ValueError(f"--network must be one of {NETWORKS}, got {self.network!r}")
        if self.collect == "games" and self.network != "cnet":
            raise ValueError("--collect games plays the thesis' whole games on CNET boards: it needs --network cnet")
        if self.streams:
            self.refuse_games_only(GAMES_ONLY)

    @property
    def streams(self) -> bool:
        """Whether experience comes as per-ply streams (:mod:`c4jax.learning.onpolicy_streams`)."""
        return self.collect == "streams"

    @property
    def tower(self) -> tuple[int, int]:
        return (self.tower_blocks, self.tower_channels)

    def refuse_games_only(self, off: dict) -> None:
        """``ValueError`` naming the fields of ``off`` (field: the value that leaves it off) that are on: they
        belong to the whole-games collection, which --collect streams is not."""
        on = [f"--{k.replace('_', '-')}" for k, v in off.items() if getattr(self, k) != v]
        if on:
            raise ValueError(f"{', '.join(on)}: the whole-games collection's (--collect games; --preset published "
                             "turns them on, --preset thesis off); --collect streams plays the game's own rewards "
                             "without them")


@struct.dataclass
class Batch:
    """N transitions (rows); a padding row has ``valid = False`` and must carry no weight."""

    boards: Array  # int8[N, H, W]: the board before the move, mover's point of view
    actions: Array  # int32[N]: the action played (its mirror image on mirrored rows)
    rewards: Array  # float32[N]: design.md §2 back-propagated reward of the move
    returns: Array  # float32[N]: turn-based return G_t (the value target)
    old_logp: Array  # float32[N]: log pi_old(a|s) of the collecting network (mirror: on the mirrored board)
    old_value: Array  # float32[N]: V_old(s) of the collecting network (mirror: on the mirrored board)
    advantages: Array  # float32[N]: turn-based GAE of the collecting network (lambda 1: G - V_old)
    done: Array  # bool[N]: the move ended the game
    valid: Array  # bool[N]: a real move (False: padding)
    mirrored: Array  # bool[N]: a row of a mirrored episode

    @property
    def size(self) -> int:
        return self.valid.shape[0]


def plays_whole_games(game) -> bool:
    """Whether ``game``'s kit has what the whole-games collection plays: CNET boards, design.md §3 random
    start positions and a mirror."""
    kit = games.kit_of(game)
    return kit.cnet and kit.random_start is not None and bool(kit.symmetries)


def check_games_collection(game) -> None:
    """``ValueError`` unless the whole-games collection plays ``game`` (:func:`plays_whole_games`)."""
    if not plays_whole_games(game):
        raise ValueError(f"--collect games plays the thesis' whole games (CNET boards, random starts, mirrors), "
                         f"which {game.id}'s kit has not; train it with --collect streams --network tower")


# --------------------------------------------------------------------------- collection


def _apply(params, boards: Array, width: int) -> tuple[Array, Array]:
    """(logits[..., A], value[...]) of the two-headed CNET on boards[..., H, W]."""
    shape = boards.shape[:-2]
    logits, value = CNet(width=width, heads="two").apply({"params": params}, boards.reshape((-1,) + boards.shape[-2:]))
    return logits.reshape(shape + logits.shape[-1:]), value.reshape(shape)


def _legal(boards: Array) -> Array:
    """bool[..., A]: the legal actions of the default game's boards (its kit's ``observation_legal``)."""
    return observation_legal(DEFAULT_GAME, boards)


def _mirror() -> Symmetry:
    """The default game's mirror (its kit's first symmetry), which the whole-games collection adds."""
    return games.kit_of(DEFAULT_GAME).symmetries[0]


@partial(jax.jit, static_argnames=("width", "backprop_n"))
def collect(params, key: Array, states, *, gamma: float | Array = 0.95,
            gae_lambda: float | Array = 1.0, width: int = 128, backprop_n: float = 3.0) -> Batch:
    """Self-play B games from ``states`` by sampling the masked policy; return their transitions.

    Args:
      params: two-headed CNET parameters (``heads="two"``).
      key: PRNG key of the policy sampling.
      states: EnvState [B]: start positions, e.g. ``arena.random_initial_states(k, B)``
        (design.md §3: the random moves that led there are not training data).
      gamma: discount of the turn-based returns and advantages.
      gae_lambda: GAE lambda of ``advantages``; 1.0 (default) gives the thesis'
        ``G_t - V_old(s_t)``.
      width: CNET width. backprop_n: exponent of the design.md §2 reward back-propagation.

    Returns:
      a :class:`Batch` of ``N = 2 * B * T`` rows (see the module docstring for the
      layout). Rewards are design.md §2 back-propagated, returns ``G_t = r_t - gamma *
      G_{t+1}``; ``old_logp`` / ``old_value`` / ``advantages`` are recomputed by the
      network on the recorded boards. A mirrored episode has the mirrored boards and
      actions and the same rewards, returns and done flags; its
      ``old_logp`` and ``old_value`` are the network's on the mirrored board and its
      advantages are computed from those mirrored values. Self-play mean game length
      = ``valid.sum() / N * T``.
    """
    return collect_mixed(params, key, states, None, 0, gamma=gamma, gae_lambda=gae_lambda, width=width,
                         backprop_n=backprop_n)[0]


# --------------------------------------------------------------------------- strategies


def _pair(x: Array, y: Array) -> Array:
    """[B, T, ...] x 2 -> [B, 2, T, ...]: an episode and its mirror."""
    return jnp.stack([x, y], axis=1)


def sample_policy(params, width: int) -> AgentBase:
    """Behaviour of the thesis: sample the masked policy."""
    return NetworkAgent(params=params, label="collect", width=width, heads="two", output="policy",
                        sampled=True, symmetric=False)


@struct.dataclass
class _Behaviour(AgentBase):
    """Self-play of the published PPO code (design.md §7a): with probability ``explore`` a uniform
    legal column, else a sample of the (optionally mirror-averaged) logits over the legal columns."""

    params: Any
    explore: float
    width: int = struct.field(pytree_node=False, default=128)
    mirror_avg: bool = struct.field(pytree_node=False, default=False)
    name: str = struct.field(pytree_node=False, default="behaviour")
    stochastic: bool = struct.field(pytree_node=False, default=True)

    def _act(self, boards: Array, key: Array) -> Array:
        logits, _ = _apply(self.params, boards, self.width)
        if self.mirror_avg:
            mirror = _mirror()
            mirrored, _ = _apply(self.params, mirror.observation(boards), self.width)
            logits = 0.5 * (logits + mirror.policy(mirrored))
        explore_key, uniform_key, policy_key = jax.random.split(key, 3)
        legal = _legal(boards)
        explore = jax.random.uniform(explore_key, boards.shape[:-2]) < self.explore
        uniform = sample(uniform_key, jnp.zeros_like(logits), legal)
        return jnp.where(explore, uniform, sample(policy_key, logits, legal))


def exploring_policy(params, width: int, *, explore: float, mirror_avg: bool) -> AgentBase:
    """Behaviour of the published code (bind ``explore`` and ``mirror_avg`` with ``functools.partial``)."""
    return _Behaviour(params=params, explore=explore, width=width, mirror_avg=mirror_avg)


def _mirror_avg_value(params, boards: Array, width: int) -> Array:
    """float32[...]: V̄(s), the value averaged with the mirrored board's."""
    _, v = _apply(params, boards, width)
    _, v_mirrored = _apply(params, _mirror().observation(boards), width)
    return 0.5 * (v + v_mirrored)


def monte_carlo_targets(params, traj: arena.Trajectory, rewards: Array, values: Array, played: Array, *,
                        gamma, gae_lambda, width: int) -> tuple[Array, Array]:
    """Value targets and advantages of the thesis: ``(returns [B, T], advantages [B, 2, T])``, the
    turn-based returns ``G_t = r_t - gamma G_{t+1}`` and the turn-based GAE(lambda) on the collecting
    network's ``values`` [B, 2, T] of each board, mirrored ones included (lambda 1: ``G - V``)."""
    del params, width
    returns = jax.vmap(losses.turn_based_returns, in_axes=(0, 0, None))(rewards, traj.valid, gamma)
    advantages = jax.vmap(jax.vmap(losses.gae_turn_based, in_axes=(0, 0, 0, None, None)),
                          in_axes=(0, 0, 0, None, None))(_pair(rewards, rewards), values, played, gamma, gae_lambda)
    return returns, advantages


def one_step_td_targets(params, traj: arena.Trajectory, rewards: Array, values: Array, played: Array, *,
                        gamma, gae_lambda, width: int) -> tuple[Array, Array]:
    """Value targets and advantages of the published code (design.md §7a): one-step TD on the
    mirror-averaged value V̄ of the collecting network, ``returns = r - gamma (1 - done) V̄(s')`` and
    ``advantages = returns - V̄(s)``; V̄ is mirror-symmetric, so a mirrored row has its original's."""
    del values, played, gae_lambda
    v_bar = _mirror_avg_value(params, traj.observations, width)  # [B, T]: V̄(s_t)
    returns, advantages = jax.vmap(losses.one_step_td, in_axes=(0, 0, 0, 0, None))(
        rewards, v_bar, traj.valid, traj.done, gamma)
    return returns, _pair(advantages, advantages)


@dataclass(frozen=True)
class Strategies:
    """How REINFORCE and PPO collect their self-play, chosen once from a config's flags
    (:meth:`of`); the defaults are the thesis (design.md §7), the alternatives the published
    code (design.md §7a)."""

    behaviour: Callable[..., AgentBase] = sample_policy
    """``(params, width) -> agent`` playing the learner's moves: ``sample_policy`` or ``exploring_policy``."""
    play: Callable = rollouts.mixed_rollout
    """The games: ``rollouts.mixed_rollout`` or ``rollouts.mixed_rollout_no_draws`` (draws replaced)."""
    backprop: Callable[[arena.Trajectory, float], Array] = backprop_lib.backprop_per_player
    """``(traj, n) -> rewards [B, T]``: a value of ``backprop_lib.BACKPROP``."""
    targets: Callable = monte_carlo_targets
    """Value targets and advantages: ``monte_carlo_targets`` or ``one_step_td_targets``."""
    log_prob_columns: Callable[[Array], Array] = _legal
    """``boards -> bool[..., A]``: the actions of the stored and recomputed log-probs and of the entropy
    (the legal ones, or ``all_columns``: unmasked)."""


    @classmethod
    def of(cls, cfg: SelfPlayConfig, *, explore: float = 0.0, mirror_avg: bool = False, td_advantage: bool = False,
           unmasked_log_probs: bool = False) -> Strategies:
        """The strategies of a config's switches (design.md §7a): ``cfg.reward_backprop`` and
        ``cfg.replace_draws``, and PPO's own (off: the thesis)."""
        behaviour = sample_policy
        if explore != 0.0 or mirror_avg:
            behaviour = partial(exploring_policy, explore=explore, mirror_avg=mirror_avg)
        return cls(
            behaviour=behaviour,
            play=rollouts.mixed_rollout_no_draws if cfg.replace_draws else rollouts.mixed_rollout,
            backprop=backprop_lib.BACKPROP[cfg.reward_backprop],
            targets=one_step_td_targets if td_advantage else monte_carlo_targets,
            log_prob_columns=all_columns if unmasked_log_probs else _legal,
        )


THESIS = Strategies()


@partial(jax.jit, static_argnames=("n_vs", "width", "backprop_n", "strategies"))
def collect_mixed(params, key: Array, states, opponent, n_vs: int, *,
                  gamma: float | Array = 0.95, gae_lambda: float | Array = 1.0, width: int = 128,
                  backprop_n: float = 3.0, strategies: Strategies = THESIS) -> tuple[Batch, Array]:
    """``collect``, with the first ``n_vs`` games played against a fixed ``opponent`` agent, and the
    self-play, reward back-propagation, value targets and advantages of ``strategies`` (default: the
    thesis).

    In those games (``rollouts.mixed_rollout``: the learner's seat is random) only the
    learner's own moves are training rows (``valid``); the opponent's moves are part of
    the environment: they shape the returns and advantages of the learner's moves
    (``G_t = r_t - gamma * G_{t+1}`` runs over every move of the game) but are not
    on-policy samples, so they carry no loss. ``opponent=None`` or ``n_vs=0`` is
    ``collect``. Returns ``(batch, lengths)``: lengths (int32[B]) are the moves
    played in each game.
    """
    agent = strategies.behaviour(params, width)
    traj, learner_moves = strategies.play(agent, opponent, states, n_vs, key)
    rewards = strategies.backprop(traj, backprop_n)  # [B, T]
    played = _pair(traj.valid, traj.valid)
    valid = _pair(learner_moves, learner_moves)
    mirror = _mirror()
    boards = _pair(traj.observations, mirror.observation(traj.observations))
    actions = _pair(traj.actions, jnp.where(traj.valid, mirror.action(traj.actions), 0))
    logits, values = _apply(params, boards, width)  # [B, 2, T, A], [B, 2, T]
    log_probs = masked_log_softmax(logits, strategies.log_prob_columns(boards))
    old_logp = jnp.take_along_axis(log_probs, actions[..., None], axis=-1)[..., 0]
    returns, advantages = strategies.targets(params, traj, rewards, values, played, gamma=gamma,
                                             gae_lambda=gae_lambda, width=width)
    flat = lambda x: x.reshape((-1,) + x.shape[3:])  # noqa: E731  [B, 2, T, ...] -> [N, ...]
    return Batch(
        boards=flat(boards).astype(jnp.int8),
        actions=flat(actions).astype(jnp.int32),
        rewards=flat(_pair(rewards, rewards)),
        returns=flat(_pair(returns, returns)),
        old_logp=flat(jnp.where(valid, old_logp, 0.0)),
        old_value=flat(jnp.where(valid, values, 0.0)),
        advantages=flat(jnp.where(valid, advantages, 0.0)),
        done=flat(_pair(traj.done, traj.done)),
        valid=flat(valid),
        mirrored=flat(jnp.broadcast_to(jnp.array([False, True])[None, :, None], valid.shape)),
    ), traj.length


@partial(jax.jit, static_argnames=("n",))
def take_first(batch: Batch, n: int) -> Batch:
    """A buffer of exactly ``n`` rows: the first ``n`` valid rows of ``batch``, in order.

    Valid rows are moved to the front by a stable sort (their order is kept); rows
    beyond the number of valid rows available are marked invalid (``n`` may exceed
    ``batch.size``: the buffer is then padded). Count the real rows with
    ``valid.sum()``.
    """
    size = batch.size
    order = jnp.argsort(~batch.valid, stable=True)
    if n <= size:
        index = order[:n]
    else:
        index = jnp.concatenate([order, jnp.zeros((n - size,), order.dtype)])
    out = jax.tree.map(lambda x: x[index], batch)
    return shard_batch(out.replace(valid=out.valid & (jnp.arange(n) < size)))


def split_episodes(batch: Batch) -> Batch:
    """The rows of a ``collect`` batch as [B, 2T]: each game's episode followed by its mirror."""
    rows = 2 * DEFAULT_GAME.max_steps  # one episode and its mirror
    if batch.size % rows:
        raise ValueError(f"a collect batch has a multiple of {rows} rows, got {batch.size}")
    return jax.tree.map(lambda x: x.reshape((-1, rows) + x.shape[1:]), batch)


# --------------------------------------------------------------------------- updates


def _weighted_mean(x: Array, weights: Array) -> Array:
    return jnp.sum(jnp.where(weights > 0, x, 0.0) * weights) / jnp.maximum(jnp.sum(weights), 1.0)


@struct.dataclass
class _Carry:
    params: dict
    opt_state: optax.OptState


def _ppo_minibatch_loss(params, mb: Batch, weights: Array, *, width, clip, c1, c2, log_prob_columns=_legal):
    logits, values = _apply(params, mb.boards, width)
    total, aux = jax.vmap(partial(losses.ppo_loss, clip=clip, c1=c1, c2=c2))(
        logits, log_prob_columns(mb.boards), mb.actions, mb.old_logp, mb.advantages, values, mb.returns
    )
    metrics = {
        "loss": total,
        "policy_loss": aux["policy_loss"],
        "value_loss": aux["value_loss"],
        "entropy": aux["entropy"],
        "approx_kl": aux["approx_kl"],
        "clip_fraction": aux["clipped"],
    }
    metrics = {k: _weighted_mean(v, weights) for k, v in metrics.items()}
    return metrics["loss"], metrics


@partial(jax.jit, static_argnames=("tx", "epochs", "minibatch_size", "clip", "c1", "c2", "width", "log_prob_columns"))
def ppo_update(params, opt_state, batch: Batch, key: Array, *, tx: optax.GradientTransformation,
               epochs: int = 5, minibatch_size: int = 32, clip: float = 0.2, c1: float = 0.75,
               c2: float = 0.04, width: int = 128, log_prob_columns: Callable[[Array], Array] = _legal):
    """PPO epochs over a fixed-size buffer (e.g. ``take_first(collect(...), 2000)``).

    Each epoch shuffles the valid rows (invalid rows go last) and cuts the buffer into
    ``ceil(n / minibatch_size)`` minibatches; each minibatch's loss is the mean of
    ``losses.ppo_loss`` over its valid rows (invalid rows have weight 0). A minibatch
    with no valid row (an under-filled buffer) makes no optimiser step at all (no
    Adam step, no weight decay). A frozen conv block is the optimiser's business:
    ``make_optimizer(..., frozen_conv=True)`` leaves it bit-identical.

    ``log_prob_columns``: the columns of the recomputed log-probs and the entropy, those of the
    ``Strategies`` that collected the buffer (``all_columns``: the published code, design.md §7a).

    Returns:
      ``(params, opt_state, metrics)``; metrics are means over the minibatches that
      made a step: ``train/loss``, ``train/policy_loss`` (-L_clip), ``train/value_loss``,
      ``train/entropy``, ``train/approx_kl``, ``train/clip_fraction``; plus
      ``train/updates`` (int32: optimiser steps taken) and ``train/samples`` (valid rows).
    """
    n = batch.size
    num_minibatches = -(-n // minibatch_size)
    pad = num_minibatches * minibatch_size - n
    loss_fn = partial(_ppo_minibatch_loss, width=width, clip=clip, c1=c1, c2=c2, log_prob_columns=log_prob_columns)
    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def _minibatch_step(carry: _Carry, xs) -> tuple[_Carry, dict]:
        index, weights = xs
        mb, weights = shard_batch((jax.tree.map(lambda x: x[index], batch), weights))  # split over a mesh's devices
        (_, metrics), grads = grad_fn(carry.params, mb, weights)
        has_data = weights.sum() > 0

        def _step(c: _Carry) -> _Carry:
            return _Carry(*apply_gradients(tx, c.params, c.opt_state, grads))

        carry = jax.lax.cond(has_data, _step, lambda c: c, carry)
        return carry, {**metrics, "stepped": has_data.astype(jnp.float32)}

    def _epoch_step(carry: _Carry, epoch_key: Array) -> tuple[_Carry, dict]:
        sort_key = jnp.where(batch.valid, jax.random.uniform(epoch_key, (n,)), 2.0)
        perm = jnp.argsort(sort_key)
        perm = jnp.concatenate([perm, jnp.zeros((pad,), perm.dtype)])
        weights = (batch.valid[perm] & (jnp.arange(n + pad) < n)).astype(jnp.float32)
        xs = (perm.reshape(num_minibatches, minibatch_size), weights.reshape(num_minibatches, minibatch_size))
        return jax.lax.scan(_minibatch_step, carry, xs)

    carry, metrics = jax.lax.scan(_epoch_step, _Carry(params=params, opt_state=opt_state), jax.random.split(key, epochs))
    stepped = metrics.pop("stepped")
    count = stepped.sum()
    out = {f"train/{k}": jnp.sum(v * stepped) / jnp.maximum(count, 1.0) for k, v in metrics.items()}
    out["train/updates"] = count.astype(jnp.int32)
    out["train/samples"] = batch.valid.sum(dtype=jnp.int32)
    return carry.params, carry.opt_state, out


def _reinforce_loss(params, episode: Batch, *, width, c1):
    logits, values = _apply(params, episode.boards, width)
    total, aux = jax.vmap(partial(losses.reinforce_loss, c1=c1))(
        logits, _legal(episode.boards), episode.actions, episode.returns, values
    )
    weights = episode.valid.astype(jnp.float32)
    metrics = {
        "loss": total,
        "policy_loss": aux["policy_loss"],
        "value_loss": aux["value_loss"],
        "entropy": aux["entropy"],
        "advantage": aux["advantage"],
    }
    metrics = {k: _weighted_mean(v, weights) for k, v in metrics.items()}
    return metrics["loss"], metrics


@partial(jax.jit, static_argnames=("tx", "c1", "width"))
def reinforce_update(params, opt_state, episode: Batch, *, tx: optax.GradientTransformation,
                     c1: float = 0.75, width: int = 128):
    """One REINFORCE-with-baseline gradient step on one episode and its mirror.

    ``episode`` holds the 2T rows of one game of a ``collect`` batch (see
    ``split_episodes``); the loss is the mean of ``losses.reinforce_loss`` over its
    valid rows, with the baseline V(s) and the advantage ``G - V(s)`` from the current
    network. An episode without a valid row makes no step.

    Returns ``(params, opt_state, metrics)`` with ``train/loss``, ``train/policy_loss``,
    ``train/value_loss``, ``train/entropy``, ``train/advantage`` (means over the rows)
    and ``train/samples``.
    """
    loss_fn = partial(_reinforce_loss, width=width, c1=c1)
    (_, metrics), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, episode)

    def _step(c: _Carry) -> _Carry:
        return _Carry(*apply_gradients(tx, c.params, c.opt_state, grads))

    carry = jax.lax.cond(episode.valid.any(), _step, lambda c: c, _Carry(params=params, opt_state=opt_state))
    out = {f"train/{k}": v for k, v in metrics.items()}
    out["train/samples"] = episode.valid.sum(dtype=jnp.int32)
    return carry.params, carry.opt_state, out


@partial(jax.jit, static_argnames=("tx", "c1", "width"))
def reinforce_updates(params, opt_state, batch: Batch, *, tx: optax.GradientTransformation,
                      c1: float = 0.75, width: int = 128):
    """``reinforce_update`` on each of the K episodes of a ``collect`` batch, in order (one
    ``lax.scan``); returns ``(params, opt_state, metrics)`` with metrics stacked as [K]."""

    def _episode_step(carry: _Carry, episode: Batch) -> tuple[_Carry, dict]:
        p, o, m = reinforce_update(carry.params, carry.opt_state, episode, tx=tx, c1=c1, width=width)
        return _Carry(params=p, opt_state=o), m

    carry, metrics = jax.lax.scan(_episode_step, _Carry(params=params, opt_state=opt_state), split_episodes(batch))
    return carry.params, carry.opt_state, metrics


# --------------------------------------------------------------------------- the host-loop algorithm


class OnPolicyAlgorithm(Algorithm):
    """What REINFORCE and PPO share as algorithms (:class:`~c4jax.learning.algorithm.Algorithm`): a
    two-headed CNET playing by sampling its policy (``default_mode = "sto"``)."""

    game = DEFAULT_GAME  # the thesis' CNET boards: the default game's
    heads = "two"
    output = "policy"
    default_mode = "sto"

    def __init__(self, learning_rate: float, weight_decay: float, freeze_conv: bool):
        self.tx = make_optimizer(learning_rate, weight_decay, freeze_conv)
        self.chunk = jax.jit(self._chunk)
        cfg = self.cfg  # set by the subclass: the settings its chunk reads
        self.compile_key = None if cfg.opponent_agent is not None else (type(self), cfg, freeze_conv)

    def init(self, key: Array, params) -> TrainState:
        return TrainState.create(params, self.tx, key)

    def _chunk(self, state: TrainState):  # pragma: no cover - abstract
        raise NotImplementedError
