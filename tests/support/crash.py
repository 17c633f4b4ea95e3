"""Kill an experiment script with SIGKILL at random moments, resume it until it finishes.

:func:`crash_and_resume` runs ``python experiments/<script> --out OUT ...`` in a subprocess and
kills it (``SIGKILL``, nothing to clean up) following a seeded schedule of :class:`Kill` s: during
start-up and compilation, at a random moment between two checkpoints, and the instant a
checkpoint write begins (a new ``state-*`` directory or temporary file appears where the job
writes its checkpoints, before its commit). After each kill it launches the script again, with
``--resume`` when the job has something to resume (a run killed before its first checkpoint
starts afresh with ``--overwrite``, as its user would), until a launch exits 0. The caller then compares the outputs
with those of an uninterrupted run (:func:`run_once`).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]  # the repository: this file is tests/support/crash.py
LAUNCH_TIMEOUT_S = 900.0


@dataclass(frozen=True)
class Job:
    """A script and what the harness watches in its output directory ``out``."""

    script: str
    args: tuple[str, ...]
    resumable: Callable[[Path], bool]
    """Whether a relaunch passes --resume."""
    commit: Callable[[Path], object]
    """A token that changes whenever the job commits a checkpoint (None before the first)."""
    write_dirs: Callable[[Path], list[Path]]
    """Directories where a checkpoint write shows up as a new entry."""
    is_write: Callable[[str], bool] = lambda name: name.startswith("state-")
    """Whether a new entry of a write directory is a checkpoint being written."""
    out_flag: str = "--out"


@dataclass(frozen=True)
class Kill:
    """When to kill: after ``commits`` new checkpoints of this launch, then either at the start of
    the next checkpoint write (``at_write``) or ``delay`` seconds later, but no later than the
    next checkpoint's commit (so that a kill always lands before the launch can finish, and a
    launch progresses by at most ``commits + 1`` checkpoints)."""

    commits: int = 0
    delay: float = 0.0
    at_write: bool = False

    def describe(self) -> str:
        when = "as the next checkpoint write begins" if self.at_write else f"{self.delay:.2f} s later"
        return f"after {self.commits} new checkpoint(s), {when}"


@dataclass
class Timing:
    """An uninterrupted run's timeline: seconds to its first checkpoint, between checkpoints, in all."""

    first_commit_s: float
    interval_s: float
    total_s: float
    commits: int


@dataclass
class Report:
    kills: list[dict] = field(default_factory=list)
    launches: int = 0
    resumed_launches: int = 0
    final_log: str = ""

    @property
    def kills_in_writes(self) -> int:
        return sum(k["in_write"] for k in self.kills)


def command(job: Job, out: Path, resume: bool) -> list[str]:
    return [sys.executable, str(ROOT / "experiments" / job.script), job.out_flag, str(out), *job.args,
            *(["--resume"] if resume else ["--overwrite"])]  # a run killed before its first checkpoint starts anew


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def _launch(job: Job, out: Path, resume: bool, log: Path) -> subprocess.Popen:
    with open(log, "w") as f:
        return subprocess.Popen(command(job, out, resume), cwd=ROOT, env=_env(), stdout=f, stderr=subprocess.STDOUT)


def run_once(job: Job, out: Path, logs: Path) -> Timing:
    """Run the job uninterrupted; its timeline (for the kill schedule). Fails on a non-zero exit."""
    logs.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    proc = _launch(job, out, False, logs / "reference.log")
    times, last = [], None
    while proc.poll() is None:
        token = job.commit(out)
        if token is not None and token != last:
            times.append(time.monotonic() - t0)
            last = token
        time.sleep(0.001)
    total = time.monotonic() - t0
    assert proc.returncode == 0, (logs / "reference.log").read_text()[-3000:]
    assert times, "the job committed no checkpoint"
    interval = (times[-1] - times[0]) / (len(times) - 1) if len(times) > 1 else total - times[0]
    return Timing(times[0], max(interval, 0.05), total, len(times))


def schedule(timing: Timing, kills: int, seed: int) -> list[Kill]:
    """``kills`` kills (at least 3): the first during the first checkpoint write, then in a seeded
    random order a kill during start-up (or at the first checkpoint), one during a later checkpoint
    write and kills at random moments between two checkpoints. All ``kills`` together let the run
    progress by at most ``2 * kills - 4`` checkpoints."""
    rng = random.Random(seed)
    rest = [Kill(commits=1, at_write=True), Kill(delay=rng.uniform(0.0, timing.first_commit_s))]
    while len(rest) < kills - 1:
        rest.append(Kill(commits=1, delay=rng.uniform(0.0, timing.interval_s)))
    rng.shuffle(rest)
    return [Kill(at_write=True)] + rest


def most_progress(kills: int) -> int:
    """How many checkpoints the launches of :func:`schedule` ``(kills)`` may commit at most."""
    return 0 + 1 + 1 + 2 * (kills - 3)


def _entries(dirs: list[Path]) -> set[str]:
    names = set()
    for d in dirs:
        try:
            names.update(f"{d}/{e}" for e in os.listdir(d))
        except FileNotFoundError:
            pass
    return names


def _wait_commits(job: Job, out: Path, proc: subprocess.Popen, n: int) -> bool:
    """Wait for ``n`` new checkpoints of this launch; False if the process ended first."""
    last, seen = job.commit(out), 0
    while seen < n:
        if proc.poll() is not None:
            return False
        token = job.commit(out)
        if token is not None and token != last:
            seen, last = seen + 1, token
        time.sleep(0.001)
    return True


def _wait_write(job: Job, out: Path, proc: subprocess.Popen) -> bool:
    """Wait for a checkpoint write to begin: a new entry in a write directory; False if the process ended."""
    before = _entries(job.write_dirs(out))
    while proc.poll() is None:
        new = _entries(job.write_dirs(out)) - before
        if any(job.is_write(Path(n).name) for n in new):
            return True
        time.sleep(0.001)
    return False


def _writes_in_progress(job: Job, out: Path, committed: set[str]) -> list[str]:
    """Entries of the write directories that no committed checkpoint names (a torn write)."""
    return sorted(n for n in _entries(job.write_dirs(out)) - committed if job.is_write(Path(n).name))


def crash_and_resume(job: Job, out: Path, timing: Timing, logs: Path, *, kills: int = 5, seed: int = 0,
                     committed: Callable[[Path], set[str]] = lambda out: set()) -> Report:
    """Launch, kill and relaunch the job until a launch exits 0 (see the module docstring).

    ``committed(out)``: the write-directory entries that belong to committed checkpoints, so that
    the report can tell whether a kill tore a write (``in_write``)."""
    logs.mkdir(parents=True, exist_ok=True)
    plan = schedule(timing, kills, seed)
    report = Report()
    while True:
        if report.launches > kills + 10:
            raise AssertionError(f"no end after {report.launches} launches: {report.kills}")
        resume = job.resumable(out)
        log = logs / f"launch{report.launches}.log"
        proc = _launch(job, out, resume, log)
        report.launches += 1
        report.resumed_launches += resume
        t0 = time.monotonic()
        kill = plan[len(report.kills)] if len(report.kills) < len(plan) else None
        alive = kill is not None and _wait_commits(job, out, proc, kill.commits)
        if alive:
            alive = _wait_write(job, out, proc) if kill.at_write else _sleep_until_commit(job, out, proc, kill.delay)
        if alive:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            torn = _writes_in_progress(job, out, committed(out))
            report.kills.append({"kill": kill.describe(), "after_s": round(time.monotonic() - t0, 2),
                                 "resumed": resume, "in_write": bool(torn), "torn": torn})
            continue
        try:
            proc.wait(timeout=LAUNCH_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            raise AssertionError(f"launch {report.launches} did not finish: {log.read_text()[-3000:]}") from None
        text = log.read_text()
        report.final_log = text
        (logs / "kills.json").write_text(json.dumps(report.kills, indent=2) + "\n")
        assert proc.returncode == 0, f"launch {report.launches} exited {proc.returncode}:\n{text[-3000:]}"
        assert "Traceback" not in text, text[-3000:]
        return report


def _sleep_until_commit(job: Job, out: Path, proc: subprocess.Popen, seconds: float) -> bool:
    """Sleep ``seconds``, or until the next checkpoint commit; whether the process still runs."""
    deadline, last = time.monotonic() + seconds, job.commit(out)
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        token = job.commit(out)
        if token is not None and token != last:
            break
        time.sleep(0.002)
    return proc.poll() is None
