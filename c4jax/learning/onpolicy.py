"""What PPO and REINFORCE share (design.md §7): the fields of their configs (:class:`OnPolicyConfig`) and the
algorithm glue around a network and a collection (:class:`OnPolicy`). PPO (:mod:`c4jax.learning.ppo`) and
REINFORCE (:mod:`c4jax.learning.reinforce`) each write their loss and their update once, on the training rows
a collection hands them (:class:`~c4jax.learning.onpolicy_games.Samples`).

How self-play makes those rows is a strategy object chosen by ``--collect``, as DQN's is:

- ``games``: :class:`c4jax.learning.onpolicy_games.GameCollection`, the thesis' whole self-play games (the kit's
  random starts, shaped reward back-propagated over the game, and mirror, where the kit has them), their
  returns and advantages computed when the games are over;
- ``streams``: :class:`c4jax.learning.onpolicy_streams.StreamCollection`, ``envs`` games side by side that
  restart as soon as they end, ``steps`` plies per collection, the game's own rewards and GAE(λ).

Both play every game of the protocol. A collection has ``keys`` (how many PRNG keys its ``collect`` takes),
``weighted`` (whether its rows weigh by ``valid``, else all alike), ``init(tx, key, params)`` (the training
state), ``collect(state, keys, gae_lambda) -> (state, samples [G, R], stats)`` (G groups of R rows: the
games, each followed by its mirror, or one group of the whole collection), ``forward(params, obs, legal) ->
(logits, legal, value)`` (the network as the losses read it), ``minibatches(key, valid, size)``,
``buffer(samples)`` (PPO's buffer of the flat rows) and ``chunk_metrics(state, metrics)``, and the
conventions of PPO's loss on its rows (``value_loss``, ``normalise_advantages``, ``kl``).
"""

from __future__ import annotations


import jax
import jax.numpy as jnp
from jax import Array

from c4jax import games
from c4jax.agents.network_search import AlphaZeroAgent
from c4jax.games import base as game_base
from c4jax.learning.algorithm import Algorithm
from c4jax.learning.onpolicy_games import GameCollection
from c4jax.learning.onpolicy_streams import StreamCollection
from c4jax.learning.settings.onpolicy import COLLECTIONS as COLLECTIONS
from c4jax.learning.settings.onpolicy import GAMES_ONLY as GAMES_ONLY
from c4jax.learning.settings.onpolicy import NETWORKS as NETWORKS
from c4jax.learning.settings.onpolicy import OnPolicyConfig as OnPolicyConfig
from c4jax.learning.optim import adam_l2, make_optimizer, with_clipping
from c4jax.nets import tower as towers


def weighted_mean(x: Array, weights: Array | None) -> Array:
    """The mean of ``x`` over the rows of positive ``weights`` weighted by them (``None``: the plain mean)."""
    if weights is None:
        return x.mean()
    return jnp.sum(jnp.where(weights > 0, x, 0.0) * weights) / jnp.maximum(jnp.sum(weights), 1.0)


class OnPolicy(Algorithm):
    """The :class:`~c4jax.learning.algorithm.Algorithm` glue of PPO and REINFORCE on ``game``: the network of
    ``cfg.network`` (a CNET of ``cfg.width``, which the loop makes, or a residual tower of its own), Adam with
    L2 and optional gradient clipping, and the collection of ``cfg.collect`` (``self.collection``), which
    owns the training state. The subclass sets ``name`` and ``_chunk(state, units=None)``; ``ValueError``
    when ``cfg`` does not fit the game."""

    heads = "two"
    output = "policy"
    default_mode = "sto"  # the evaluations and the saved agent sample the policy

    def __init__(self, cfg: OnPolicyConfig, game, freeze_conv: bool = True):
        self.cfg, self.game = cfg, game_base.check_game(game)
        self.tower = cfg.tower if cfg.network == "tower" else ()
        if not self.tower and not games.kit_of(game).cnet:
            raise ValueError(f"--network cnet: the CNET does not read {game.id}'s observations; train the residual "
                             "tower (--network tower)")
        self.net = towers.two_headed(game, cfg.width, self.tower)
        if self.tower:
            tx = adam_l2(cfg.learning_rate, cfg.weight_decay)
            self.network_meta = {"tower": list(self.tower)}
            # the raw network; name@N searches with it, with proven values (the project's PUCT search; why:
            # design.md "Checkers agents")
            self.agent_meta = {"search": {"simulations": 0, "solve": True}}
        else:  # a CNET: the loop makes it (--init-from), the conv block optionally frozen
            tx = make_optimizer(cfg.learning_rate, cfg.weight_decay, freeze_conv)
        self.tx = with_clipping(tx, cfg.max_grad_norm)
        self.collection = (StreamCollection if cfg.streams else GameCollection)(self)
        self.chunk = jax.jit(self._chunk)
        self.compile_key = None if cfg.opponent_agent is not None else (type(self), cfg, game, freeze_conv)

    def init(self, key: Array, params):
        return self.collection.init(self.tx, key, params)

    def chunk_of(self, units: int):
        return jax.jit(lambda state: self._chunk(state, units=units))

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

    def _chunk(self, state, units: int | None = None):  # pragma: no cover - abstract
        raise NotImplementedError
