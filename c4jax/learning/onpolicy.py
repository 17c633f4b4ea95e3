"""What PPO and REINFORCE share (design.md §7): the :class:`OnPolicy` glue around a network and a collection.

``--collect`` chooses the collection: ``games`` (:class:`~c4jax.learning.onpolicy_games.GameCollection`)
or ``streams`` (:class:`~c4jax.learning.onpolicy_streams.StreamCollection`). A collection has ``keys``,
``weighted``, ``init(tx, key, params)``, ``collect(state, keys, gae_lambda) -> (state, samples [G, R],
stats)``, ``forward(params, obs, legal) -> (logits, legal, value)``, ``minibatches(key, valid, size)``,
``buffer(samples)``, ``chunk_metrics(state, metrics)`` and PPO's loss conventions (``value_loss``,
``normalise_advantages``, ``kl``).
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
from c4jax.learning.settings.onpolicy import OnPolicyConfig
from c4jax.learning.optim import adam_l2, make_optimizer, with_clipping
from c4jax.nets import tower as towers


def weighted_mean(x: Array, weights: Array | None) -> Array:
    """The ``weights``-weighted mean of ``x`` over rows with positive weight (``None``: the plain mean)."""
    if weights is None:
        return x.mean()
    return jnp.sum(jnp.where(weights > 0, x, 0.0) * weights) / jnp.maximum(jnp.sum(weights), 1.0)


class OnPolicy(Algorithm):
    """The Algorithm glue of PPO and REINFORCE: network, optimiser and ``self.collection``. Subclasses set
    ``name`` and ``_chunk(state, units=None)``. ``ValueError`` when ``cfg`` does not fit the game."""

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
        """The raw network, sampled or greedy (a tower through :class:`AlphaZeroAgent`)."""
        if not self.tower:
            return super().agent_of(params, label, sampled, symmetric, width=width or self.cfg.width)
        return AlphaZeroAgent(params=params, label=label, tower=self.tower, num_simulations=0,
                              deterministic=not sampled, game=self.game)

    def _chunk(self, state, units: int | None = None):  # pragma: no cover - abstract
        raise NotImplementedError
