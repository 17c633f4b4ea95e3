"""The training commands: ``c4jax train NAME ARGS`` and ``python experiments/NAME.py ARGS`` (the same flags
and ``--help``; docs/guide/train.md describes the runs) for each RL trainer of :data:`TRAINERS` and for the
supervised stage (:mod:`c4jax.cli.supervised`).

A command's settings start from its defaults on ``--game`` with ``--preset`` (:func:`defaults`: the
trainer's, then the game card's flags, then the preset, :func:`with_preset`); :func:`parse` reads ``--game``
and ``--preset`` first, parses the command line once with tyro over those defaults and settles the result:
a command line it cannot take is one ``error:`` line and exit status 2 before anything is compiled. Imports
no JAX."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Literal, Mapping, Sequence

import tyro

from c4jax import games
from c4jax.io import cliargs
from c4jax.learning import config
from c4jax.learning.settings import alphazero, dqn, ppo, reinforce
from c4jax.learning.settings.loop import LoopConfig, from_scratch, whole_games


@dataclass(frozen=True)
class Trainer:
    """An RL trainer command: the sections of its config (``run``, the algorithm's, ``preset``), their
    defaults on a game, and the algorithm it trains."""

    title: str
    """The command's description in ``--help``."""
    section: str
    """The field of the algorithm's settings in the command's config (``cfg.ppo``)."""
    settings: type
    """The class of those settings, a frozen config dataclass."""
    algorithm: str
    """``"module:Class"`` of the trainer, built as ``Class(settings, game=..., freeze_conv=...)``."""
    streams: Callable[[Any], Mapping[str, Any]]
    """The settings that differ from the class' defaults on a game (its card given) that does not
    collect whole games, or that this trainer never plays whole."""
    fixed: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Settings of every game."""
    updates: int | None = None
    """``--total-updates`` where the game does not collect whole games (None: the run config's default)."""
    whole_games: bool = True
    """Whether the trainer plays the thesis' whole games where the game's card can (and takes the thesis'
    presets there; else its ``--preset`` is ``default`` or ``smoke``)."""
    preset: str = "published"
    """The default ``--preset``."""
    card_entries: tuple[str, ...] = ()
    """The game card's entries (``GameCard.defaults_of``) whose flags apply, in order (empty: the command's name)."""
    check: Callable[[Any], None] | None = None
    """``ValueError`` for settings of different sections that do not fit together."""
    after: Callable[[Any], None] | None = None
    """Run with the command's config when training ends."""


PRESET_HELP = ("'thesis' (the thesis text, design.md §7) or 'published' (every difference of the published training "
               "code turned on, design.md §7a; docs/results/fidelity compares them): the default game's whole-games "
               "settings, which explicit flags override; another game trains with --collect streams and its kit's "
               "defaults, and refuses them. 'smoke': the smallest run, which checks the pipeline (any game).")
DEFAULT_PRESET_HELP = "'default': the settings above (the game's); 'smoke': the smallest run, which checks the pipeline."


def _averaged_weights_kept(cfg) -> None:
    if cfg.az.ema_decay > 0 and cfg.run.revert_drop < 1:
        raise ValueError("--ema-decay needs the old-network rule off (--revert-drop 1): a revert would put the "
                         "averaged weights back into training")


def _plot_wall_clock(cfg) -> None:
    from c4jax.learning import rundir

    for d in rundir.seed_dirs(cfg.run.out, range(cfg.run.seed, cfg.run.seed + cfg.run.vmap_seeds)):
        rundir.write_wall_curves(d, "alphazero: strength against time")


TRAINERS: dict[str, Trainer] = {
    "ppo": Trainer("PPO self-play training.", "ppo", ppo.PPOConfig, "c4jax.learning.ppo:PPO", lambda card: ppo.STREAMS,
                   updates=ppo.STREAMS_UPDATES),
    "dqn": Trainer("DQN self-play training.", "dqn", dqn.DQNConfig, "c4jax.learning.dqn:DQN", lambda card: dqn.STREAMS),
    "reinforce": Trainer("REINFORCE-with-baseline self-play training.", "reinforce", reinforce.ReinforceConfig,
                         "c4jax.learning.reinforce:Reinforce", lambda card: reinforce.STREAMS,
                         updates=reinforce.STREAMS_UPDATES, preset="thesis"),
    "alphazero": Trainer("AlphaZero self-play training.", "az", alphazero.AlphaZeroConfig,
                         "c4jax.learning.alphazero:AlphaZero", alphazero.fitted, updates=60_000, whole_games=False,
                         preset="default", check=_averaged_weights_kept, after=_plot_wall_clock),
}
TRAINERS["dueling_dqn"] = dataclasses.replace(
    TRAINERS["dqn"], title="Dueling DQN self-play training.", fixed={"dueling": True},
    preset="thesis", card_entries=("dqn", "dueling_dqn"))


@functools.cache
def config_class(name: str) -> type:
    """The config class of trainer ``name``'s command line: ``run`` (:class:`LoopConfig`), the algorithm's
    section and ``preset``."""
    t = TRAINERS[name]
    presets, preset_help = ((*config.PRESETS, config.SMOKE), PRESET_HELP) if t.whole_games else (
        ("default", config.SMOKE), DEFAULT_PRESET_HELP)
    cls = dataclasses.make_dataclass("Config", [
        ("run", LoopConfig), (t.section, t.settings),
        ("preset", Annotated[Literal[presets], tyro.conf.arg(help=preset_help)], t.preset),
    ], frozen=True, namespace={"check": t.check} if t.check else {})
    cls.__module__, cls.__doc__ = __name__, t.title
    return cls


def defaults(name: str, game: str, preset: str | None = None):
    """Trainer ``name``'s settings on ``game`` with ``preset``: the thesis' whole-games settings where the game
    collects whole games, else the trainer's ``streams`` settings from scratch; then the card's flags, then
    the preset (:func:`with_preset`)."""
    t, card = TRAINERS[name], games.card_of(game)
    whole, out = t.whole_games and card.whole_games, out_dir(game, name)
    run = whole_games(out, game) if whole else from_scratch(out, game, **({"total_updates": t.updates} if t.updates
                                                                          else {}))
    settings = t.settings(**t.fixed, **({} if whole else t.streams(card)))
    cfg = config_class(name)(run=run, **{t.section: settings}, preset=t.preset)
    for entry in t.card_entries or (name,):
        cfg = from_kit(cfg, game, entry)
    return with_preset(cfg, preset)


def _game_and_preset(argv: Sequence[str]) -> tuple[str, str | None]:
    """``--game`` and ``--preset`` of ``argv`` (defaults: the default game, None), the rest left to
    the command's own parser."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False, exit_on_error=False)
    parser.add_argument("--game", default=games.DEFAULT)
    parser.add_argument("--preset", default=None)
    try:
        known, _ = parser.parse_known_args(list(argv))
    except argparse.ArgumentError:
        return games.DEFAULT, None
    return known.game, known.preset


def parse(command: str | Callable[[str, str | None], Any], argv: Sequence[str], prog: str | None = None) -> Any:
    """The settled config of a training command line ``argv`` over the defaults of ``command`` (a name of
    :data:`TRAINERS`, or a function ``(game, preset) -> config``); a bad game, preset, flag or value is one
    ``error:`` line and exit status 2. ``prog``: the command in messages."""
    of = functools.partial(defaults, command) if isinstance(command, str) else command
    argv, prog = list(argv), prog or sys.argv[0]
    game, preset = _game_and_preset(argv)
    if game not in games.GAMES:
        cliargs.fail(f"--game must be one of {sorted(games.GAMES)}, got {game!r} (see {prog} --help)")
    try:
        default = of(game, preset)
    except ValueError as e:
        if not {"-h", "--help"} & set(argv):
            cliargs.fail(str(e))
        default = of(game, None)
    cfg = cliargs.parse(type(default), argv, prog, default=default, config=(tyro.conf.OmitArgPrefixes,))
    if cfg.preset == config.SMOKE:  # a smoke run resumed keeps its files
        cfg = config.replace_in(cfg, lambda c: dataclasses.replace(c, overwrite=False) if getattr(c, "resume", False)
                                else c)
    try:
        return config.settle(cfg)
    except ValueError as e:
        cliargs.fail(str(e))


def with_preset(base, preset: str | None = None):
    """``base`` with ``preset`` applied (None: ``base.preset``): ``smoke`` shrinks the run; a training
    preset sets its switches where the game collects whole games, else ``ValueError``; an unknown name is
    left to the parser."""
    name = base.preset if preset is None else preset
    if name == config.SMOKE:  # one of every command's presets
        return dataclasses.replace(config.smoke_config(with_preset(base)), preset=name)
    if name not in config.PRESETS or name not in typing.get_args(typing.get_type_hints(type(base))["preset"]):
        return base  # the command's own default, or not one of its presets (the parser names them)
    if not games.card_of(base.run.game).whole_games:
        if preset is None:
            return base
        raise ValueError(f"--preset {name}: the thesis' presets set the whole-games collection (design.md §7, §7a); "
                         f"{base.run.game} trains with --collect streams and its own defaults (--preset smoke: the "
                         "smallest run)")
    return dataclasses.replace(config.replace_in(base, lambda c: config.with_preset(c, name)), preset=name)


def from_kit(cfg, game: str, name: str):
    """``cfg`` with the flags ``game``'s card sets for the algorithm ``name``, per section."""
    own = games.card_of(game).defaults_of(name)
    return dataclasses.replace(cfg, **{s: dataclasses.replace(getattr(cfg, s), **own[s]) for s in own})


def out_dir(game: str, name: str) -> str:
    """``runs/<name>`` for the default game, else ``runs/<game>/<name>``."""
    return "/".join(filter(None, ("runs", games.subfolder(game), name)))


def main(name: str, cfg) -> dict:
    """Train trainer ``name``'s algorithm with its command's config ``cfg`` (:func:`c4jax.learning.loop.run`);
    a ``ValueError`` while the algorithm is built (a setting the game cannot take) ends the command with one
    line."""
    from c4jax.games.kit import resolve
    from c4jax.learning import loop

    t = TRAINERS[name]
    settings = getattr(cfg, t.section)
    try:
        algo = resolve(t.algorithm)(settings, game=games.make(cfg.run.game), freeze_conv=cfg.run.freeze_conv)
    except ValueError as e:
        cliargs.fail(str(e))
    summary = loop.run(algo, cfg.run, width=settings.width, algo_config=dataclasses.asdict(settings),
                       note="(smoke run)" if cfg.preset == config.SMOKE else "")
    if t.after:
        t.after(cfg)
    return summary


def opening(name: str, cfg) -> str:
    """The first line of command ``name``'s run of config ``cfg``: its game, budget and folder."""
    run = getattr(cfg, "run", cfg)
    budget = f"{run.total_updates:,} updates" if hasattr(run, "total_updates") else f"{run.epochs} epochs"
    return f"{name}: {games.card_of(run.game).title}, {budget} into {run.out}{', resuming' if run.resume else ''} ..."


def command(name: str, defaults_of: Callable[[str, str | None], Any], main_of: Callable[[Any], dict],
            argv: Sequence[str] | None, prog: str | None) -> dict:
    """Parse ``argv`` (default: this process' arguments) over ``defaults_of`` and run ``main_of`` on the
    config of command ``name``; a run's errors are one line."""
    cfg = parse(defaults_of, sys.argv[1:] if argv is None else argv, prog=prog)
    if cfg.preset == config.SMOKE:
        print("smoke run: checks the pipeline, not strength (--preset smoke)", flush=True)
    cliargs.starting(opening(name, cfg))
    from c4jax.learning import loop

    return loop.exit_on_error(main_of, cfg)


def cli(name: str, argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Run trainer ``name`` of :data:`TRAINERS` on the command line ``argv`` (default: this process'
    arguments); ``prog``: the command in ``--help``."""
    return command(name, functools.partial(defaults, name), functools.partial(main, name), argv, prog)
