"""Benchmark: seed 002's minimax (``minimax<D>``, c4jax.games.connect_four.minimax) per move and batched.

What is measured
----------------
- **Seconds per move at batch 1** for each depth: the agent's jitted ``act`` on one board, for each
  of ``--positions`` random unfinished positions (0..20 random moves from the empty board, seeded),
  compiled ahead (compile time reported apart); the figure is the median over the positions of the
  fastest of ``--repeats`` calls. For depth 7 it is set against seed 002's "over 10 seconds" per move
  at depth 7 with alpha-beta (the target: at least 10x faster, below 1 s).
- **Batched throughput**: positions per second of one ``act`` call on ``B`` boards at the depths and
  batch sizes of ``--batched`` (fastest of ``--repeats``).
- **Plain Python**, for scale: the alpha-beta of tests/support/minimax_reference.py (the differential test's
  reference, written from the seed's pseudocode) on the same positions at ``--python-depths``:
  seconds per move and the nodes it visits (against the ``7 ** D`` leaves of the full-width search).

Usage: ``python experiments/bench_minimax.py [--out FILE.md]``; the result is printed as a Markdown
table (and written to ``--out``).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from c4jax import agents
from c4jax.games.connect_four import env
from c4jax.games.connect_four import minimax as mm

SEED_002_DEPTH7_S = 10.0  # seed 002: "for this depth [7], one Minimax turn takes over 10 seconds"
TESTS = Path(__file__).resolve().parent.parent / "tests" / "support"  # minimax_reference.py


def positions(n: int, seed: int) -> np.ndarray:
    """int8[n, 6, 7]: unfinished boards after 0..20 uniformly random moves."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        s = env.init()
        for _ in range(int(rng.integers(0, 21))):
            s = env.step(s, int(rng.choice(np.flatnonzero(np.asarray(s.legal_mask)))))
            if bool(s.done):
                break
        if not bool(s.done):
            out.append(np.asarray(env.observe(s)))
    return np.stack(out)


def _fastest(fn, args, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        best = min(best, time.perf_counter() - start)
    return best


def per_move(depth: int, boards: np.ndarray, repeats: int) -> tuple[float, float]:
    """(median seconds per move at batch 1, compile seconds) of minimax<depth>:det."""
    agent, key = agents.load(f"minimax{depth}"), jax.random.key(0)
    act = jax.jit(lambda a, b, k: a.act(b, k))
    start = time.perf_counter()
    compiled = act.lower(agent, jnp.asarray(boards[:1]), key).compile()
    compile_s = time.perf_counter() - start
    times = [_fastest(compiled, (agent, jnp.asarray(b[None]), key), repeats) for b in boards]
    return statistics.median(times), compile_s


def batched(depth: int, batch: int, boards: np.ndarray, repeats: int) -> float:
    """Positions per second of one act call on ``batch`` boards (``boards`` repeated to fill it)."""
    agent, key = agents.load(f"minimax{depth}"), jax.random.key(0)
    x = jnp.asarray(np.resize(boards, (batch,) + boards.shape[1:]))
    compiled = jax.jit(lambda a, b, k: a.act(b, k)).lower(agent, x, key).compile()
    return batch / _fastest(compiled, (agent, x, key), repeats)


def python_per_move(depth: int, boards: np.ndarray) -> tuple[float, int]:
    """(median seconds per move, median nodes visited) of the plain-Python alpha-beta of
    tests/support/minimax_reference.py (nodes counted in a second, untimed search)."""
    sys.path.insert(0, str(TESTS))
    import minimax_reference as ref

    times, nodes = [], []
    search = ref.minimax
    for b in boards:
        start = time.perf_counter()
        ref.best_move(b.reshape(-1).tolist(), depth)
        times.append(time.perf_counter() - start)
        count = [0]

        def counted(*a, **k):
            count[0] += 1
            return search(*a, **k)

        ref.minimax = counted
        try:
            ref.best_move(b.reshape(-1).tolist(), depth)
        finally:
            ref.minimax = search
        nodes.append(count[0])
    return statistics.median(times), int(statistics.median(nodes))


def _pairs(text: str) -> list[tuple[int, int]]:
    out = []
    for item in text.split(","):
        d, _, b = item.partition("x")
        out.append((int(d), int(b)))
    return out


def main(argv: list[str] | None = None) -> str:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--depths", type=int, nargs="+", default=list(range(1, mm.MAX_DEPTH + 1)),
                   help="depths timed at batch 1 (default 1..7)")
    p.add_argument("--positions", type=int, default=8, help="random positions timed at batch 1 (default 8)")
    p.add_argument("--repeats", type=int, default=3, help="timed calls per measurement; the fastest counts (default 3)")
    p.add_argument("--batched", type=_pairs, default=_pairs("4x64,4x1024,4x4096,7x8,7x64"),
                   help="DEPTHxBATCH pairs of the throughput table (default 4x64,4x1024,4x4096,7x8,7x64)")
    p.add_argument("--python-depths", type=int, nargs="*", default=[5, 7],
                   help="depths of the plain-Python alpha-beta row (default 5 7; none: leave it out)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random positions (default 0)")
    p.add_argument("--out", type=Path, default=None, help="also write the Markdown here")
    args = p.parse_args(argv)
    if args.positions < 1 or args.repeats < 1 or any(not 1 <= d <= mm.MAX_DEPTH for d in args.depths):
        p.error(f"--positions and --repeats must be >= 1, --depths in 1..{mm.MAX_DEPTH}")
    boards = positions(args.positions, args.seed)

    lines = ["| depth | leaves (7^D) | seconds per move, batch 1 | compile (s) | plain-Python alpha-beta (s per move) "
             "| its nodes visited (median) |",
             "| ---: | ---: | ---: | ---: | ---: | ---: |"]
    results = {}
    for d in args.depths:
        s, c = per_move(d, boards, args.repeats)
        results[d] = s
        py, nodes = python_per_move(d, boards) if d in args.python_depths else (None, None)
        py = "" if py is None else f"{py:.4f} | {nodes:,}"
        lines.append(f"| {d} | {7 ** d:,} | {s:.5f} | {c:.1f} | {py or ' |'} |")
        print(lines[-1], flush=True)
    out = lines + [""]
    if mm.MAX_DEPTH in results:
        s = results[mm.MAX_DEPTH]
        out.append(f"minimax{mm.MAX_DEPTH} at batch 1: {s:.4f} s per move, {SEED_002_DEPTH7_S / s:,.0f}x faster than "
                   f"seed 002's {SEED_002_DEPTH7_S:.0f} s (its lower bound: 'over 10 seconds'); target >= 10x "
                   f"({'met' if s * 10 <= SEED_002_DEPTH7_S else 'missed'}).")
        out.append("")
    out += ["| depth | batch | positions per second | leaves per second |", "| ---: | ---: | ---: | ---: |"]
    for d, b in args.batched:
        rate = batched(d, b, boards, args.repeats)
        out.append(f"| {d} | {b:,} | {rate:,.0f} | {rate * 7 ** d:,.3g} |")
        print(out[-1], flush=True)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    out += ["", f"`python experiments/bench_minimax.py{' ' + ' '.join(argv) if argv else ''}`; "
                f"{platform.machine()}, {cpus} usable CPU core(s), {jax.default_backend()} backend, jax {jax.__version__}; "
                f"{args.positions} random positions (seed {args.seed}), fastest of {args.repeats} calls each."]
    text = "\n".join(out) + "\n"
    print(text)
    if args.out is not None:
        args.out.write_text(text)
    return text


if __name__ == "__main__":
    main(sys.argv[1:])
