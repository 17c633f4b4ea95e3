"""Vanilla DQN self-play training (design.md §7). Also Double DQN, soft targets, Huber.

``c4jax train dqn ARGS`` and ``python experiments/dqn.py ARGS`` run this module
(the same flags and ``--help``).

    python experiments/dqn.py                         # the published code's training -> runs/dqn
    python experiments/dqn.py --preset thesis         # the thesis text's (design.md §7)
    python experiments/dqn.py --double --loss huber --tau 0.001 --out runs/ddqn
    python experiments/dqn.py --out runs/dqn --resume # continue an interrupted run
    python experiments/dqn.py --game checkers         # DQN on Checkers -> runs/checkers/dqn

The default preset is the published code's (design.md §7a): over 4 seeds it trained stronger
agents than the thesis text's settings (docs/results/fidelity).

Every hyperparameter is a flag (``--help``). Writes metrics.jsonl/csv, curves.png,
summary.json, best/ (the agent with the best win rate vs 1StepLA; load it with
``agents.load("runs/dqn")``) and last/ (the resumable training state) to --out.

``--game checkers`` trains Double DQN by self-play on the game's own rewards
(:mod:`c4jax.learning.selfplay_dqn`; its flags: ``--game checkers --help``), with a residual
tower, evaluated against Random, the old network and pure MCTS (``--eval-opponents``, which
also chooses best/). Its best/ plays greedily on Q; ``runs/checkers/dqn@500`` searches with it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Literal, Sequence

from c4jax import games
from c4jax.cli import selfplay_game
from c4jax.learning import config, loop
from c4jax.learning.dqn import DQN, DQNConfig
from c4jax.learning.selfplay_dqn import SelfPlayDQN, SelfPlayDQNConfig


@dataclass(frozen=True)
class Config:
    """DQN self-play training."""

    run: loop.LoopConfig = field(default_factory=lambda: config.with_preset(loop.LoopConfig(out="runs/dqn"), "published"))
    dqn: DQNConfig = field(default_factory=lambda: config.with_preset(DQNConfig(), "published"))
    """DQN hyperparameters. Their defaults are those of --preset (above); explicit flags override them.
    With --opponent, the opponent's moves are stored and learned from too (Q-learning is off-policy)."""
    preset: Literal["thesis", "published"] = "published"
    """Training preset: 'thesis' (the thesis text, design.md §7) or 'published' (every difference of the
    published training code turned on, design.md §7a; measured stronger for DQN, no stronger for Dueling DQN,
    docs/results/fidelity). It sets the defaults; explicit flags override it."""


@dataclass(frozen=True)
class GameConfig:
    """Double DQN by self-play on another game than Connect Four, with the game's own rewards."""

    run: loop.LoopConfig
    dqn: SelfPlayDQNConfig = field(default_factory=SelfPlayDQNConfig)


def game_defaults(game: str) -> GameConfig:
    """The default settings of a --game other than Connect Four (docs/results/checkers)."""
    return GameConfig(run=selfplay_game.loop_config(game, "dqn", total_updates=100_000))


def main(cfg: Config | GameConfig) -> dict:
    if isinstance(cfg, GameConfig):
        return selfplay_game.train(SelfPlayDQN(cfg.dqn, games.make(cfg.run.game)), cfg.run, cfg.dqn)
    return selfplay_game.train(DQN(cfg.dqn, freeze_conv=cfg.run.freeze_conv), cfg.run, cfg.dqn,
                               width=cfg.dqn.width)


def parse(argv: Sequence[str], prog: str | None = None) -> Config | GameConfig:
    """The command line's config: :class:`Config` (the thesis' DQN) for Connect Four, :class:`GameConfig`
    for another ``--game``."""
    return selfplay_game.parse(argv, Config(), game_defaults, prog=prog)


def cli(argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Parse ``argv`` (default: this process' arguments) and train; ``prog`` names the command in
    ``--help`` (``c4jax train dqn``; default: the script's file name)."""
    return loop.exit_on_error(main, parse(sys.argv[1:] if argv is None else argv, prog=prog))
