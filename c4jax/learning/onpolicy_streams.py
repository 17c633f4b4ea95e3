"""The per-ply streams collection of PPO and REINFORCE (``--collect streams``) for any game, on its own rewards.

``envs`` games run side by side, each restarting when it ends, so a collection is ``envs x steps``
plies. Every ply is a row from its mover's point of view; advantages are the negamax GAE(λ)
(:func:`c4jax.learning.losses.negamax_gae`, ``sign = +1`` when the same player moves next) bootstrapped
from the state after the last ply, and the value target is ``A_t + V(s_t)``. A game cut by its own ply
cap is a draw.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import struct
from jax import Array

from c4jax.agents.policy import masked_logits
from c4jax.learning import losses
from c4jax.learning.onpolicy_games import Samples
from c4jax.learning.streams import finished_games, play_ply
from c4jax.learning.train_state import TrainState


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
class StreamState(TrainState):
    envs: Any  # game states [E], mid-game
    plies: Array  # int32[E]: plies played in each running game


class StreamCollection:
    """Per-ply streams of ``algo.game`` (:class:`c4jax.learning.onpolicy.OnPolicy`)."""

    keys = 1  # the plies'
    weighted = False  # every row is valid and weighs the same
    value_loss, normalise_advantages, kl = "squared", True, "k1"  # PPO's loss on these rows

    def __init__(self, algo):
        self.cfg, self.game, self.net = algo.cfg, algo.game, algo.net

    def init(self, tx, key: Array, params) -> StreamState:
        env_key, key = jax.random.split(key)
        envs, plies = self.initial_games(env_key, self.cfg.envs)
        return StreamState.create(params, tx, key, envs=envs, plies=plies)

    def initial_games(self, key: Array, envs: int) -> tuple[Any, Array]:
        """``envs`` fresh games and their ply counters."""
        return jax.vmap(self.game.init)(jax.random.split(key, envs)), jnp.zeros(envs, jnp.int32)

    def forward(self, params, obs: Array, legal: Array) -> tuple[Array, Array, Array]:
        """``(masked logits, legal, tanh value)`` of observations [..., *obs] with legal masks [..., A]."""
        lead = legal.shape[:-1]
        flat = obs.reshape((-1,) + obs.shape[len(lead):])
        logits, value = self.net.apply({"params": params}, flat)
        logits = masked_logits(logits.reshape(lead + logits.shape[-1:]), legal)
        return logits, legal, jnp.tanh(value.reshape(lead))

    def play(self, params, envs, plies: Array, key: Array):
        """``steps`` plies of every running game: ``(rows [T, E], V of the states after them, the games,
        their ply counters, games finished, their total length)``."""
        game = self.game

        def ply(carry, k):
            envs, plies, finished, lengths = carry
            act_key, reset_key = jax.random.split(k)
            obs = jax.vmap(game.observe)(envs)
            legal = envs.legal_action_mask
            logits, _, value = self.forward(params, obs, legal)
            action = jax.random.categorical(act_key, logits).astype(jnp.int32)
            logp = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], axis=-1)[:, 0]
            ply_, envs, next_plies = play_ply(game, envs, action, plies, reset_key)
            row = Rows(obs=obs, legal=legal, action=action, logp=logp, value=value, reward=ply_.reward,
                       done=ply_.done, sign=ply_.sign)
            n, total = finished_games(ply_, plies)
            return (envs, next_plies, finished + n, lengths + total), row

        start = (envs, plies, jnp.int32(0), jnp.int32(0))
        (envs, plies, finished, lengths), rows = jax.lax.scan(ply, start, jax.random.split(key, self.cfg.steps))
        last_value = self.forward(params, jax.vmap(game.observe)(envs), envs.legal_action_mask)[2]
        return rows, last_value, envs, plies, finished, lengths

    def collect(self, state: StreamState, keys, gae_lambda: float = 1.0):
        """``(state advanced, samples [1, T·E] with GAE(``gae_lambda``) advantages and targets, metrics)``."""
        (play_key,) = keys
        rows, last_value, envs, plies, finished, lengths = self.play(state.params, state.envs, state.plies, play_key)
        gae = jax.vmap(lambda r, v, s, d, last: losses.negamax_gae(r, v, s, d, gamma=self.cfg.gamma, lam=gae_lambda,
                                                                  last_value=last))
        adv = gae(rows.reward.T, rows.value.T, rows.sign.T, rows.done.T, last_value).T
        samples = Samples(obs=rows.obs, legal=rows.legal, action=rows.action, logp=rows.logp, value=rows.value,
                          reward=rows.reward, done=rows.done, advantage=adv, target=adv + rows.value,
                          valid=jnp.ones(rows.action.shape, jnp.bool_))
        samples = jax.tree.map(lambda x: x.reshape((1, -1) + x.shape[2:]), samples)
        state = state.replace(envs=envs, plies=plies, episodes=state.episodes + finished)
        return state, samples, {"selfplay/finished": finished.astype(jnp.float32),
                                "selfplay/length_sum": lengths.astype(jnp.float32)}

    @staticmethod
    def buffer(samples: Samples) -> tuple[Samples, dict]:
        """PPO's buffer: the whole collection."""
        return samples, {}

    @staticmethod
    def minibatches(key: Array, valid: Array, size: int) -> tuple[Array, None]:
        """``(index [N / size, size], None)``: a permutation of the N rows."""
        n = valid.shape[0]
        return jax.random.permutation(key, n).reshape(n // size, size), None

    @staticmethod
    def chunk_metrics(state: TrainState, m: dict) -> dict:
        """A chunk's metrics: means, and the mean length of the finished games (NaN when none finished)."""
        finished, length_sum = m.pop("selfplay/finished").sum(), m.pop("selfplay/length_sum").sum()
        metrics = {k: v.mean() for k, v in m.items()}
        metrics["selfplay/length"] = jnp.where(finished > 0, length_sum / jnp.maximum(finished, 1.0), jnp.nan)
        metrics["selfplay/episodes"] = state.episodes.astype(jnp.float32)
        return metrics
