"""REINFORCE's settings (:class:`ReinforceConfig`), also of its ``--collect streams`` runs."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Annotated, ClassVar

import tyro

from c4jax.learning import config, ranges
from c4jax.learning.settings import onpolicy

# the settings of --collect streams on a game whose kit gives none: one update per collection of 4,096 plies
STREAMS = MappingProxyType(dict(collect="streams", network="tower", envs=64, steps=64, c1=0.5, gamma=1.0,
                                learning_rate=3e-4, weight_decay=0.0, max_grad_norm=0.5, episodes_per_eval=50,
                                tower_blocks=2, tower_channels=32))
STREAMS_UPDATES = 2_000  # --total-updates of such a run


@dataclass(frozen=True)
class ReinforceConfig(onpolicy.OnPolicyConfig):
    """REINFORCE-with-baseline hyperparameters: the thesis' by default, a trainer command's from its --preset
    and --game, which explicit flags override. With --opponent, only the learner's own moves carry a loss; the
    opponent's moves shape their returns."""

    c1: float = 0.75
    """Value-loss weight (Smooth-L1)."""
    learning_rate: float = 5e-6
    """Adam learning rate."""
    weight_decay: float = 1e-3
    """L2 penalty added to the gradient."""
    games_per_collect: int = 20
    """--collect games: episodes played in parallel by the same weights before their (sequential) updates."""
    eval_every: int = 0
    """Updates (= episodes; --collect streams: collections) between evaluations (and checkpoints); 0 = 100, the
    thesis' (another game's kit gives its own). --collect games: one that is not a multiple of --games-per-collect
    ends each interval with a collection whose first games alone make updates. Saved as episodes_per_eval."""
    episodes_per_eval: Annotated[int, tyro.conf.Suppress] = 100
    """Updates between evaluations, which --eval-every sets."""

    RANGES: ClassVar[dict] = {
        "c1": ranges.NON_NEGATIVE, "learning_rate": ranges.POSITIVE, "weight_decay": ranges.NON_NEGATIVE,
        "games_per_collect": ranges.ONE_OR_MORE, "eval_every": ranges.Range(0, note="(0 = 100)"),
        "episodes_per_eval": ranges.ONE_OR_MORE,
    }

    SMOKE: ClassVar[dict] = {"width": 16, "games_per_collect": 5, "episodes_per_eval": 10, "total_updates": 10}
    STREAMS_SMOKE: ClassVar[dict] = {"envs": 4, "steps": 8, "episodes_per_eval": 1, "tower_blocks": 1,
                                     "tower_channels": 4, "total_updates": 2}

    def normalised(self) -> "ReinforceConfig":
        """This config with ``eval_every`` given as ``episodes_per_eval`` (:func:`c4jax.learning.config.settle`)."""
        return config.eval_in_units(self, "episodes_per_eval", 1)

    @property
    def eval_updates(self) -> int:
        """The updates between evaluations."""
        return self.eval_every or self.episodes_per_eval

