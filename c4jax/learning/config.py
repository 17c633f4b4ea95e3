"""The hyperparameters every self-play RL trainer shares (DQN, REINFORCE, PPO), and the two
training presets.

A *preset* names a set of field values: ``"thesis"`` is the thesis text (design.md §7, every
switch off: the config classes' defaults) and ``"published"`` turns on each difference of the
published training code (design.md §7a). ``with_preset(cfg, name)`` applies a preset to any config dataclass
(the fields it has); ``preset_from_argv`` reads ``--preset NAME`` from a command line so that a
script can make the preset its defaults and let every explicit flag override them. A trainer
turns its flags into strategy functions once, when it is made (``onpolicy.Strategies``,
``dqn.Strategies``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Sequence

from c4jax.learning.opponent import OpponentConfig

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


def preset_from_argv(argv: Sequence[str], flag: str = "--preset", default: str = "thesis") -> str:
    """The value of ``flag`` in a command line (``--preset X`` or ``--preset=X``; the last one
    wins), ``default`` when absent. An unknown name is returned as it is, for the CLI parser
    to reject with its list of choices."""
    name = default
    for i, arg in enumerate(argv):
        if arg == flag and i + 1 < len(argv):
            name = argv[i + 1]
        elif arg.startswith(flag + "="):
            name = arg.split("=", 1)[1]
    return name



def game_cli(argv: Sequence[str], connect_four, other_defaults, prog: str | None = None):
    """Parse a trainer script's command line whose settings depend on ``--game``: Connect Four's
    with ``connect_four(argv)``, another game's (tyro) over ``other_defaults(game)``, a frozen config
    of configs. ``--game`` is read first so that the other flags' defaults (and ``--help``) are that
    game's. ``prog``: the command named in the usage line (default: the script's file name)."""
    import tyro

    from c4jax import games

    argv = list(argv)
    game = preset_from_argv(argv, flag="--game", default=games.DEFAULT)
    if game == games.DEFAULT:
        return connect_four(argv)
    default = other_defaults(game)
    return tyro.cli(type(default), default=default, args=argv, prog=prog, config=(tyro.conf.OmitArgPrefixes,))


def preset_cli(default, argv: Sequence[str] | None = None, prog: str | None = None):
    """Parse a trainer script's command line (tyro) over ``default``, a frozen config of configs
    with a ``preset`` field: the preset that ``--preset`` names (``default.preset`` when the command
    line names none) is applied to every sub-config first, so explicit flags override it. ``prog``: the
    command named in the usage line (default: the script's file name)."""
    import sys

    import tyro

    argv = list(sys.argv[1:] if argv is None else argv)
    name = preset_from_argv(argv, default=default.preset)
    if name in PRESETS:
        subs = {f.name: with_preset(getattr(default, f.name), name) for f in dataclasses.fields(default)
                if dataclasses.is_dataclass(getattr(default, f.name))}
        default = dataclasses.replace(default, preset=name, **subs)
    return tyro.cli(type(default), default=default, args=argv, prog=prog, config=(tyro.conf.OmitArgPrefixes,))

@dataclass(frozen=True)
class SelfPlayConfig(OpponentConfig):
    """Fields common to the RL trainers' configs (each trainer adds its own; defaults: the thesis,
    docs/design.md §7)."""

    gamma: float = 0.95
    """Discount of the turn-based targets (the next state is the opponent's: its value is subtracted)."""
    reward_backprop_n: float = 3.0
    """Exponent n of the reward back-propagation r_t = r_T * (t / T)^n (docs/design.md §2)."""
    reward_backprop: str = "per_player"
    """'per_player' (the thesis, design.md §2: each player's own moves 1..T) or 'segments' (the published
    code, design.md §7a: absolute turn numbers, the game split at every ±1 shaped reward, the loser's turn
    taken as T+1, zero rewards after the first split left at 0)."""
    replace_draws: bool = False
    """Discard drawn training games and replace each by a game from the empty board (the published code,
    design.md §7a)."""
    width: int = 128
    """CNET width (filters and dense units)."""

    def __post_init__(self):
        super().__post_init__()
        if self.reward_backprop not in ("per_player", "segments"):
            raise ValueError(f"--reward-backprop must be 'per_player' or 'segments', got {self.reward_backprop!r}")
