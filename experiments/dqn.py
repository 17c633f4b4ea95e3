"""Vanilla DQN self-play training (design.md §7). Also Double DQN, soft targets, Huber.

    python experiments/dqn.py                         # the published code's training -> runs/dqn
    python experiments/dqn.py --preset thesis         # the thesis text's (design.md §7)
    python experiments/dqn.py --double --loss huber --tau 0.001 --out runs/ddqn
    python experiments/dqn.py --out runs/dqn --resume # continue an interrupted run

The default preset is the published code's (design.md §7a): over 4 seeds it trained stronger
agents than the thesis text's settings (docs/results/fidelity).

Every hyperparameter is a flag (``--help``). Writes metrics.jsonl/csv, curves.png,
summary.json, best/ (the agent with the best win rate vs 1StepLA; load it with
``agents.load("runs/dqn")``) and last/ (the resumable training state) to --out.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Literal

from c4jax.learning import config, loop
from c4jax.learning.dqn import DQN, DQNConfig


@dataclass(frozen=True)
class Config:
    """DQN self-play training."""

    run: loop.LoopConfig = field(default_factory=lambda: config.with_preset(loop.LoopConfig(out="runs/dqn"), "published"))
    dqn: DQNConfig = field(default_factory=lambda: config.with_preset(DQNConfig(), "published"))
    preset: Literal["thesis", "published"] = "published"
    """Training preset: 'thesis' (the thesis text, design.md §7) or 'published' (every difference of the
    published training code turned on, design.md §7a; measured stronger for this trainer). It sets the
    defaults; explicit flags override it."""


def main(cfg: Config) -> dict:
    algo = DQN(cfg.dqn, freeze_conv=cfg.run.freeze_conv)
    return loop.run(algo, cfg.run, width=cfg.dqn.width, algo_config=dataclasses.asdict(cfg.dqn))


if __name__ == "__main__":
    loop.exit_on_error(main, config.preset_cli(Config()))
