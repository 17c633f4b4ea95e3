"""PPO self-play training (design.md §7).

``c4jax train ppo ARGS`` and ``python experiments/ppo.py ARGS`` run this module
(the same flags and ``--help``).

    python experiments/ppo.py                          # the published code's training -> runs/ppo
    python experiments/ppo.py --preset thesis          # the thesis text's settings
    python experiments/ppo.py --gae-lambda 0.95 --out runs/ppo_gae
    python experiments/ppo.py --out runs/ppo --resume  # continue an interrupted run
    python experiments/ppo.py --game GAME              # PPO on another game -> runs/GAME/ppo

The default preset is the published code's (design.md §7a; docs/results/fidelity compares the two).

Starts from the shipped supervised weights (conv frozen), self-plays by sampling the
policy, evaluates after every buffer (Random, old network, 1StepLA; 100 games each).
Every hyperparameter is a flag (``--help``). Writes metrics.jsonl/csv, curves.png,
summary.json, best/ (load it with ``agents.load("runs/ppo")``: sampled play,
``:det`` greedy) and last/ (the resumable training state) to --out.

``--game checkers`` (any game but Connect Four) trains PPO by self-play on the game's own rewards
(``--collect streams``, :mod:`c4jax.learning.onpolicy_streams`; its defaults: ``--game checkers --help``,
from the game's kit), with a residual tower, evaluated against Random, the old network and pure MCTS
(``--eval-opponents``, which also chooses best/). Its best/ plays the raw policy; ``runs/checkers/ppo@500``
plays it with 500 simulations of search guided by its policy and value heads. ``--preset thesis`` and
``published`` are Connect Four's; ``--preset smoke`` works on every game.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Sequence

from c4jax import games
from c4jax.cli import training
from c4jax.learning.settings import loop, ppo
from c4jax.learning.settings.ppo import PPOConfig


@dataclass(frozen=True)
class Config:
    """PPO self-play training."""

    run: loop.LoopConfig = field(default_factory=lambda: defaults(games.DEFAULT).run)
    ppo: PPOConfig = field(default_factory=lambda: defaults(games.DEFAULT).ppo)
    """PPO hyperparameters. Their defaults are those of --preset (above) and --game; explicit flags override them.
    With --opponent, only the learner's own moves are training rows; the opponent's moves shape their returns."""
    preset: Literal["thesis", "published", "smoke"] = "published"
    """'thesis' (the thesis text, design.md §7) or 'published' (every difference of the published training code
    turned on, design.md §7a): the default game's whole-games settings, which explicit flags override; another
    game trains with --collect streams and its kit's defaults, and refuses them. 'smoke': the smallest run, which
    checks the pipeline (any game)."""


def defaults(game: str, preset: str | None = None) -> Config:
    """The settings of ``game`` with ``preset`` (:func:`c4jax.cli.training.onpolicy_defaults`)."""
    return training.onpolicy_defaults(Config, PPOConfig, ppo.STREAMS, ppo.STREAMS_UPDATES, game, preset)


def main(cfg: Config) -> dict:
    from c4jax.learning.ppo import PPO

    return training.train(training.trainer(lambda: PPO(cfg.ppo, games.make(cfg.run.game), cfg.run.freeze_conv)),
                          cfg)


def cli(argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Parse ``argv`` (default: this process' arguments) and train; ``prog`` names the command in
    ``--help`` (``c4jax train ppo``; default: the script's file name)."""
    return training.command(defaults, main, argv, prog)
