"""Benchmark: each trainer's training throughput in this checkout against another revision of c4jax,
or on 1, 2, ... of the machine's cores.

What is measured
----------------
Gradient updates per second of each trainer's compiled chunk (``jit(algo.chunk)``: the self-play and
updates that the host loop runs between two evaluations) at the trainer's default configuration (the
thesis, design.md §7; AlphaZero: design.md §8) on the default game, from freshly initialised weights.
Evaluation matches and checkpoints are left out: this isolates the training program.

How
---
``--against REV`` checks REV out into a temporary ``git worktree`` (removed at the end). Each
(tree, trainer) is measured in a fresh Python process that imports that tree's package
(``PYTHONPATH``): one warm-up chunk (compilation; for DQN the chunks that fill the replay buffer up to
``learning_starts``), then ``--chunks`` timed chunks, each ended with ``jax.block_until_ready``;
updates are counted from the states. The trees alternate round by round (``--rounds``), so that
drifts in machine speed hit both alike. Figure: median updates/s per tree over every timed chunk;
ratio = this tree / REV (1.0: as fast).

``--cores 1 2`` measures this checkout only, each process confined to the first N cores of the
machine (its CPU affinity), on JAX's one CPU device: updates/s and the CPU the process used during
the timed chunks (process CPU time / wall time; 200% = two cores busy), ratio = updates/s on N cores
/ on the first count given. It shows whether a trainer's one program already keeps every core busy
(XLA's CPU backend runs an operation's work on several threads).

Usage: ``python experiments/bench_trainers.py --against REV [--algos ppo reinforce dqn alphazero]
[--rounds 2] [--chunks 3]`` or ``--cores 1 2``. The target it checks: each trainer within 5% of the
revision it is compared with (docs/results/bench_trainers.md).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALGOS = ("ppo", "reinforce", "dqn", "dueling_dqn", "alphazero")

# Run in a fresh process with the measured tree first on sys.path; prints one JSON line: the seconds and
# updates of every timed chunk. Uses only what both trees have: the trainers' configs and algorithms,
# algo.init and algo._chunk.
MEASURE = r"""
import json, sys, time
import jax
algo_name, chunks = sys.argv[1], int(sys.argv[2])
from c4jax import games
from c4jax.nets import cnet
key = jax.random.key(0)


def made(Algo, cfg):  # a revision's Algo(cfg, game), or an older one's Algo(cfg) of the default game
    try:
        return Algo(cfg, games.make(games.DEFAULT))
    except TypeError:
        return Algo(cfg)


if algo_name in ("ppo", "reinforce"):
    if algo_name == "ppo":
        from c4jax.learning import ppo as module
        from c4jax.learning.ppo import PPO as Algo, PPOConfig as Config
    else:
        from c4jax.learning import reinforce as module
        from c4jax.learning.reinforce import Reinforce as Algo, ReinforceConfig as Config
    algo = getattr(module, "trainer", Algo)(Config(), games.make(games.DEFAULT))  # a revision's trainer(cfg, game)
    params = cnet.init_params(key, width=128, heads="two")
elif algo_name in ("dqn", "dueling_dqn"):
    from c4jax.learning.dqn import DQN, DQNConfig
    dueling = algo_name == "dueling_dqn"
    algo = made(DQN, DQNConfig(dueling=dueling, eval_every=200))
    params = cnet.init_params(key, width=128, heads="dueling" if dueling else "one")
else:
    from c4jax.learning.alphazero import AlphaZero, AlphaZeroConfig
    algo = made(AlphaZero, AlphaZeroConfig())
    params = algo.fresh_params(key)  # a residual tower's; None: the CNET, made as the loop makes it
    params = cnet.init_params(key, width=128, heads=algo.heads) if params is None else params
state = algo.init(key, params)
chunk = jax.jit(algo._chunk)
state, _ = jax.block_until_ready(chunk(state))
warm = 1
while algo_name in ("dqn", "dueling_dqn") and int(state.updates) == 0 and warm < 50:  # fill the buffer
    state, _ = jax.block_until_ready(chunk(state))
    warm += 1
rows = []
for _ in range(chunks):
    before = int(state.updates)
    t0, c0 = time.perf_counter(), time.process_time()
    state, _ = jax.block_until_ready(chunk(state))
    rows.append((time.perf_counter() - t0, int(state.updates) - before, time.process_time() - c0))
print(json.dumps(rows))
"""


def measure(tree: Path, algo: str, chunks: int, cores: int = 0) -> list[tuple[float, int, float]]:
    """``[(wall s, updates, CPU s)]`` of each timed chunk, in a process of ``tree`` (``cores`` > 0: confined
    to the first ``cores`` CPUs this process may use)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    pin = None
    if cores:
        allowed = sorted(os.sched_getaffinity(0))[:cores]
        pin = lambda: os.sched_setaffinity(0, allowed)  # noqa: E731
    out = subprocess.run([sys.executable, "-c", MEASURE, algo, str(chunks)], cwd=tree, env=env,
                         capture_output=True, text=True, preexec_fn=pin)
    if out.returncode != 0:
        raise SystemExit(f"error: measuring {algo} in {tree} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--against", help="the git revision to compare with (e.g. a tag or commit)")
    how.add_argument("--cores", type=int, nargs="+", help="measure this checkout on the first N cores, for each N")
    p.add_argument("--algos", nargs="+", default=list(ALGOS), choices=ALGOS)
    p.add_argument("--rounds", type=int, default=2, help="rounds of alternating trees (>= 1)")
    p.add_argument("--chunks", type=int, default=3, help="timed chunks per process (>= 1)")
    args = p.parse_args(argv)
    if args.rounds < 1 or args.chunks < 1:
        p.error("--rounds and --chunks must be >= 1")
    if args.cores:
        if min(args.cores) < 1 or max(args.cores) > len(os.sched_getaffinity(0)):
            p.error(f"--cores must be between 1 and the {len(os.sched_getaffinity(0))} cores this process may use")
        return by_cores(args)
    with tempfile.TemporaryDirectory() as tmp:
        other = Path(tmp) / "tree"
        made = subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(other), args.against],
                              capture_output=True, text=True)
        if made.returncode != 0:
            p.error(f"--against {args.against!r}: {made.stderr.strip().splitlines()[-1]}")
        try:
            rates = {(t, a): [] for t in ("this", "against") for a in args.algos}
            for r in range(args.rounds):
                for algo in args.algos:
                    for name, tree in (("against", other), ("this", ROOT)) if r % 2 == 0 else \
                            (("this", ROOT), ("against", other)):
                        rows = measure(tree, algo, args.chunks)
                        rates[name, algo] += [n / s for s, n, _ in rows if n > 0]
                        print(f"round {r}: {algo:12s} {name:8s} "
                              f"{statistics.median([n / s for s, n, _ in rows if n > 0]):9.1f} updates/s", flush=True)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(other)], capture_output=True)
    print(f"\n{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; this checkout vs {args.against}; "
          f"{args.rounds} rounds x {args.chunks} chunks\n")
    print("| trainer | this checkout (updates/s) | " + args.against + " (updates/s) | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for algo in args.algos:
        this, then = statistics.median(rates["this", algo]), statistics.median(rates["against", algo])
        print(f"| {algo} | {this:.1f} | {then:.1f} | {this / then:.3f} |")
    return 0


def by_cores(args) -> int:
    """The ``--cores`` table: this checkout's trainers on the first N cores, N alternating round by round."""
    rates = {(c, a): [] for c in args.cores for a in args.algos}
    cpu = {(c, a): [] for c in args.cores for a in args.algos}
    for r in range(args.rounds):
        for algo in args.algos:
            for cores in args.cores if r % 2 == 0 else args.cores[::-1]:
                rows = measure(ROOT, algo, args.chunks, cores)
                rates[cores, algo] += [n / s for s, n, _ in rows if n > 0]
                cpu[cores, algo] += [c / s for s, n, c in rows if n > 0]
                print(f"round {r}: {algo:12s} {cores} core(s) {statistics.median(rates[cores, algo][-len(rows):]):9.1f} "
                      f"updates/s", flush=True)
    print(f"\n{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, one JAX CPU device; "
          f"{args.rounds} rounds x {args.chunks} chunks\n")
    print("| trainer | cores | updates/s | CPU used | ratio vs " + f"{args.cores[0]} core(s) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for algo in args.algos:
        base = statistics.median(rates[args.cores[0], algo])
        for cores in args.cores:
            rate = statistics.median(rates[cores, algo])
            print(f"| {algo} | {cores} | {rate:.1f} | {100 * statistics.median(cpu[cores, algo]):.0f}% | {rate / base:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
