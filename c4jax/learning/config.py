"""The hyperparameters every self-play RL trainer shares (DQN, REINFORCE, PPO), and the two
training presets.

A *preset* names a set of field values: ``"thesis"`` is the thesis text (design.md §7, every
switch off: the config classes' defaults) and ``"published"`` turns on each difference of the
published training code (design.md §7a). ``with_preset(cfg, name)`` applies a preset to any config dataclass
(the fields it has); ``preset_from_argv`` reads ``--preset NAME`` from a command line so that a
script can make the preset its defaults and let every explicit flag override them. A trainer
turns its flags into strategy functions once, when it is made (``onpolicy_games.Strategies``,
``dqn.Strategies``).
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Sequence

from c4jax import games
from c4jax.learning import ranges
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



SMOKE = "smoke"
"""``--preset smoke``: every trainer's smallest run (a few updates, one evaluation, small networks and
batches), which checks the whole pipeline in well under a minute on a CPU; it writes to
``runs/smoke/...`` (replacing the smoke run there) unless ``--out`` says otherwise. Each config class
declares its sizes in a ``SMOKE`` class attribute (or a ``smoke`` property, :func:`smoke_sizes`);
explicit flags override them."""

# the deprecated names of --eval-every: flag -> (the config field it sets, the config's updates per unit
# of that field: an attribute name, or None for a field counted in updates)
DEPRECATED_EVAL_FLAGS: dict[str, tuple[str, str | None]] = {
    "--buffers-per-eval": ("buffers_per_eval", "buffer_updates"),
    "--iterations-per-eval": ("iterations_per_eval", "updates_per_iteration"),
    "--collects-per-eval": ("collects_per_eval", "collect_updates"),
    "--episodes-per-eval": ("episodes_per_eval", None),
}


def _configs(cfg) -> list:
    """``cfg`` and the dataclasses among its fields (a trainer script's config of configs)."""
    return [cfg] + [getattr(cfg, f.name) for f in dataclasses.fields(cfg) if dataclasses.is_dataclass(getattr(cfg, f.name))]


def _fail(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def take_smoke(argv: Sequence[str]) -> tuple[list[str], bool]:
    """``argv`` without a last ``--preset smoke`` (every ``--preset`` then dropped), and whether it had one."""
    argv = list(argv)
    if preset_from_argv(argv, default="") != SMOKE:
        return argv, False
    kept, skip = [], False
    for i, arg in enumerate(argv):
        if skip:
            skip = False
        elif arg == "--preset" and i + 1 < len(argv):
            skip = True
        elif not arg.startswith("--preset="):
            kept.append(arg)
    return kept, True


def smoke_sizes(c) -> dict:
    """A config's ``--preset smoke`` sizes: its ``smoke`` property where it has one (sizes that depend on its
    other settings, e.g. an on-policy trainer's collection), else its class's ``SMOKE``."""
    return getattr(c, "smoke", None) or getattr(type(c), "SMOKE", {})


def smoke_config(cfg):
    """``cfg`` (a trainer script's config of configs, or one config) with every config's ``SMOKE``
    sizes: each config takes its own, a size that it has no field for (a trainer's ``total_updates``)
    goes to the config that has one; the run writes to ``runs/smoke/...``, evaluates against the
    fixed opponents only and replaces the smoke run it finds there."""
    subs = _configs(cfg)
    sizes = [dict(smoke_sizes(c)) for c in subs]
    new = []
    for c, own in zip(subs, sizes):
        names = {f.name for f in dataclasses.fields(c)}
        changes = {k: v for k, v in own.items() if k in names}
        for other in sizes:  # another config's sizes that fit this one
            changes.update({k: v for k, v in other.items() if k in names and k not in own})
        if "out" in names:
            changes.update(out=str(Path("runs", SMOKE, *Path(c.out).parts[1:])), overwrite=True)
        if "select_by" in names:  # only the fixed opponents: the kit's reference agent, else Random
            changes.update(select_by=games.kit_of(c.game).reference or "random")
        with ranges.deferred():
            new.append(dataclasses.replace(c, **changes))
    top, rest = new[0], iter(new[1:])
    nested = {f.name: next(rest) for f in dataclasses.fields(cfg) if dataclasses.is_dataclass(getattr(cfg, f.name))}
    with ranges.deferred():
        return dataclasses.replace(top, **nested) if nested else top


def _replace_in(cfg, change):
    """``cfg`` with ``change`` applied to it and to each of its dataclass fields."""
    nested = {f.name: change(getattr(cfg, f.name)) for f in dataclasses.fields(cfg)
              if dataclasses.is_dataclass(getattr(cfg, f.name))}
    return change(dataclasses.replace(cfg, **nested))


def _take_deprecated(argv: list[str], default) -> tuple[list[str], dict[str, tuple[str, int]]]:
    """``argv`` without the deprecated names of --eval-every that a config of ``default`` has a field
    for, and their values: ``{field: (flag, value)}``."""
    fields = {f.name for c in _configs(default) for f in dataclasses.fields(c)}
    kept, old, i = [], {}, 0
    while i < len(argv):
        arg = argv[i]
        name, _, inline = arg.partition("=")
        if name in DEPRECATED_EVAL_FLAGS and DEPRECATED_EVAL_FLAGS[name][0] in fields:
            value = inline if inline else (argv[i + 1] if i + 1 < len(argv) else "")
            i += 1 if inline else 2
            try:
                old[DEPRECATED_EVAL_FLAGS[name][0]] = (name, int(value))
            except ValueError:
                _fail(f"{name} must be a whole number of evaluations' units, got {value!r}")
            continue
        kept.append(arg)
        i += 1
    return kept, old


def checked(cfg, deprecated: dict[str, tuple[str, int]] | None = None, eval_every_given: bool = False):
    """``cfg`` (a trainer script's config of configs, or one config) made again with every config's
    checks on (a config parsed inside :func:`c4jax.learning.ranges.deferred`), with the values of the
    deprecated names of --eval-every (``{field: (flag, value)}``) set. A value out of range ends the
    script with one ``error:`` line, exit status 2."""
    deprecated = deprecated or {}
    if deprecated and eval_every_given:
        _fail(f"give --eval-every only ({', '.join(f for f, _ in deprecated.values())} is its deprecated name)")
    try:
        subs = {}
        for f in dataclasses.fields(cfg):
            c = getattr(cfg, f.name)
            if dataclasses.is_dataclass(c):
                subs[f.name] = dataclasses.replace(c, **{k: v for k, (_, v) in deprecated.items() if hasattr(c, k)})
        cfg = dataclasses.replace(cfg, **subs, **{k: v for k, (_, v) in deprecated.items() if k in {
            f.name for f in dataclasses.fields(cfg)}})
    except ValueError as e:
        _fail(" ".join(str(e).split()))
    for c in _configs(cfg):
        for field, (name, value) in deprecated.items():
            if hasattr(c, field):
                per = DEPRECATED_EVAL_FLAGS[name][1]
                every = value * (getattr(c, per) if per else 1)
                print(f"note: {name} is deprecated: use --eval-every, in updates ({name} {value} = --eval-every "
                      f"{every})", file=sys.stderr)
    return cfg


def parse_cli(default, argv: Sequence[str], prog: str | None = None, smoke: bool = False):
    """Parse a trainer script's command line (tyro) over ``default``, a frozen config (of configs):
    ``--preset smoke`` (or ``smoke``: already taken out of ``argv``) starts from :func:`smoke_config`;
    the deprecated names of --eval-every are taken out and set after parsing; the configs are parsed
    without their checks and then made with them (:func:`checked`), so that a value out of range is one
    ``error:`` line and exit status 2, before anything compiles."""
    import tyro

    argv, smoke_flag = take_smoke(argv)
    if smoke or smoke_flag:
        default = smoke_config(default)
    argv, deprecated = _take_deprecated(argv, default)
    with ranges.deferred():
        cfg = tyro.cli(type(default), default=default, args=argv, prog=prog, config=(tyro.conf.OmitArgPrefixes,))
        if (smoke or smoke_flag) and "--overwrite" not in argv:  # a smoke run resumed keeps its files
            cfg = _replace_in(cfg, lambda c: dataclasses.replace(c, overwrite=False)
                              if getattr(c, "resume", False) else c)
    given = any(a == "--eval-every" or a.startswith("--eval-every=") for a in argv)
    return checked(cfg, deprecated, given)


def preset_cli(default, argv: Sequence[str] | None = None, prog: str | None = None):
    """Parse a trainer script's command line (:func:`parse_cli`) over ``default``, a frozen config of
    configs with a ``preset`` field: the preset that ``--preset`` names (``default.preset`` when the
    command line names none) is applied to every sub-config first, so explicit flags override it;
    ``--preset smoke`` keeps ``default.preset`` and shrinks the run (:data:`SMOKE`). ``prog``: the
    command named in the usage line (default: the script's file name)."""
    argv, smoke = take_smoke(sys.argv[1:] if argv is None else argv)
    name = preset_from_argv(argv, default=default.preset)
    if name in PRESETS:
        subs = {f.name: with_preset(getattr(default, f.name), name) for f in dataclasses.fields(default)
                if dataclasses.is_dataclass(getattr(default, f.name))}
        default = dataclasses.replace(default, preset=name, **subs)
    return parse_cli(default, argv, prog=prog, smoke=smoke)


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

    def __post_init__(self):
        super().__post_init__()
        if not ranges.checking():
            return
        if self.reward_backprop not in ("per_player", "segments"):
            raise ValueError(f"--reward-backprop must be 'per_player' or 'segments', got {self.reward_backprop!r}")
