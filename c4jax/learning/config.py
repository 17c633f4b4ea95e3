"""The hyperparameters every self-play RL trainer shares, the training presets, and the one check of a config.

A preset names field values: ``"thesis"`` (design.md §7, the defaults) and ``"published"`` (the
published code's differences, design.md §7a); ``"smoke"`` shrinks a run to a pipeline check. Configs
are frozen data; :func:`validate` checks one and :func:`settle` returns the config a trainer runs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from c4jax import games
from c4jax.learning import ranges
from c4jax.learning.settings.opponent import OpponentConfig

# design.md §7a, one entry per difference; each name is a field of the config it concerns
# (SelfPlayConfig, DQNConfig, PPOConfig or loop.LoopConfig).
PRESETS: dict[str, dict[str, Any]] = {
    # the thesis text: every switch off (the config classes' defaults)
    "thesis": {
        "reward_backprop": "per_player",
        "replace_draws": False,
        "old_best_start": -1.0,
        "revert_at_equal": False,
        "target_online": False,
        "target_mirror_avg": False,
        "target_unmasked": False,
        "eps_per_update": False,
        "selfplay_mirror_avg": False,
        "reset_target_on_old": False,
        "td_advantage": False,
        "explore": 0.0,
        "unmasked_log_probs": False,
        "buffers_per_eval": 1,
    },
    "published": {
        # every trainer
        "reward_backprop": "segments",
        "replace_draws": True,
        # the host loop's old-network rule
        "old_best_start": 0.5,
        "revert_at_equal": True,
        # DQN
        "target_online": True,
        "target_mirror_avg": True,
        "target_unmasked": True,
        "eps_per_update": True,
        "selfplay_mirror_avg": True,  # PPO too
        "reset_target_on_old": True,
        # PPO
        "td_advantage": True,
        "explore": 0.10,
        "unmasked_log_probs": True,
        "buffers_per_eval": 5,
    },
}
PRESET_NAMES = tuple(PRESETS)


def with_preset(cfg, name: str):
    """``cfg`` (a frozen config dataclass) with the fields of preset ``name`` that it has."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(PRESET_NAMES)}")
    names = {f.name for f in dataclasses.fields(cfg)}
    return dataclasses.replace(cfg, **{k: v for k, v in PRESETS[name].items() if k in names})


SMOKE = "smoke"
"""``--preset smoke``: every trainer's smallest run, a pipeline check (:func:`smoke_config`)."""


def configs(cfg) -> list:
    """``cfg`` and the dataclasses among its fields (a trainer script's config of configs), in field order."""
    return [cfg] + [getattr(cfg, f.name) for f in dataclasses.fields(cfg) if dataclasses.is_dataclass(getattr(cfg, f.name))]


def replace_in(cfg, change):
    """``cfg`` with ``change`` (config -> config) applied to each of its dataclass fields and then to it."""
    nested = {f.name: change(getattr(cfg, f.name)) for f in dataclasses.fields(cfg)
              if dataclasses.is_dataclass(getattr(cfg, f.name))}
    return change(dataclasses.replace(cfg, **nested))


def validate(cfg) -> None:
    """Check ``cfg`` (a config or a config of configs): each config's ``RANGES``, then its ``check()``.
    ``ValueError("--flag ...")`` for the first wrong setting. Reads no file."""
    for c in configs(cfg)[1:] + configs(cfg)[:1]:
        ranges.check(c)
        if hasattr(c, "check"):
            c.check()


def settle(cfg):
    """``cfg`` validated, with each config's ``normalised()`` applied."""
    validate(cfg)
    return replace_in(cfg, lambda c: c.normalised() if hasattr(c, "normalised") else c)


def eval_in_units(cfg, unit_field: str, updates_per_unit: int):
    """``cfg`` with an ``eval_every`` that is a multiple of ``updates_per_unit`` moved to ``unit_field`` (in
    units) and set to 0; any other ``eval_every`` is kept."""
    if not cfg.eval_every or cfg.eval_every % updates_per_unit:
        return cfg
    return dataclasses.replace(cfg, **{unit_field: cfg.eval_every // updates_per_unit, "eval_every": 0})


def smoke_sizes(c) -> dict:
    """A config's ``--preset smoke`` sizes: its ``smoke`` property, else its class's ``SMOKE``."""
    return getattr(c, "smoke", None) or getattr(type(c), "SMOKE", {})


def smoke_config(cfg):
    """``cfg`` (a config or a config of configs) with every config's smoke sizes (each size goes to the config
    with that field), writing to ``runs/smoke/...`` with ``overwrite``, selecting by a fixed opponent."""
    sizes = [dict(smoke_sizes(c)) for c in configs(cfg)]

    def shrink(c):
        names = {f.name for f in dataclasses.fields(c)}
        own = dict(smoke_sizes(c))
        changes = {k: v for k, v in own.items() if k in names}
        for other in sizes:  # another config's sizes that fit this one
            changes.update({k: v for k, v in other.items() if k in names and k not in own})
        if "out" in names:
            changes.update(out=str(Path("runs", SMOKE, *Path(c.out).parts[1:])), overwrite=True)
        if "select_by" in names:  # only the fixed opponents: the kit's reference agent, else Random
            changes.update(select_by=games.card_of(c.game).reference or "random")
        return dataclasses.replace(c, **changes)

    nested = {f.name: shrink(getattr(cfg, f.name)) for f in dataclasses.fields(cfg)
              if dataclasses.is_dataclass(getattr(cfg, f.name))}
    return dataclasses.replace(shrink(cfg), **nested)


@dataclass(frozen=True)
class SelfPlayConfig(OpponentConfig):
    """Fields common to the RL trainers' configs (each trainer adds its own; defaults: the thesis)."""

    gamma: float = 0.95
    """Discount of the turn-based targets (the next state is the opponent's: its value is subtracted)."""
    reward_backprop_n: float = 3.0
    """Exponent n of the reward back-propagation r_t = r_T * (t / T)^n."""
    reward_backprop: str = "per_player"
    """'per_player' (the thesis: each player's own moves 1..T) or 'segments' (the published code:
    absolute turn numbers, the game split at every ±1 shaped reward, the loser's turn taken as T+1,
    zero rewards after the first split left at 0)."""
    replace_draws: bool = False
    """Discard drawn training games and replace each by a game from the empty board (the published code)."""
    width: int = 128
    """CNET width (filters and dense units)."""

    RANGES: ClassVar[dict] = {"gamma": ranges.UNIT, "reward_backprop_n": ranges.NON_NEGATIVE, "width": ranges.ONE_OR_MORE}

    def check(self) -> None:
        """``ValueError`` for settings that do not fit together."""
        super().check()
        if self.reward_backprop not in ("per_player", "segments"):
            raise ValueError(f"--reward-backprop must be 'per_player' or 'segments', got {self.reward_backprop!r}")
