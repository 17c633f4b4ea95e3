"""REINFORCE and PPO on per-ply streams of games (``--collect streams``): any two-player zero-sum game
of the protocol (:class:`c4jax.games.base.Game`), with the game's own rewards (+1 win, 0 draw, -1 loss),
as the MCTS thesis trains PPO on Checkers.

``envs`` games run side by side and each starts again as soon as it ends (purejaxrl's layout), so a
collection is always ``envs x steps`` plies, whatever the games' lengths. One network plays both
players. Every ply is a row from the point of view of its player to move (``current_player``): the
observation, the action sampled from the policy masked to the legal actions, its log-probability,
the value ``V(s)`` (the value head through ``tanh``, in [-1, 1]) and the mover's reward. The next
row belongs to the opponent unless the same player moves again (a Checkers multi-jump), so the
advantages are the negamax form of GAE(λ) (:func:`c4jax.learning.losses.negamax_gae`): with
``sign = +1`` when the same player moves next and ``-1`` otherwise,

    δ_t = r_t + γ (1 - done_t) sign_t V(s_{t+1}) - V(s_t)
    A_t = δ_t + γ λ (1 - done_t) sign_t A_{t+1}

and the value target is ``A_t + V(s_t)`` (λ = 1: the return, bootstrapped from the value of the
state after the collection's last ply). A game cut by the game's own ply cap is a draw (the game's
rules say so), not a truncated episode to bootstrap.

The network (``--network``) is the residual tower (:mod:`c4jax.nets.tower`) of AlphaZero's agents,
whose agent plays through :class:`c4jax.agents.network_search.AlphaZeroAgent` (its raw policy, ``@0``,
how it is saved; ``@N``: N simulations of search guided by its policy and value heads), or the
two-headed CNET where the game's kit says the CNET reads its observations (``--init-from`` and
``--freeze-conv`` then apply as on the whole-games collection).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import optax
from flax import struct
from jax import Array

from c4jax import games
from c4jax.agents.network_search import AlphaZeroAgent
from c4jax.agents.policy import masked_logits
from c4jax.games import base as game_base
from c4jax.learning import losses
from c4jax.learning.algorithm import Algorithm
from c4jax.learning.optim import adam_l2, make_optimizer
from c4jax.learning.streams import finished_games, play_ply
from c4jax.learning.train_state import TrainState
from c4jax.nets import tower as towers


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


def with_clipping(tx: optax.GradientTransformation, max_grad_norm: float) -> optax.GradientTransformation:
    """``tx`` after clipping the gradients to the global norm ``max_grad_norm`` (0: ``tx`` itself)."""
    return optax.chain(optax.clip_by_global_norm(max_grad_norm), tx) if max_grad_norm > 0 else tx


class StreamsAlgorithm(Algorithm):
    """The loop-facing part of REINFORCE and PPO on per-ply streams of ``game``: the network of
    ``cfg.network`` (:class:`c4jax.learning.onpolicy.OnPolicyConfig`), Adam with L2 and optional
    gradient clipping, the running games, the collection and its GAE. The subclass sets ``name`` and
    ``_chunk``."""

    heads = "two"
    output = "policy"
    default_mode = "sto"  # the evaluations and the saved agent sample the policy

    def __init__(self, cfg, game, freeze_conv: bool = False):
        game_base.check_game(game)
        self.cfg, self.game = cfg, game
        self.tower = cfg.tower if cfg.network == "tower" else ()
        if not self.tower and not games.kit_of(game).cnet:
            raise ValueError(f"--network cnet: the CNET does not read {game.id}'s observations; train the residual "
                             "tower (--network tower)")
        self.net = towers.two_headed(cfg.width, self.tower, game)
        if self.tower:
            tx = adam_l2(cfg.learning_rate, cfg.weight_decay)
            self.network_meta = {"tower": list(self.tower)}
            # the raw network; name@N searches with it, with proven values (the project's PUCT search, whose
            # cost grows about linearly in N where mctx's grows like N squared: docs/results/<game>)
            self.agent_meta = {"search": {"simulations": 0, "solve": True}}
        else:  # a CNET: the loop makes it (--init-from), the conv block optionally frozen
            tx = make_optimizer(cfg.learning_rate, cfg.weight_decay, freeze_conv)
        self.tx = with_clipping(tx, cfg.max_grad_norm)
        self.chunk = jax.jit(self._chunk)
        self.compile_key = (type(self), cfg, game, freeze_conv)

    def fresh_params(self, key: Array):
        if not self.tower:
            return None
        return towers.init_params(key, tower=self.tower, game=self.game)

    def agent_of(self, params, label: str, sampled: bool = False, symmetric: bool = False, *,
                 width: int | None = None):
        """The raw network over the legal actions, sampled from its policy or its best action: the tower
        through :class:`AlphaZeroAgent` (``width`` unused), a CNET (of ``width``, default the config's) as the
        loop's default agent."""
        if not self.tower:
            return super().agent_of(params, label, sampled, symmetric, width=width or self.cfg.width)
        return AlphaZeroAgent(params=params, label=label, tower=self.tower, num_simulations=0,
                              deterministic=not sampled, game=self.game)

    def chunk_of(self, units: int):
        return jax.jit(lambda state: self._chunk(state, units=units))

    def init(self, key: Array, params) -> StreamState:
        env_key, key = jax.random.split(key)
        envs, plies = self.initial_games(env_key, self.cfg.envs)
        return StreamState.create(params, self.tx, key, envs=envs, plies=plies)

    def initial_games(self, key: Array, envs: int) -> tuple[Any, Array]:
        """``envs`` fresh games and their ply counters."""
        return jax.vmap(self.game.init)(jax.random.split(key, envs)), jnp.zeros(envs, jnp.int32)

    def _apply(self, params, obs: Array, legal: Array) -> tuple[Array, Array]:
        """Masked logits and tanh value of observations [..., *obs] with legal masks [..., A]."""
        lead = legal.shape[:-1]
        flat = obs.reshape((-1,) + obs.shape[len(lead):])
        logits, value = self.net.apply({"params": params}, flat)
        logits = masked_logits(logits.reshape(lead + logits.shape[-1:]), legal)
        return logits, jnp.tanh(value.reshape(lead))

    def _collect(self, params, envs, plies: Array, key: Array):
        """``steps`` plies of every running game: ``(rows [T, E], V of the states after them, the games,
        their ply counters, games finished, their total length)``."""
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

    def _advantages(self, rows: Rows, last_value: Array, lam: float) -> tuple[Array, Array]:
        """``(advantages, value targets)`` [T, E]: the negamax GAE(``lam``) of every game column."""
        gae = jax.vmap(lambda r, v, s, d, last: losses.negamax_gae(r, v, s, d, gamma=self.cfg.gamma, lam=lam,
                                                                  last_value=last))
        adv = gae(rows.reward.T, rows.value.T, rows.sign.T, rows.done.T, last_value).T
        return adv, adv + rows.value

    @staticmethod
    def chunk_metrics(state: TrainState, m: dict) -> dict:
        """A chunk's metrics from its collections' stacked ones: means, and the mean length of the games
        that finished (``selfplay/finished`` and ``selfplay/length_sum`` per collection)."""
        finished, length_sum = m.pop("selfplay/finished").sum(), m.pop("selfplay/length_sum").sum()
        metrics = {k: v.mean() for k, v in m.items()}
        metrics["selfplay/length"] = length_sum / jnp.maximum(finished, 1.0)
        metrics["selfplay/episodes"] = state.episodes.astype(jnp.float32)
        return metrics
