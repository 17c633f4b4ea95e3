"""REINFORCE with a learned baseline for two-player self-play (design.md §7).

One gradient update per self-play episode (together with its mirror), each
episode used once: advantage ``G - V(s)``, Smooth-L1 value loss, the thesis'
objective ``L_policy - 0.75·L_value`` (minimised as its negative). For speed the
``games_per_collect`` episodes of an iteration are played in parallel by the
same weights and then applied one update each, in order; with the thesis'
learning rate (5e-6) the weights barely move within an iteration.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Annotated, ClassVar

import jax
import jax.numpy as jnp
import tyro

from c4jax.agents import arena
from c4jax.learning import onpolicy, ranges
from c4jax.learning.config import SelfPlayConfig
from c4jax.learning.train_state import TrainState


@dataclass(frozen=True)
class ReinforceConfig(SelfPlayConfig):
    """REINFORCE-with-baseline hyperparameters (defaults: the thesis, design.md §7). With --opponent, only the
    learner's own moves carry a loss; the opponent's moves shape their returns."""

    c1: float = 0.75
    """Value-loss weight (Smooth-L1)."""
    learning_rate: float = 5e-6
    """Adam learning rate."""
    weight_decay: float = 1e-3
    """L2 penalty added to the gradient."""
    games_per_collect: int = 20
    """Episodes played in parallel by the same weights before their (sequential) updates."""
    eval_every: int = 0
    """Updates (= episodes) between evaluations (and checkpoints), a multiple of --games-per-collect;
    0 = 100, the thesis'. Saved as episodes_per_eval."""
    episodes_per_eval: Annotated[int, tyro.conf.Suppress] = 100
    """Episodes (= updates) between evaluations, which --eval-every sets."""

    RANGES: ClassVar[dict] = {
        "c1": ranges.NON_NEGATIVE, "learning_rate": ranges.POSITIVE, "weight_decay": ranges.NON_NEGATIVE,
        "games_per_collect": ranges.ONE_OR_MORE, "eval_every": ranges.at_least(0, "(0 = 100)"),
        "episodes_per_eval": ranges.ONE_OR_MORE,
    }

    SMOKE: ClassVar[dict] = {"width": 16, "games_per_collect": 5, "episodes_per_eval": 10, "total_updates": 10}

    def __post_init__(self):
        super().__post_init__()
        if not ranges.checking():
            return
        ranges.eval_every_to_units(self, "episodes_per_eval", 1, "update")
        if self.episodes_per_eval % self.games_per_collect:
            raise ValueError(f"--eval-every must be a multiple of the {self.games_per_collect} updates of one "
                             f"iteration (--games-per-collect), got {self.episodes_per_eval}")


class Reinforce(onpolicy.OnPolicyAlgorithm):
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
