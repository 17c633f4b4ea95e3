"""What the PPO and REINFORCE commands share: each game's default settings and the parsing of a command
line whose defaults depend on ``--game``.

A command's config (``Config``) has three fields: ``run`` (:class:`c4jax.learning.loop.LoopConfig`), the
algorithm's section (``ppo`` or ``reinforce``, also the name of its entry in ``GameKit.defaults``) and
``preset``. On a game whose kit has what the thesis' whole-games settings assume (CNET boards, random
starts, a mirror: Connect Four) the defaults are the command's with its ``--preset``; on any other game
they are ``--collect streams`` with the algorithm's ``STREAMS`` settings, from scratch, evaluated against
pure MCTS, then what the game's kit sets; ``--preset thesis``
and ``published`` (Connect Four's collection settings) are refused there in one line (the ``preset``
field is then unused), ``--preset smoke`` applies to every game.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any, Callable, Mapping, Sequence

from c4jax import games
from c4jax.io import cliargs
from c4jax.learning import config, loop
from c4jax.learning.dqn_games import whole_games_fit


def _section(cfg) -> str:
    """The name of a command config's algorithm section."""
    return next(f.name for f in dataclasses.fields(cfg) if f.name not in ("run", "preset"))


def defaults(default, game: str, streams: Mapping[str, Any], total_updates: int):
    """``default`` (a command's config, Connect Four's) fitted to ``game``: unchanged where the thesis'
    whole-games settings fit it (``--game`` set), else the algorithm's class defaults with ``streams`` (its
    ``--collect streams`` settings), ``total_updates`` updates from scratch, evaluated against pure MCTS
    with 100 simulations (which chooses best/) without the old-network rule; then the
    flags that the game's kit sets for the algorithm (``GameKit.defaults``). Runs go to
    ``runs/<game>/<algorithm>`` (the default's --out for the default game)."""
    name = _section(default)
    algo, run = getattr(default, name), default.run
    out = run.out if game == games.DEFAULT else f"runs/{game}/{name}"
    if whole_games_fit(games.make(game)):  # the thesis' settings (CNET boards, random starts, a mirror) fit
        run = dataclasses.replace(run, out=out, game=game)
    else:
        algo = dataclasses.replace(type(algo)(), **streams)
        run = loop.LoopConfig(out=out, game=game, init_from="", freeze_conv=False, total_updates=total_updates,
                              eval_opponents=("mcts100",), select_by="mcts100", revert_drop=1.0)
    own = games.kit_of(game).defaults_of(name)
    return dataclasses.replace(default, run=dataclasses.replace(run, **own.get("run", {})),
                               **{name: dataclasses.replace(algo, **own.get(name, {}))})


def renamed(argv: Sequence[str], names: Mapping[str, str]) -> list[str]:
    """``argv`` with each flag of ``names`` (old name: new name) given under its new name, and a note for
    each on stderr (a new name that is itself a deprecated name of --eval-every has the note of that)."""
    out = []
    for arg in argv:
        flag, eq, value = arg.partition("=")
        if flag in names:
            if names[flag] not in config.DEPRECATED_EVAL_FLAGS:
                print(f"note: {flag} is deprecated: use {names[flag]}", file=sys.stderr)
            arg = names[flag] + eq + value
        out.append(arg)
    return out


def parse(argv: Sequence[str], defaults_of: Callable[[str], Any], prog: str | None = None):
    """The command line's config over ``defaults_of(--game)`` (:func:`defaults`): with its ``--preset``
    where the defaults collect whole games, else refusing ``--preset thesis`` and ``published``.
    A command line it cannot take (an unknown ``--game`` included) is one ``error:`` line and exit
    status 2 (:func:`c4jax.io.cliargs.one_line_errors`)."""
    argv = list(argv)
    game = config.preset_from_argv(argv, flag="--game", default=games.DEFAULT)
    if game not in games.GAMES:
        with cliargs.one_line_errors(argv, prog):
            loop.LoopConfig(game=game)  # its check of --game names the games
    default = defaults_of(game)
    streams = getattr(default, _section(default)).streams
    if streams:
        named = config.preset_from_argv(config.take_smoke(argv)[0], default="")
        if named in config.PRESETS and not {"-h", "--help"} & set(argv):
            cliargs.fail(f"--preset {named}: {games.kit_of(games.DEFAULT).title}'s presets set the whole-games collection (design.md §7, "
                         f"§7a); {game} trains with --collect streams and its own defaults (--preset smoke: the "
                         "smallest run)")
    with cliargs.one_line_errors(argv, prog):
        if streams:
            return config.parse_cli(default, argv, prog=prog)
        return config.preset_cli(default, argv, prog=prog)


def trainer(make: Callable, cfg, run: loop.LoopConfig):
    """``make(cfg, game, freeze_conv=...)``, the algorithm of ``cfg`` on ``run``'s game; a setting that the
    game cannot take ends the script with one ``error:`` line."""
    try:
        return make(cfg, games.make(run.game), freeze_conv=run.freeze_conv)
    except ValueError as e:
        cliargs.fail(str(e))


def train(make: Callable, cfg) -> dict:
    """Train a command's config ``cfg`` with the algorithm that ``make`` makes of its section."""
    algo_cfg = getattr(cfg, _section(cfg))
    algo = trainer(make, algo_cfg, cfg.run)
    return loop.run(algo, cfg.run, width=algo_cfg.width, algo_config=dataclasses.asdict(algo_cfg))
