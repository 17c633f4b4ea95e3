"""The settings that REINFORCE and PPO share (:class:`OnPolicyConfig`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from c4jax.learning import ranges
from c4jax.learning.settings.selfplay import SelfPlayConfig

COLLECTIONS = ("games", "streams")
NETWORKS = ("cnet", "tower")
# the whole-games collection's switches (design.md §7a), with the values that leave them off
GAMES_ONLY = {"reward_backprop": "per_player", "replace_draws": False, "opponent": "self"}


@dataclass(frozen=True)
class OnPolicyConfig(SelfPlayConfig):
    """The fields REINFORCE and PPO share (defaults: the thesis on the default game; a game's kit
    gives its own, ``GameKit.defaults``)."""

    collect: str = "games"
    """How self-play makes training rows: 'games' (the thesis: whole games from the kit's random starts, with its
    shaped reward back-propagated, each game followed by its mirror where the kit has one) or 'streams' (--envs
    games side by side, --steps plies each per collection, the game's own rewards)."""
    network: str = "cnet"
    """'cnet' (the thesis' two-headed CNET of --width; the games whose kit says it reads their boards) or
    'tower' (the residual tower of --tower-blocks and --tower-channels)."""
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

    def check(self) -> None:
        """``ValueError`` for settings that do not fit together (:func:`c4jax.learning.config.validate`)."""
        super().check()
        if self.collect not in COLLECTIONS:
            raise ValueError(f"--collect must be one of {COLLECTIONS}, got {self.collect!r}")
        if self.network not in NETWORKS:
            raise ValueError(f"--network must be one of {NETWORKS}, got {self.network!r}")
        if self.streams:
            self.refuse_games_only(GAMES_ONLY)

    @property
    def streams(self) -> bool:
        """Whether experience comes as per-ply streams (:mod:`c4jax.learning.onpolicy_streams`)."""
        return self.collect == "streams"

    @property
    def smoke(self) -> dict:
        """``--preset smoke``'s sizes for this config's collection (a subclass's ``SMOKE`` or ``STREAMS_SMOKE``)."""
        return self.STREAMS_SMOKE if self.streams else self.SMOKE

    @property
    def tower(self) -> tuple[int, int]:
        return (self.tower_blocks, self.tower_channels)

    def refuse_games_only(self, off: dict) -> None:
        """``ValueError`` naming the fields of ``off`` (``{field: value when off}``) that are on."""
        on = [f"--{k.replace('_', '-')}" for k, v in off.items() if getattr(self, k) != v]
        if on:
            raise ValueError(f"{', '.join(on)}: the whole-games collection's (--collect games; --preset published "
                             "turns them on, --preset thesis off); --collect streams plays the game's own rewards "
                             "without them")

