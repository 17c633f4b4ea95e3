"""Benchmark: the tournament's round robin and the yardstick on 1, 2, 4, ... CPU devices, in one run.

What is measured
----------------
For every N of ``--devices``, a fresh process with ``XLA_FLAGS=--xla_force_host_platform_device_count=N``
(the flag must precede JAX's start) plays the round robin of ``--agents`` (``round_robin(...,
devices=N)``, all matches in one program) and grades ``--yardstick-agents`` on the shipped positions
(``optimal_move_rate(..., devices=N)``), each twice: the first time compiles, the second is timed.
Figures per N: wall seconds of the timed run, CPU% (this process' user + system CPU time over that
wall time: 100% is one busy core) and the ratio of the wall time on 1 device to that on N, all
measured in the same run. The processes run one after another, on the cores this one may use
(``taskset`` limits them). Every N must give the same games and figures: the script checks that the
tournament's tables and the yardstick's figures equal those of the first N and says so.

Usage: ``python experiments/bench_parallel_eval.py [--devices 1 2 4] [--agents ...]
[--yardstick-agents ...]``. Results: docs/results/bench_parallel_eval.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

AGENTS = ("1steplA", "2steplA", "dqn", "ppo:det", "alphazero@32")
YARDSTICK_AGENTS = ("2steplA", "alphazero@32")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--devices", nargs="+", type=int, default=[1, 2, 4], help="device counts (default 1 2 4)")
    p.add_argument("--agents", nargs="+", default=list(AGENTS), help="the round robin's agents")
    p.add_argument("--yardstick-agents", nargs="*", default=list(YARDSTICK_AGENTS), help="agents graded")
    p.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    return p


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _timed(fn) -> tuple[object, float, float]:
    """``fn()`` once to compile, then timed: its result, wall seconds and CPU%."""
    fn()
    wall, cpu = time.perf_counter(), _cpu()
    out = fn()
    wall, cpu = time.perf_counter() - wall, _cpu() - cpu
    return out, wall, 100 * cpu / wall


def child(n: int, agent_names: list[str], graded: list[str]) -> dict:
    import jax

    from c4jax import agents, evaluation

    assert len(jax.devices()) == n, jax.devices()
    loaded = [agents.load(a) for a in agent_names]
    t, wall, cpu = _timed(lambda: evaluation.round_robin(loaded, jax.random.key(0), progress=False, devices=n))
    out = {"devices": n, "tournament": {"wall_s": wall, "cpu_pct": cpu, "tables": t.to_markdown()}}
    if graded:
        grading = [agents.load(a) for a in graded]
        m, wall, cpu = _timed(lambda: [evaluation.optimal_move_rate(a, jax.random.key(i), devices=n)
                                       for i, a in enumerate(grading)])
        out["yardstick"] = {"wall_s": wall, "cpu_pct": cpu, "figures": m}
    return out


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.agents, args.yardstick_agents)))
        return
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"cores available: {cores}; agents: {' '.join(args.agents)}; graded: {' '.join(args.yardstick_agents)}",
          flush=True)
    rows = []
    for n in args.devices:
        env = {**os.environ, "XLA_FLAGS": f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={n}"}
        proc = subprocess.run([sys.executable, __file__, "--child", str(n), "--agents", *args.agents,
                               "--yardstick-agents", *args.yardstick_agents], env=env, capture_output=True, text=True)
        if proc.returncode:
            sys.exit(f"error: {n} devices failed: {proc.stderr[-3000:]}")
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    print("\n| part | devices | wall s | CPU % | speed-up vs 1 device | same figures |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for part, same_key in (("tournament", "tables"), ("yardstick", "figures")):
        if part not in rows[0]:
            continue
        base = rows[0][part]
        for r in rows:
            x = r[part]
            print(f"| {part} | {r['devices']} | {x['wall_s']:.1f} | {x['cpu_pct']:.0f} | "
                  f"{base['wall_s'] / x['wall_s']:.2f}x | {'yes' if x[same_key] == base[same_key] else 'NO'} |")


if __name__ == "__main__":
    main()
