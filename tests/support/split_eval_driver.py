"""Plays a small round robin and grades a few yardstick positions on 1 and 2 devices, in a process
started with ``XLA_FLAGS=--xla_force_host_platform_device_count=2``, and writes what each gave:

    python tests/support/split_eval_driver.py RESULT.json AGENT...

RESULT.json: ``{"devices": [1, 2], "available": 2, "tournament": {"1": ..., ...}, "yardstick": {"1":
{agent: raw grading as lists}, ...}}``, the tournaments as ``Tournament.to_dict`` (every game's moves).
"""

from __future__ import annotations

import json
import sys

import jax
import numpy as np

from c4jax import agents, evaluation
from c4jax.evaluation import yardstick

POSITIONS = slice(0, 6000, 40)  # 150 positions: the last batch of 64 is padded


def main(result: str, names: list[str]) -> None:
    loaded = [agents.load(n) for n in names]
    full = yardstick.load_positions()
    pos = yardstick.Positions(full.boards[POSITIONS], full.scores[POSITIONS], game=full.game)
    out = {"devices": [1, 2], "available": len(jax.devices()), "tournament": {}, "yardstick": {}}
    for n in out["devices"]:
        t = evaluation.round_robin(loaded, jax.random.key(5), progress=False, devices=n)
        out["tournament"][str(n)] = t.to_dict()
        out["yardstick"][str(n)] = {
            name: {k: np.asarray(v).tolist() for k, v in
                   yardstick.grade(a, jax.random.key(i), positions=pos, batch_size=64, devices=n).items()}
            for i, (name, a) in enumerate(zip(names, loaded))}
    with open(result, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
