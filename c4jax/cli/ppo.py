"""PPO self-play training (design.md §7).

``c4jax train ppo ARGS`` and ``python experiments/ppo.py ARGS`` run this module (the same flags and
``--help``; docs/guide/train.md describes the runs). The default preset is the published code's (design.md
§7a); another game trains on its own rewards (``--collect streams``) with a residual tower, and takes only
``--preset smoke``."""

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

    return training.train(lambda: PPO(cfg.ppo, games.make(cfg.run.game), cfg.run.freeze_conv), cfg)


def cli(argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Parse ``argv`` (default: this process' arguments) and train; ``prog``: the command in ``--help``."""
    return training.command(defaults, main, argv, prog)
