"""Benchmark: training throughput of K seeds vmapped in one program vs K single runs.

What is measured
----------------
The training chunks of ``--vmap-seeds K`` (``jit(vmap(algo.chunk))``, what
``loop.run`` calls between evaluations) against the same K seeds trained one
after the other with the single-run chunk (``algo.chunk``, what ``loop.run`` calls
for K = 1).
Both start from the same states: the shipped supervised weights (``--init-from``)
and each seed's own keys, exactly as the trainers build them. Figure: gradient
updates per second summed over the K seeds; ratio = vmapped / sequential.

Evaluation matches (three per chunk and seed, vmapped too in ``loop.run``) and
checkpointing are excluded: this isolates the training program.

How
---
One warm-up chunk per mode first (compilation; for DQN also the filling of the replay
buffer up to ``learning_starts``, which needs no updates). Then ``--chunks`` timed
chunks per mode, interleaved round by round (sequential K seeds, then the vmapped K
seeds) so that drifts in machine speed hit both alike; each chunk ends with
``jax.block_until_ready``. Updates are counted from the states, not assumed.

Usage: ``python experiments/bench_vmap_seeds.py [--algo ppo|dqn|dueling_dqn|reinforce]
[--seeds 4] [--chunks 3]``. No target is set; the figures are in docs/results/README.md ("Seed
spread").
"""

from __future__ import annotations

import argparse
import platform
import time

import jax
import numpy as np

from c4jax import games
from c4jax.learning import loop, stacked
from c4jax.learning.dqn import DQN, DQNConfig
from c4jax.learning.ppo import PPO, PPOConfig
from c4jax.learning.reinforce import Reinforce, ReinforceConfig

C4 = games.make(games.DEFAULT)
ALGOS = {
    "ppo": lambda: (PPO(PPOConfig(), C4), PPOConfig().width),
    "reinforce": lambda: (Reinforce(ReinforceConfig(), C4), ReinforceConfig().width),
    "dqn": lambda: (DQN(DQNConfig()), DQNConfig().width),
    "dueling_dqn": lambda: (DQN(DQNConfig(dueling=True)), DQNConfig().width),
}


def _updates(state) -> np.ndarray:
    return np.asarray(jax.device_get(state.updates))


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--algo", choices=sorted(ALGOS), default="ppo")
    p.add_argument("--seeds", type=int, default=4, help="K: seeds trained (default 4)")
    p.add_argument("--chunks", type=int, default=3, help="timed chunks per mode after the warm-up (default 3)")
    p.add_argument("--init-from", default="supervised",
                   help="start weights, as the trainers' --init-from ('' = from scratch)")
    args = p.parse_args(argv)
    if args.seeds < 2:
        p.error("--seeds must be >= 2")
    if args.chunks < 1:
        p.error("--chunks must be >= 1")

    algo, width = ALGOS[args.algo]()
    cfg = loop.LoopConfig(out="unused", game=algo.game.id, init_from=args.init_from)
    source = loop.source_params(cfg, width)
    singles = [loop.initial_state(algo, cfg, width, s, source) for s in range(args.seeds)]
    batch = stacked.stack_seeds(singles)
    vchunk = jax.jit(jax.vmap(algo.chunk))

    def run_sequential(states):
        out = []
        for s in states:
            s, _ = algo.chunk(s)
            out.append(jax.block_until_ready(s))
        return out

    def run_vmapped(state):
        state, _ = vchunk(state)
        return jax.block_until_ready(state)

    t0 = time.perf_counter()
    singles = run_sequential(singles)
    batch = run_vmapped(batch)
    print(f"{args.algo}: {args.seeds} seeds; warm-up (compile{', buffer fill' if 'dqn' in args.algo else ''}) "
          f"{time.perf_counter() - t0:.1f} s")

    seq_s, vm_s, seq_upd, vm_upd = 0.0, 0.0, 0, 0
    for r in range(args.chunks):
        before = sum(int(_updates(s)) for s in singles)
        t = time.perf_counter()
        singles = run_sequential(singles)
        dt_seq = time.perf_counter() - t
        n_seq = sum(int(_updates(s)) for s in singles) - before
        before = int(_updates(batch).sum())
        t = time.perf_counter()
        batch = run_vmapped(batch)
        dt_vm = time.perf_counter() - t
        n_vm = int(_updates(batch).sum()) - before
        seq_s, vm_s, seq_upd, vm_upd = seq_s + dt_seq, vm_s + dt_vm, seq_upd + n_seq, vm_upd + n_vm
        print(f"  round {r + 1}: sequential {n_seq:,} updates in {dt_seq:.2f} s; "
              f"vmapped {n_vm:,} updates in {dt_vm:.2f} s")

    seq_rate, vm_rate = seq_upd / seq_s, vm_upd / vm_s
    ratio = vm_rate / seq_rate
    dev = jax.devices()[0]
    print(f"device: {dev.platform} ({platform.machine()}, {jax.device_count()} device(s)), jax {jax.__version__}")
    print(f"sequential ({args.seeds} single runs): {seq_rate:,.0f} updates/s")
    print(f"vmapped ({args.seeds} seeds in one program): {vm_rate:,.0f} updates/s")
    print(f"ratio vmapped / sequential: {ratio:.2f}x")
    return {"algo": args.algo, "seeds": args.seeds, "sequential_updates_per_s": seq_rate,
            "vmapped_updates_per_s": vm_rate, "ratio": ratio}


if __name__ == "__main__":
    loop.exit_on_error(main)
