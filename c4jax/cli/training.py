"""What every trainer command shares: its defaults for a ``--game`` and ``--preset``, one parse of the
command line over them, one check of the result, and the run.

A command's module has ``defaults(game, preset)``, the settings the command line starts from (the game
kit's, with the preset applied: :func:`with_preset`); :func:`parse` reads ``--game`` and ``--preset``
first, parses the command line once with tyro over those defaults and settles the result: a command line
it cannot take is one ``error:`` line and exit status 2 before anything is compiled. Imports no JAX."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import typing
from typing import Any, Callable, Sequence

import tyro

from c4jax import games
from c4jax.io import cliargs
from c4jax.learning import config
from c4jax.learning.settings.loop import from_scratch, whole_games


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


def parse(defaults: Callable[[str, str | None], Any], argv: Sequence[str], prog: str | None = None) -> Any:
    """The settled config of a trainer's command line ``argv`` over ``defaults(game, preset)``; a bad game,
    preset, flag or value is one ``error:`` line and exit status 2. ``prog``: the command in messages."""
    argv, prog = list(argv), prog or sys.argv[0]
    game, preset = _game_and_preset(argv)
    if game not in games.GAMES:
        cliargs.fail(f"--game must be one of {sorted(games.GAMES)}, got {game!r} (see {prog} --help)")
    try:
        default = defaults(game, preset)
    except ValueError as e:
        if not {"-h", "--help"} & set(argv):
            cliargs.fail(str(e))
        default = defaults(game, None)
    with cliargs.one_line_errors(argv, prog):
        cfg = tyro.cli(type(default), default=default, args=argv, prog=prog, config=(tyro.conf.OmitArgPrefixes,))
    if cfg.preset == config.SMOKE:  # a smoke run resumed keeps its files
        cfg = config.replace_in(cfg, lambda c: dataclasses.replace(c, overwrite=False) if getattr(c, "resume", False)
                                else c)
    try:
        return config.settle(cfg)
    except ValueError as e:
        cliargs.fail(str(e))


def with_preset(base, preset: str | None, whole_games: bool = True):
    """``base`` with ``preset`` applied (None: ``base.preset``): ``smoke`` shrinks the run; a
    training preset sets its switches where the game collects whole games (``whole_games``), else
    ``ValueError``; an unknown name is left to the parser."""
    name = base.preset if preset is None else preset
    if name not in typing.get_args(typing.get_type_hints(type(base))["preset"]):
        return base  # not one of this command's presets: the parser names them
    if name == config.SMOKE:
        base = with_preset(base, None, whole_games)
        return dataclasses.replace(config.smoke_config(base), preset=config.SMOKE)
    if name not in config.PRESETS:  # the command's own default
        return base
    if not whole_games:
        if preset is None:
            return base
        game = getattr(getattr(base, "run", base), "game", "this game")
        raise ValueError(f"--preset {name}: the thesis' presets set the whole-games "
                         f"collection (design.md §7, §7a); {game} trains with --collect streams and its own "
                         f"defaults (--preset smoke: the smallest run)")
    return dataclasses.replace(config.replace_in(base, lambda c: config.with_preset(c, name)), preset=name)


def section(cfg) -> str:
    """The name of a command config's algorithm section."""
    return next(f.name for f in dataclasses.fields(cfg) if f.name not in ("run", "preset"))


def from_kit(cfg, game: str, name: str):
    """``cfg`` with the flags ``game``'s card sets for the algorithm ``name``, per section."""
    own = games.card_of(game).defaults_of(name)
    return dataclasses.replace(cfg, **{s: dataclasses.replace(getattr(cfg, s), **own[s]) for s in own})


def out_dir(game: str, name: str) -> str:
    """``runs/<name>`` for the default game, else ``runs/<game>/<name>``."""
    return f"runs/{name}" if game == games.DEFAULT else f"runs/{game}/{name}"


def onpolicy_defaults(cls, algo_cls, streams: dict, total_updates: int, game: str, preset: str | None):
    """The defaults of PPO's or REINFORCE's command (``cls``; section of class ``algo_cls``) on
    ``game`` with ``preset``: the thesis' whole-game settings where they fit the game, else ``--collect
    streams`` with ``streams`` and ``total_updates`` from scratch; then the kit's flags, then the preset."""
    name = next(f.name for f in dataclasses.fields(cls) if f.name not in ("run", "preset"))
    preset_default = next(f.default for f in dataclasses.fields(cls) if f.name == "preset")
    out, whole = out_dir(game, name), games.card_of(game).whole_games
    if whole:
        cfg = cls(run=whole_games(out, game), **{name: algo_cls()}, preset=preset_default)
    else:
        cfg = cls(run=from_scratch(out, game, total_updates=total_updates), **{name: algo_cls(**streams)},
                  preset=preset_default)
    return with_preset(from_kit(cfg, game, name), preset, whole)


def train(make: Callable[[], Any], cfg) -> dict:
    """Train the algorithm ``make()`` builds with a command's config ``cfg`` (:func:`c4jax.learning.loop.run`); a
    ``ValueError`` from ``make`` (a setting the game cannot take) ends the command with one line."""
    from c4jax.learning import loop

    try:
        algo = make()
    except ValueError as e:
        cliargs.fail(str(e))
    algo_cfg = getattr(cfg, section(cfg))
    return loop.run(algo, cfg.run, width=algo_cfg.width, algo_config=dataclasses.asdict(algo_cfg), note=note(cfg))


def note(cfg) -> str:
    """``"(smoke run)"`` for ``--preset smoke``, else ``""``."""
    return "(smoke run)" if cfg.preset == config.SMOKE else ""


def opening(name: str, cfg) -> str:
    """The first line of trainer ``name``'s run of config ``cfg``: its game, budget and folder."""
    run = getattr(cfg, "run", cfg)
    budget = f"{run.total_updates:,} updates" if hasattr(run, "total_updates") else f"{run.epochs} epochs"
    resume = ", resuming" if getattr(run, "resume", False) else ""
    return f"{name}: {games.card_of(run.game).title}, {budget} into {run.out}{resume} ..."


def command(defaults: Callable[[str, str | None], Any], main: Callable[[Any], dict],
            argv: Sequence[str] | None, prog: str | None) -> dict:
    """Parse ``argv`` (default: this process' arguments) over ``defaults`` and run ``main`` on the config;
    a run's errors are one line."""
    cfg = parse(defaults, sys.argv[1:] if argv is None else argv, prog=prog)
    if cfg.preset == config.SMOKE:
        print("smoke run: checks the pipeline, not strength (--preset smoke)", flush=True)
    cliargs.starting(opening(defaults.__module__.rsplit(".", 1)[-1], cfg))
    from c4jax.learning import loop

    return loop.exit_on_error(main, cfg)
