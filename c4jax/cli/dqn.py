"""Vanilla DQN self-play training (design.md §7). Also Double DQN, soft targets, Huber, on any game.

``c4jax train dqn ARGS`` and ``python experiments/dqn.py ARGS`` run this module (the same flags and
``--help``; docs/guide/train.md describes the runs). The default preset is the published code's (design.md
§7a). A game without Connect Four's shaped reward, random starts and mirror trains Double DQN on its own
rewards (``--collect streams``) with a residual tower; on such a game only ``--preset smoke`` applies."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Sequence

from c4jax import games
from c4jax.cli import training
from c4jax.learning.settings import dqn, loop
from c4jax.learning.settings.dqn import DQNConfig


@dataclass(frozen=True)
class Config:
    """DQN self-play training."""

    run: loop.LoopConfig = field(default_factory=lambda: defaults(games.DEFAULT).run)
    dqn: DQNConfig = field(default_factory=lambda: defaults(games.DEFAULT).dqn)
    """DQN hyperparameters. Their defaults are those of --preset (above) and --game; explicit flags override
    them. With --opponent, the opponent's moves are stored and learned from too (Q-learning is off-policy)."""
    preset: Literal["thesis", "published", "smoke"] = "published"
    """'thesis' (the thesis text, design.md §7) or 'published' (every difference of the published training
    code turned on, design.md §7a; docs/results/fidelity compares them): the default game's whole-game
    settings, which explicit flags override; another game has its own defaults and refuses them. 'smoke':
    the smallest run, which checks the pipeline (any game)."""


def defaults(game: str, preset: str | None = None, dueling: bool = False) -> Config:
    """The settings of ``game`` with ``preset``: the published code's whole-game DQN where the game's
    card has the thesis' pieces (Dueling DQN: the thesis text's), else :data:`c4jax.learning.dqn.STREAMS`
    from scratch; then the kit's flags (``"dqn"``, and ``"dueling_dqn"`` for ``dueling``), then the preset."""
    name = "dueling_dqn" if dueling else "dqn"
    out, whole = training.out_dir(game, name), games.card_of(game).whole_games
    if whole:
        cfg = Config(run=loop.whole_games(out, game), dqn=DQNConfig(dueling=dueling),
                     preset="thesis" if dueling else "published")
    else:
        cfg = Config(run=loop.from_scratch(out, game), dqn=DQNConfig(dueling=dueling, **dqn.STREAMS), preset="thesis")
    cfg = training.from_kit(cfg, game, "dqn")
    return training.with_preset(training.from_kit(cfg, game, "dueling_dqn") if dueling else cfg, preset, whole)


def main(cfg: Config) -> dict:
    from c4jax.learning.dqn import DQN

    return training.train(lambda: DQN(cfg.dqn, freeze_conv=cfg.run.freeze_conv, game=games.make(cfg.run.game)), cfg)


def cli(argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Parse ``argv`` (default: this process' arguments) and train; ``prog``: the command in ``--help``."""
    return training.command(defaults, main, argv, prog)
