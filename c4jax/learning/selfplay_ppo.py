"""PPO by self-play on any two-player zero-sum game of the protocol (:class:`c4jax.games.base.Game`).

The thesis' PPO (:mod:`c4jax.learning.ppo`) plays Connect Four's CNET boards with design.md §2's
shaped reward and mirror augmentation; this one needs only the game's own rewards (+1 win, 0
draw, -1 loss), as the MCTS thesis trains PPO on Checkers. It follows purejaxrl's layout: ``envs``
games run side by side and each starts again as soon as it ends, so a collection is always
``envs x steps`` plies, whatever the games' lengths; one jitted chunk is ``collects_per_eval``
(collect, then PPO epochs over it).

Self-play, one network for both players. Every ply is a row from the point of view of its
player to move (``current_player``): the observation, the action sampled from the policy
masked to the legal actions, its log-probability, the value ``V(s)`` (the value head through
``tanh``, in [-1, 1]) and the mover's reward. The next row belongs to the opponent unless the
same player moves again (a Checkers multi-jump), so the advantages are the negamax form of
GAE(λ) (:func:`c4jax.learning.losses.negamax_gae`): with ``sign = +1`` when the same player
moves next and ``-1`` otherwise,

    δ_t = r_t + γ (1 - done_t) sign_t V(s_{t+1}) - V(s_t)
    A_t = δ_t + γ λ (1 - done_t) sign_t A_{t+1}

and the value target is ``A_t + V(s_t)``. A game cut by the game's own ply cap is a draw (the
game's rules say so), not a truncated episode to bootstrap. The loss is
:func:`c4jax.learning.losses.ppo_loss` with the squared value error, on advantages normalised
over each minibatch.

The network is the residual tower (:mod:`c4jax.nets.tower`) of AlphaZero's agents, so the
trained policy plays through :class:`c4jax.agents.network_search.AlphaZeroAgent`: its raw
policy (``@0``, how it is saved) or, with ``@N``, N simulations of search guided by its
policy and value heads.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Annotated, Any, ClassVar

import jax
import jax.numpy as jnp
import tyro
from flax import struct
from jax import Array

from c4jax.agents.policy import masked_logits
from c4jax.learning import losses, ranges
from c4jax.learning.optim import apply_gradients
from c4jax.learning.selfplay_envs import TowerSelfPlay, finished_games, play_ply
from c4jax.learning.train_state import TrainState


@dataclass(frozen=True)
class SelfPlayPPOConfig:
    """PPO by self-play on a game's own rewards (:mod:`c4jax.learning.selfplay_ppo`)."""

    envs: int = 64
    """Games played side by side; each starts again as soon as it ends."""
    steps: int = 64
    """Plies of every game per collection: a collection is envs x steps rows."""
    epochs: int = 4
    """Passes over each collection."""
    minibatch_size: int = 512
    """Rows per optimiser step (a multiple that divides envs x steps)."""
    clip: float = 0.2
    """Ratio clip."""
    value_weight: float = 0.5
    """Weight of the value loss (squared error of tanh(value) to the GAE target)."""
    entropy_weight: float = 0.01
    """Weight of the entropy bonus (entropy over the legal actions)."""
    gamma: float = 1.0
    """Discount per ply (1: the game's result, undiscounted)."""
    gae_lambda: float = 0.95
    """GAE(λ) of the advantages."""
    learning_rate: float = 3e-4
    """Adam learning rate."""
    weight_decay: float = 0.0
    """L2 penalty added to the gradient."""
    max_grad_norm: float = 0.5
    """Gradients are clipped to this global norm."""
    eval_every: int = 0
    """Updates between evaluations (and checkpoints), a multiple of one collection's (--epochs x
    --envs x --steps / --minibatch-size); 0 = 50 collections'. Saved as the number of collections
    (collects_per_eval)."""
    collects_per_eval: Annotated[int, tyro.conf.Suppress] = 50
    """Collections (each followed by its PPO epochs) between evaluations, which --eval-every sets."""
    tower_blocks: int = 2
    """Residual blocks of the network (:mod:`c4jax.nets.tower`)."""
    tower_channels: int = 32
    """Filters of every 3x3 convolution of the network."""

    RANGES: ClassVar[dict] = {
        "envs": ranges.ONE_OR_MORE, "steps": ranges.ONE_OR_MORE, "epochs": ranges.ONE_OR_MORE,
        "minibatch_size": ranges.ONE_OR_MORE, "clip": ranges.POSITIVE, "value_weight": ranges.NON_NEGATIVE,
        "entropy_weight": ranges.NON_NEGATIVE, "gamma": ranges.UNIT, "gae_lambda": ranges.UNIT,
        "learning_rate": ranges.POSITIVE, "weight_decay": ranges.NON_NEGATIVE, "max_grad_norm": ranges.POSITIVE,
        "eval_every": ranges.at_least(0, "(0 = 50 collections)"), "collects_per_eval": ranges.ONE_OR_MORE,
        "tower_blocks": ranges.ONE_OR_MORE, "tower_channels": ranges.ONE_OR_MORE,
    }

    SMOKE: ClassVar[dict] = {
        "envs": 4, "steps": 8, "minibatch_size": 16, "epochs": 1, "collects_per_eval": 1, "tower_blocks": 1,
        "tower_channels": 4, "total_updates": 2,
    }

    def __post_init__(self):
        if not ranges.checking():
            return
        ranges.check(self)
        if (self.envs * self.steps) % self.minibatch_size:
            raise ValueError(f"--minibatch-size ({self.minibatch_size}) must divide a collection's rows "
                             f"(--envs x --steps = {self.envs * self.steps})")
        ranges.eval_every_to_units(self, "collects_per_eval", self.collect_updates,
                                   "collection (--epochs x --envs x --steps / --minibatch-size)")

    @property
    def collect_updates(self) -> int:
        """The optimiser steps of one collection."""
        return self.epochs * self.minibatches

    @property
    def tower(self) -> tuple[int, int]:
        return (self.tower_blocks, self.tower_channels)

    @property
    def minibatches(self) -> int:
        """Optimiser steps per epoch."""
        return self.envs * self.steps // self.minibatch_size


@struct.dataclass
class Rows:
    """One collection, time-major ``[T, E]``."""

    obs: Array  # the observation of the player to move
    legal: Array  # bool[..., A]: the legal actions
    action: Array  # int32
    logp: Array  # float32: log-probability of the action under the collecting policy
    value: Array  # float32: V(s) of the collecting network, for the player to move
    reward: Array  # float32: the mover's reward for the ply
    done: Array  # bool: the ply ended the game
    sign: Array  # float32: +1 when the same player moves next, -1 when the opponent does


@struct.dataclass
class SelfPlayPPOState(TrainState):
    envs: Any  # game states [E], mid-game
    plies: Array  # int32[E]: plies played in each running game


class SelfPlayPPO(TowerSelfPlay):
    """PPO by self-play on ``game`` as an :class:`~c4jax.learning.algorithm.Algorithm`."""

    name = "ppo"
    output = "policy"
    default_mode = "sto"  # the evaluations and the saved agent sample the policy

    def __init__(self, cfg: SelfPlayPPOConfig, game):
        self.cfg = cfg
        super().__init__(game, cfg.tower, cfg.learning_rate, cfg.weight_decay, cfg.max_grad_norm)
        self.update_step, self.update_step_name = cfg.collect_updates, "collection"
        self.eval_updates = cfg.collects_per_eval * cfg.collect_updates

    def chunk_of(self, units: int):
        return jax.jit(partial(self._chunk, units=units))

    def init(self, key: Array, params) -> SelfPlayPPOState:
        env_key, key = jax.random.split(key)
        envs, plies = self.initial_games(env_key, self.cfg.envs)
        return SelfPlayPPOState.create(params, self.tx, key, envs=envs, plies=plies)

    def _apply(self, params, obs: Array, legal: Array) -> tuple[Array, Array]:
        """Masked logits and tanh value of observations [..., *obs] with legal masks [..., A]."""
        lead = legal.shape[:-1]
        flat = obs.reshape((-1,) + obs.shape[len(lead):])
        logits, value = self.net.apply({"params": params}, flat)
        logits = masked_logits(logits.reshape(lead + logits.shape[-1:]), legal)
        return logits, jnp.tanh(value.reshape(lead))

    def _collect(self, params, envs, plies: Array, key: Array):
        game = self.game

        def ply(carry, k):
            envs, plies, finished, lengths = carry
            act_key, reset_key = jax.random.split(k)
            obs = jax.vmap(game.observe)(envs)
            legal = envs.legal_action_mask
            logits, value = self._apply(params, obs, legal)
            action = jax.random.categorical(act_key, logits).astype(jnp.int32)
            logp = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], axis=-1)[:, 0]
            ply_, envs, next_plies = play_ply(game, envs, action, plies, reset_key)
            row = Rows(obs=obs, legal=legal, action=action, logp=logp, value=value, reward=ply_.reward,
                       done=ply_.done, sign=ply_.sign)
            n, total = finished_games(ply_, plies)
            return (envs, next_plies, finished + n, lengths + total), row

        start = (envs, plies, jnp.int32(0), jnp.int32(0))
        (envs, plies, finished, lengths), rows = jax.lax.scan(ply, start, jax.random.split(key, self.cfg.steps))
        _, last_value = self._apply(params, jax.vmap(game.observe)(envs), envs.legal_action_mask)
        return rows, last_value, envs, plies, finished, lengths

    def _loss(self, params, mb: Rows, adv: Array, target: Array):
        cfg = self.cfg
        logits, value = self._apply(params, mb.obs, mb.legal)
        norm = (adv - adv.mean()) / (adv.std() + 1e-8)
        loss_fn = partial(losses.ppo_loss, clip=cfg.clip, c1=cfg.value_weight, c2=cfg.entropy_weight,
                          value_loss="squared")
        total, aux = jax.vmap(loss_fn)(logits, mb.legal, mb.action, mb.logp, norm, value, target)
        loss = total.mean()
        return loss, {"train/loss": loss, "train/policy_loss": aux["policy_loss"].mean(),
                      "train/value_loss": aux["value_loss"].mean(), "train/entropy": aux["entropy"].mean(),
                      "train/approx_kl": jnp.mean(mb.logp - aux["log_prob"]),
                      "train/clip_fraction": aux["clipped"].mean()}

    def _collect_and_update(self, state: SelfPlayPPOState, _):
        cfg = self.cfg
        key, play_key, epoch_key = jax.random.split(state.key, 3)
        rows, last_value, envs, plies, finished, lengths = self._collect(state.params, state.envs, state.plies, play_key)
        gae = jax.vmap(partial(losses.negamax_gae, gamma=cfg.gamma, lam=cfg.gae_lambda))  # over the game columns
        adv = gae(rows.reward.T, rows.value.T, rows.sign.T, rows.done.T, last_value=last_value).T
        target = adv + rows.value
        n = cfg.envs * cfg.steps
        flat = jax.tree.map(lambda x: x.reshape((n,) + x.shape[2:]), (rows, adv, target))
        grad = jax.grad(self._loss, has_aux=True)

        def minibatch(carry, index):
            params, opt_state = carry
            mb, a, t = jax.tree.map(lambda x: x[index], flat)
            grads, metrics = grad(params, mb, a, t)
            return apply_gradients(self.tx, params, opt_state, grads), metrics

        def epoch(carry, k):
            order = jax.random.permutation(k, n).reshape(cfg.minibatches, cfg.minibatch_size)
            return jax.lax.scan(minibatch, carry, order)

        (params, opt_state), m = jax.lax.scan(epoch, (state.params, state.opt_state),
                                              jax.random.split(epoch_key, cfg.epochs))
        state = state.replace(params=params, opt_state=opt_state, key=key, envs=envs, plies=plies,
                              updates=state.updates + cfg.epochs * cfg.minibatches, episodes=state.episodes + finished)
        metrics = {k: v.mean() for k, v in m.items()}
        metrics["selfplay/finished"] = finished.astype(jnp.float32)
        metrics["selfplay/length_sum"] = lengths.astype(jnp.float32)
        return state, metrics

    def _chunk(self, state: SelfPlayPPOState, units: int | None = None):
        """``collects_per_eval`` collections (``units``: that many)."""
        length = self.cfg.collects_per_eval if units is None else units
        state, m = jax.lax.scan(self._collect_and_update, state, None, length=length)
        finished, length_sum = m.pop("selfplay/finished").sum(), m.pop("selfplay/length_sum").sum()
        metrics = {k: v.mean() for k, v in m.items()}
        metrics["selfplay/length"] = length_sum / jnp.maximum(finished, 1.0)
        metrics["selfplay/episodes"] = state.episodes.astype(jnp.float32)
        return state, metrics
