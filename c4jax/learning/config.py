"""The training presets and the one check of a config.

A preset names field values: ``"thesis"`` (design.md §7, the defaults) and ``"published"`` (the
published code's differences, design.md §7a); ``"smoke"`` shrinks a run to a pipeline check. Configs
are frozen data; :func:`validate` checks one and :func:`settle` returns the config a trainer runs.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from c4jax.learning import ranges
from c4jax.learning.settings.loop import reference_player

# The published code's differences from the thesis text (design.md §7a), one entry per difference: each
# name is a field of the config it concerns (SelfPlayConfig, DQNConfig, PPOConfig or loop.LoopConfig),
# whose default is the thesis' setting.
PUBLISHED: dict[str, Any] = {
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
}
PRESETS = ("thesis", "published")
"""The training presets: the thesis text (every config's defaults) and the published code."""


def with_preset(cfg, name: str):
    """``cfg`` (a frozen config dataclass) with preset ``name``: the fields of :data:`PUBLISHED` that it has
    set to those values (``"published"``) or to their defaults (``"thesis"``)."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    own = [f for f in dataclasses.fields(cfg) if f.name in PUBLISHED]
    return dataclasses.replace(cfg, **{f.name: PUBLISHED[f.name] if name == "published" else f.default for f in own})


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


def smoke_config(cfg):
    """``cfg`` (a config or a config of configs) with every config's smoke sizes (its ``smoke`` dict; each size
    goes to the config with that field), writing to ``runs/smoke/...`` with ``overwrite``, selecting by a fixed
    opponent."""
    sizes = {k: v for c in configs(cfg) for k, v in getattr(c, "smoke", {}).items()}

    def shrink(c):
        names = {f.name for f in dataclasses.fields(c)}
        changes = {k: v for k, v in {**sizes, **getattr(c, "smoke", {})}.items() if k in names}
        if "out" in names:
            changes.update(out=str(Path("runs", SMOKE, *Path(c.out).parts[1:])), overwrite=True)
        if "select_by" in names:  # only the fixed opponents: the kit's reference agent, else Random
            changes.update(select_by=reference_player(c.game))
        return dataclasses.replace(c, **changes)

    return replace_in(cfg, shrink)
