"""REINFORCE with a learned baseline for two-player self-play (design.md §7), on every game: one config
(:class:`ReinforceConfig`), two collections (``--collect``, :class:`~c4jax.learning.onpolicy.OnPolicyConfig`);
:func:`trainer` makes the algorithm of a config and a game.

``--collect games`` (:class:`Reinforce`, the thesis): one gradient update per self-play episode (together with its mirror), each
episode used once: advantage ``G - V(s)``, Smooth-L1 value loss, the thesis'
objective ``L_policy - 0.75·L_value`` (minimised as its negative). For speed the
``games_per_collect`` episodes of an iteration are played in parallel by the
same weights and then applied one update each, in order; with the thesis'
learning rate (5e-6) the weights barely move within an iteration.

``--collect streams`` (:class:`StreamReinforce`, :mod:`c4jax.learning.onpolicy_streams`): one gradient
update per collection of ``envs x steps`` plies with the game's own rewards, on all its rows: advantage
``G - V(s)`` with ``G`` the negamax return (GAE with λ = 1, bootstrapped from the value of the state after
the collection's last ply), the same loss (Smooth-L1 of the tanh value).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import Annotated, ClassVar

import jax
import jax.numpy as jnp
import tyro

from c4jax.agents import arena
from c4jax.learning import losses, onpolicy, onpolicy_streams, ranges
from c4jax.learning.optim import apply_gradients
from c4jax.learning.train_state import TrainState


# the settings of --collect streams on a game whose kit gives none: one update per collection of 4,096 plies
STREAMS = MappingProxyType(dict(collect="streams", network="tower", envs=64, steps=64, c1=0.5, gamma=1.0,
                                learning_rate=3e-4, weight_decay=0.0, max_grad_norm=0.5, episodes_per_eval=50,
                                tower_blocks=2, tower_channels=32))
STREAMS_UPDATES = 2_000  # --total-updates of such a run


@dataclass(frozen=True)
class ReinforceConfig(onpolicy.OnPolicyConfig):
    """REINFORCE-with-baseline hyperparameters (defaults: the thesis, design.md §7, on the default game; another game's
    from its kit). With --opponent, only the learner's own moves carry a loss; the opponent's moves shape their
    returns."""

    c1: float = 0.75
    """Value-loss weight (Smooth-L1)."""
    learning_rate: float = 5e-6
    """Adam learning rate."""
    weight_decay: float = 1e-3
    """L2 penalty added to the gradient."""
    games_per_collect: int = 20
    """--collect games: episodes played in parallel by the same weights before their (sequential) updates."""
    eval_every: int = 0
    """Updates (= episodes; --collect streams: collections) between evaluations (and checkpoints), a multiple of
    --games-per-collect (--collect games); 0 = 100, the thesis' (another game's kit gives its own). Saved as
    episodes_per_eval."""
    episodes_per_eval: Annotated[int, tyro.conf.Suppress] = 100
    """Updates between evaluations, which --eval-every sets."""

    RANGES: ClassVar[dict] = {
        "c1": ranges.NON_NEGATIVE, "learning_rate": ranges.POSITIVE, "weight_decay": ranges.NON_NEGATIVE,
        "games_per_collect": ranges.ONE_OR_MORE, "eval_every": ranges.at_least(0, "(0 = 100)"),
        "episodes_per_eval": ranges.ONE_OR_MORE,
    }

    SMOKE: ClassVar[dict] = {"width": 16, "games_per_collect": 5, "episodes_per_eval": 10, "total_updates": 10}
    STREAMS_SMOKE: ClassVar[dict] = {"envs": 4, "steps": 8, "episodes_per_eval": 1, "tower_blocks": 1,
                                     "tower_channels": 4, "total_updates": 2}

    def __post_init__(self):
        super().__post_init__()
        if not ranges.checking():
            return
        ranges.eval_every_to_units(self, "episodes_per_eval", 1, "update")
        if not self.streams and self.episodes_per_eval % self.games_per_collect:
            raise ValueError(f"--eval-every must be a multiple of the {self.games_per_collect} updates of one "
                             f"iteration (--games-per-collect), got {self.episodes_per_eval}")


    @property
    def smoke(self) -> dict:
        """``--preset smoke``'s sizes for this config's collection (:func:`c4jax.learning.config.smoke_config`)."""
        return self.STREAMS_SMOKE if self.streams else self.SMOKE


def trainer(cfg: ReinforceConfig, game, freeze_conv: bool = True):
    """The REINFORCE algorithm of ``cfg``'s collection on ``game``: :class:`Reinforce` (whole games, on a game
    whose kit says the CNET reads its boards) or :class:`StreamReinforce`; ``ValueError`` when the game cannot
    take it."""
    if cfg.streams:
        return StreamReinforce(cfg, game, freeze_conv)
    onpolicy.check_games_collection(game)
    return Reinforce(cfg, freeze_conv=freeze_conv)


class Reinforce(onpolicy.OnPolicyAlgorithm):
    """REINFORCE on the whole-games collection (the thesis, design.md §7)."""

    name = "reinforce"

    def __init__(self, cfg: ReinforceConfig, freeze_conv: bool = True):
        self.cfg = cfg
        self.strategies = onpolicy.Strategies.of(cfg)
        self.batch_sizes = {"--games-per-collect": cfg.games_per_collect}  # an update (one episode) is not split
        super().__init__(cfg.learning_rate, cfg.weight_decay, freeze_conv)
        self.update_step, self.update_step_name = cfg.games_per_collect, "iteration (--games-per-collect)"
        self.eval_updates = cfg.episodes_per_eval

    def chunk_of(self, units: int):
        return jax.jit(partial(self._chunk, units=units))

    def _iteration(self, state: TrainState, _):
        cfg = self.cfg
        key, start_key, play_key = jax.random.split(state.key, 3)
        starts = arena.random_initial_states(start_key, cfg.games_per_collect)
        batch, lengths = onpolicy.collect_mixed(
            state.params, play_key, starts, cfg.opponent_agent, cfg.opponent_games(cfg.games_per_collect),
            gamma=cfg.gamma, width=cfg.width, backprop_n=cfg.reward_backprop_n, strategies=self.strategies)
        params, opt_state, m = onpolicy.reinforce_updates(state.params, state.opt_state, batch, tx=self.tx,
                                                          c1=cfg.c1, width=cfg.width)
        new = state.replace(params=params, opt_state=opt_state, key=key,
                             updates=state.updates + cfg.games_per_collect,
                             episodes=state.episodes + cfg.games_per_collect)
        m = {k: v.mean() for k, v in m.items() if k != "train/samples"}
        m["selfplay/length"] = lengths.mean()
        return new, m

    def _chunk(self, state: TrainState, units: int | None = None):
        """``episodes_per_eval`` episodes (``units``: that many iterations of ``games_per_collect``)."""
        steps = self.cfg.episodes_per_eval // self.cfg.games_per_collect if units is None else units
        state, m = jax.lax.scan(self._iteration, state, None, length=steps)
        metrics = {k: v.mean().astype(jnp.float32) for k, v in m.items()}
        metrics["selfplay/episodes"] = state.episodes.astype(jnp.float32)
        return state, metrics


class StreamReinforce(onpolicy_streams.StreamsAlgorithm):
    """REINFORCE with baseline on per-ply streams of ``game`` (``--collect streams``): one update per collection."""

    name = "reinforce"

    def __init__(self, cfg: ReinforceConfig, game, freeze_conv: bool = False):
        super().__init__(cfg, game, freeze_conv)
        self.update_step, self.update_step_name = 1, "collection"
        self.eval_updates = cfg.episodes_per_eval

    def _loss(self, params, rows: onpolicy_streams.Rows, returns):
        logits, value = self._apply(params, rows.obs, rows.legal)
        total, aux = jax.vmap(partial(losses.reinforce_loss, c1=self.cfg.c1))(logits, rows.legal, rows.action,
                                                                              returns, value)
        loss = total.mean()
        return loss, {"train/loss": loss, "train/policy_loss": aux["policy_loss"].mean(),
                      "train/value_loss": aux["value_loss"].mean(), "train/entropy": aux["entropy"].mean(),
                      "train/advantage": aux["advantage"].mean()}

    def _iteration(self, state: onpolicy_streams.StreamState, _):
        """One collection and one gradient step on all its rows."""
        key, play_key = jax.random.split(state.key)
        rows, last_value, envs, plies, finished, lengths = self._collect(state.params, state.envs, state.plies, play_key)
        _, returns = self._advantages(rows, last_value, 1.0)
        flat = jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), (rows, returns))
        grads, m = jax.grad(self._loss, has_aux=True)(state.params, *flat)
        params, opt_state = apply_gradients(self.tx, state.params, state.opt_state, grads)
        state = state.replace(params=params, opt_state=opt_state, key=key, envs=envs, plies=plies,
                              updates=state.updates + 1, episodes=state.episodes + finished)
        m["selfplay/finished"] = finished.astype(jnp.float32)
        m["selfplay/length_sum"] = lengths.astype(jnp.float32)
        return state, m

    def _chunk(self, state: onpolicy_streams.StreamState, units: int | None = None):
        """``episodes_per_eval`` collections (``units``: that many)."""
        length = self.cfg.episodes_per_eval if units is None else units
        state, m = jax.lax.scan(self._iteration, state, None, length=length)
        return state, self.chunk_metrics(state, m)
