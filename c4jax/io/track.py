"""Live tracking (``--track tensorboard`` / ``wandb``): every row of :class:`c4jax.io.runlog.RunLog`
goes to these backends too, with ``time/steps_per_s``. TensorBoard's event files in ``<run>/tb/`` are
rewritten from the rows kept; a resumed W&B run continues the same run (id in ``<run>/wandb/c4jax.json``)
and skips the steps it has logged.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from c4jax.io import atomic

BACKENDS = ("tensorboard", "wandb")
STEPS_PER_S = "time/steps_per_s"
TB_DIR = "tb"
WANDB_DIR = "wandb"
WANDB_STATE = "c4jax.json"


class TrackingError(ValueError):
    """An unknown backend, or a backend whose package is not installed."""


def check_backends(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` as a tuple without repeats; ``TrackingError`` for an unknown or uninstalled backend."""
    import importlib.util

    names = tuple(dict.fromkeys(names))
    for name in names:
        if name not in BACKENDS:
            raise TrackingError(f"--track must be one of {', '.join(BACKENDS)}, got {name!r}")
        module = {"tensorboard": "tensorboardX", "wandb": "wandb"}[name]
        if importlib.util.find_spec(module) is None:
            raise TrackingError(f"--track {name} needs the {module} package: pip install -e '.[track]'")
    return names


def _numbers(row: Mapping) -> dict[str, float]:
    """The row's scalar numeric metrics (``step`` and lists left out)."""
    out = {}
    for k, v in row.items():
        if k == "step" or isinstance(v, (str, list, dict)) or v is None:
            continue
        try:
            out[k] = float(v)
        except (TypeError, ValueError):
            continue
    return out


class TensorBoard:
    """Event files in ``<run>/tb/`` (module docstring)."""

    def __init__(self, run_dir: Path, config: Mapping, rows: Sequence[Mapping]):
        from tensorboardX import SummaryWriter

        self.dir = run_dir / TB_DIR
        if self.dir.exists():  # derived from metrics.jsonl: rebuilt from the rows kept
            shutil.rmtree(self.dir)
        self.writer = SummaryWriter(logdir=str(self.dir), flush_secs=5)
        self.writer.add_text("config", "```\n" + json.dumps(dict(config), indent=2, default=str) + "\n```", 0)
        for row in rows:
            self.log(int(row["step"]), row)

    def log(self, step: int, row: Mapping) -> None:
        for k, v in _numbers(row).items():
            self.writer.add_scalar(k, v, step)
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()


class WandB:
    """One W&B run per run directory (module docstring)."""

    def __init__(self, run_dir: Path, config: Mapping, resume: bool, name: str, group: str):
        import wandb

        self.state_path = run_dir / WANDB_DIR / WANDB_STATE
        state = {}
        if resume and self.state_path.is_file():
            try:
                state = json.loads(self.state_path.read_text())
            except (OSError, ValueError):
                state = {}
        if not resume and (run_dir / WANDB_DIR).exists():  # an older run's W&B files in a new run's folder
            shutil.rmtree(run_dir / WANDB_DIR)
        self.state = {"id": state.get("id") or uuid.uuid4().hex[:16], "step": state.get("step", -1)}
        (run_dir / WANDB_DIR).mkdir(parents=True, exist_ok=True)
        self._save()
        self.run = wandb.init(project=os.environ.get("WANDB_PROJECT", "c4jax"), dir=str(run_dir), name=name, group=group,
                              config=dict(config), id=self.state["id"], resume="allow", reinit="create_new",
                              settings=wandb.Settings(silent=True, console="off"))

    def _save(self) -> None:
        atomic.write_text_atomic(self.state_path, json.dumps(self.state) + "\n")

    def log(self, step: int, row: Mapping) -> None:
        if step <= self.state["step"]:  # logged before the run was interrupted (the same values)
            return
        self.run.log(_numbers(row), step=step)
        self.state["step"] = step
        self._save()

    def close(self) -> None:
        self.run.finish()


class Trackers:
    """The backends of one run directory, fed one metric row at a time."""

    def __init__(self, names: Sequence[str], run_dir: str | os.PathLike, *, config: Mapping | None = None,
                 rows: Sequence[Mapping] = (), resume: bool = False, name: str | None = None,
                 group: str | None = None):
        run_dir = Path(run_dir)
        names = check_backends(names)
        config = dict(config or {})
        name = name or run_dir.resolve().name
        self.backends = []
        for backend in names:
            if backend == "tensorboard":
                self.backends.append(TensorBoard(run_dir, config, rows))
            else:
                self.backends.append(WandB(run_dir, config, resume, name, group or name))
        self._last = (int(rows[-1]["step"]) if rows else 0, time.monotonic())

    def log(self, step: int, row: Mapping) -> None:
        """Send ``row`` (logged at ``step``) to every backend, with ``time/steps_per_s``."""
        if not self.backends:
            return
        now = time.monotonic()
        last_step, last_t = self._last
        row = dict(row)
        if step > last_step and now > last_t:
            rate = (step - last_step) / (now - last_t)
            if math.isfinite(rate):
                row[STEPS_PER_S] = rate
        self._last = (step, now)
        for b in self.backends:
            b.log(step, row)

    def close(self) -> None:
        for b in self.backends:
            b.close()
        self.backends = []
