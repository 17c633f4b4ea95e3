"""Vanilla DQN self-play training (design.md §7). Also Double DQN, soft targets, Huber, on any game.

``c4jax train dqn ARGS`` and ``python experiments/dqn.py ARGS`` run this module
(the same flags and ``--help``).

    python experiments/dqn.py                         # the published code's training -> runs/dqn
    python experiments/dqn.py --preset thesis         # the thesis text's settings
    python experiments/dqn.py --double --loss huber --tau 0.001 --out runs/ddqn
    python experiments/dqn.py --out runs/dqn --resume # continue an interrupted run
    python experiments/dqn.py --game GAME             # DQN on another game -> runs/GAME/dqn

The default preset is the published code's (design.md §7a; docs/results/fidelity compares the two).

Every hyperparameter is a flag (``--help``). Writes metrics.jsonl/csv, curves.png,
summary.json, best/ (the agent with the best win rate vs 1StepLA; load it with
``agents.load("runs/dqn")``) and last/ (the resumable training state) to --out.

Every ``--game`` takes the same flags; its defaults are its own (:func:`defaults`). A game without
Connect Four's shaped reward, random starts and mirror (Checkers) trains Double DQN on its own rewards
with streams of games side by side (``--collect streams``) and a residual tower, evaluated against
Random, the old network and pure MCTS (``--eval-opponents``, which also chooses best/); its best/
plays greedily on Q and ``runs/checkers/dqn@500`` searches with it. ``--preset thesis`` and
``--preset published`` are Connect Four's (they set the thesis' and the published code's switches of
the whole-game collection); on another game only ``--preset smoke`` applies.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from typing import Literal, Sequence

from c4jax import games
from c4jax.io import cliargs
from c4jax.learning import config, loop
from c4jax.learning.dqn import DQN, DQNConfig, whole_games_fit


@dataclass(frozen=True)
class Config:
    """DQN self-play training."""

    run: loop.LoopConfig = field(default_factory=lambda: config.with_preset(loop.LoopConfig(out="runs/dqn"), "published"))
    dqn: DQNConfig = field(default_factory=lambda: config.with_preset(DQNConfig(), "published"))
    """DQN hyperparameters. Their defaults are those of --preset (above) and --game; explicit flags override
    them. With --opponent, the opponent's moves are stored and learned from too (Q-learning is off-policy)."""
    preset: Literal["thesis", "published"] = "published"
    """Training preset of the default game: 'thesis' (the thesis text, design.md §7) or 'published' (every
    difference of the published training code turned on, design.md §7a). It sets the defaults; explicit
    flags override it. Another game has its own defaults (only --preset smoke applies there)."""


# Double DQN on a game's own rewards, the settings of --collect streams on a game that has no whole-game
# self-play (docs/results/<game>); the game's kit sets its sizes (GameKit.defaults["dqn"])
STREAM = dict(collect="streams", double=True, loss="huber", gamma=1.0, tau=0.005, eps_schedule="linear",
              eps_per_update=True, eps_start=1.0, eps_end=0.05, weight_decay=0.0, max_grad_norm=1.0, eval_every=0)

# the flags of --collect streams's ε that DQN names for every game: old name -> name
RENAMED = {"--epsilon-start": "--eps-start", "--epsilon-end": "--eps-end", "--epsilon-decay-updates": "--eps-decay"}


def defaults(game: str, dueling: bool = False) -> Config:
    """The default settings for ``game``: the published code's whole-game DQN where the game's kit has
    the thesis' pieces (Connect Four), else :data:`STREAM` with a residual tower, from scratch, evaluated
    against Random, the old network and pure MCTS with 100 simulations (which also chooses best/), without
    the old-network rule; then the flags that the game's kit sets for DQN (``GameKit.defaults["dqn"]``, and
    ``["dueling_dqn"]`` for ``dueling``). ``dueling``: Dueling DQN, with the thesis text's preset on Connect
    Four. Runs go to ``runs/<game>/<dqn|dueling_dqn>`` (``runs/dqn``, ``runs/dueling_dqn`` for the default
    game)."""
    kit = games.kit_of(game)
    name = "dueling_dqn" if dueling else "dqn"
    out = f"runs/{name}" if game == games.DEFAULT else f"runs/{game}/{name}"
    if whole_games_fit(kit.game):
        preset = "thesis" if dueling else "published"
        cfg = Config(run=loop.LoopConfig(out=out, game=game), dqn=DQNConfig(dueling=dueling), preset=preset)
    else:
        run = loop.LoopConfig(out=out, game=game, init_from="", freeze_conv=False, eval_opponents=("mcts100",),
                              select_by="mcts100", revert_drop=1.0)
        cfg = Config(run=run, dqn=DQNConfig(dueling=dueling, **STREAM), preset="thesis")
    own = {section: {**kit.defaults_of("dqn").get(section, {}),
                     **(kit.defaults_of("dueling_dqn").get(section, {}) if dueling else {})}
           for section in ("run", "dqn")}
    return dataclasses.replace(cfg, run=dataclasses.replace(cfg.run, **own["run"]),
                               dqn=dataclasses.replace(cfg.dqn, **own["dqn"]))


def renamed(argv: Sequence[str]) -> list[str]:
    """``argv`` with the old names of :data:`RENAMED` replaced, a one-line note for each."""
    out = []
    for arg in argv:
        name, eq, value = arg.partition("=")
        if name in RENAMED:
            print(f"note: {name} is deprecated: use {RENAMED[name]}", file=sys.stderr)
            arg = RENAMED[name] + eq + value
        out.append(arg)
    return out


def parse(argv: Sequence[str], prog: str | None = None, dueling: bool = False) -> Config:
    """The command line's config over the defaults of its ``--game`` (:func:`defaults`): Connect Four's
    with its ``--preset``. A command line it cannot take (an unknown ``--game`` included) is one ``error:``
    line and exit status 2 (:func:`c4jax.io.cliargs.one_line_errors`)."""
    argv = renamed(argv)
    game = config.preset_from_argv(argv, flag="--game", default=games.DEFAULT)
    try:
        default = defaults(game, dueling)
    except ValueError:  # an unknown --game: the parser's check of --game names it
        default = defaults(games.DEFAULT, dueling)
    with cliargs.one_line_errors(argv, prog):
        if default.dqn.collect == "games":
            return config.preset_cli(default, argv, prog=prog)
        preset = config.preset_from_argv(argv, default="")
        if preset in config.PRESETS:
            cliargs.fail(f"--preset {preset}: the presets are {games.kit_of(games.DEFAULT).title}'s whole-game DQN; {game} has its own "
                         f"defaults (--preset smoke applies)")
        return config.parse_cli(default, argv, prog=prog)


def trainer(cfg: Config) -> DQN:
    """The trainer of ``cfg``; a setting that does not fit the game ends the script with one line."""
    try:
        return DQN(cfg.dqn, freeze_conv=cfg.run.freeze_conv, game=games.make(cfg.run.game))
    except ValueError as e:
        cliargs.fail(" ".join(str(e).split()))


def main(cfg: Config) -> dict:
    return loop.run(trainer(cfg), cfg.run, width=cfg.dqn.width, algo_config=dataclasses.asdict(cfg.dqn))


def cli(argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Parse ``argv`` (default: this process' arguments) and train; ``prog`` names the command in
    ``--help`` (``c4jax train dqn``; default: the script's file name)."""
    return loop.exit_on_error(main, parse(sys.argv[1:] if argv is None else argv, prog=prog))
