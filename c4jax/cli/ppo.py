"""PPO self-play training (design.md §7).

``c4jax train ppo ARGS`` and ``python experiments/ppo.py ARGS`` run this module
(the same flags and ``--help``).

    python experiments/ppo.py                          # the published code's training -> runs/ppo
    python experiments/ppo.py --preset thesis          # the thesis text's (design.md §7)
    python experiments/ppo.py --gae-lambda 0.95 --out runs/ppo_gae
    python experiments/ppo.py --out runs/ppo --resume  # continue an interrupted run
    python experiments/ppo.py --game checkers          # PPO on Checkers -> runs/checkers/ppo

The default preset is the published code's (design.md §7a): over 4 seeds it trained stronger
agents than the thesis text's settings (docs/results/fidelity).

Starts from the shipped supervised weights (conv frozen), self-plays by sampling the
policy, evaluates after every buffer (Random, old network, 1StepLA; 100 games each).
Every hyperparameter is a flag (``--help``). Writes metrics.jsonl/csv, curves.png,
summary.json, best/ (load it with ``agents.load("runs/ppo")``: sampled play,
``:det`` greedy) and last/ (the resumable training state) to --out.

``--game checkers`` trains PPO by self-play on the game's own rewards
(:mod:`c4jax.learning.selfplay_ppo`; its flags: ``--game checkers --help``), with a residual
tower, evaluated against Random, the old network and pure MCTS (``--eval-opponents``, which
also chooses best/). Its best/ plays the raw policy; ``runs/checkers/ppo@500`` plays it with
500 simulations of search guided by its policy and value heads.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Literal, Sequence

from c4jax import games
from c4jax.cli import selfplay_game
from c4jax.learning import config, loop
from c4jax.learning.ppo import PPO, PPOConfig
from c4jax.learning.selfplay_ppo import SelfPlayPPO, SelfPlayPPOConfig


@dataclass(frozen=True)
class Config:
    """PPO self-play training."""

    run: loop.LoopConfig = field(default_factory=lambda: config.with_preset(loop.LoopConfig(out="runs/ppo"), "published"))
    ppo: PPOConfig = field(default_factory=lambda: config.with_preset(PPOConfig(), "published"))
    """PPO hyperparameters. Their defaults are those of --preset (above); explicit flags override them.
    With --opponent, only the learner's own moves are training rows; the opponent's moves shape their returns."""
    preset: Literal["thesis", "published"] = "published"
    """Training preset: 'thesis' (the thesis text, design.md §7) or 'published' (every difference of the
    published training code turned on, design.md §7a; measured stronger for this trainer). It sets the
    defaults; explicit flags override it."""


@dataclass(frozen=True)
class GameConfig:
    """PPO by self-play on another game than Connect Four, with the game's own rewards."""

    run: loop.LoopConfig
    ppo: SelfPlayPPOConfig = field(default_factory=SelfPlayPPOConfig)


def game_defaults(game: str) -> GameConfig:
    """The default settings of a --game other than Connect Four (docs/results/checkers)."""
    return GameConfig(run=selfplay_game.loop_config(game, "ppo", total_updates=40_000))


def main(cfg: Config | GameConfig) -> dict:
    if isinstance(cfg, GameConfig):
        return selfplay_game.train(SelfPlayPPO(cfg.ppo, games.make(cfg.run.game)), cfg.run, cfg.ppo)
    return selfplay_game.train(PPO(cfg.ppo, freeze_conv=cfg.run.freeze_conv), cfg.run, cfg.ppo,
                               width=cfg.ppo.width)


def parse(argv: Sequence[str], prog: str | None = None) -> Config | GameConfig:
    """The command line's config: :class:`Config` (the thesis' PPO) for Connect Four, :class:`GameConfig`
    for another ``--game``."""
    return selfplay_game.parse(argv, Config(), game_defaults, prog=prog)


def cli(argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Parse ``argv`` (default: this process' arguments) and train; ``prog`` names the command in
    ``--help`` (``c4jax train ppo``; default: the script's file name)."""
    return loop.exit_on_error(main, parse(sys.argv[1:] if argv is None else argv, prog=prog))
