"""Dueling DQN self-play training (design.md §7; thesis defaults): Q = V + A - mean(A).

    python experiments/dueling_dqn.py                 # thesis settings -> runs/dueling_dqn

Same flags as experiments/dqn.py (``--help``); only the defaults differ: the dueling head, and the
thesis text's preset (``--preset published`` measured no stronger for Dueling DQN,
docs/results/fidelity).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dqn import Config, main  # noqa: E402

from c4jax.learning import config, loop  # noqa: E402
from c4jax.learning.dqn import DQNConfig  # noqa: E402

DEFAULT = Config(run=loop.LoopConfig(out="runs/dueling_dqn"), dqn=DQNConfig(dueling=True), preset="thesis")

if __name__ == "__main__":
    loop.exit_on_error(main, config.preset_cli(DEFAULT))
