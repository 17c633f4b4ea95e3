"""Benchmark: training throughput against the number of devices, in one run.

What is measured
----------------
The training chunk that ``loop.run`` calls between evaluations (self-play, buffers and
updates: one jitted program), on the first N devices for every N of ``--devices``, as
``--devices N`` trains: one seed, the games, buffers and minibatches split over the
devices with the parameters replicated (``--shard batch``; ``--vmap-seeds K`` with
``--shard auto`` splits whole seeds instead when N divides K). Figures: gradient updates
per second and self-play games per second; ratio = that of N devices / that of 1 device.
Evaluation matches and checkpoints are left out. "work per device" is XLA's flop count of the
compiled chunk that one device runs, relative to the one-device program: about 1 / N when a
split really divides the work.

Without accelerators the devices are forced CPU host devices: the script sets
``XLA_FLAGS=--xla_force_host_platform_device_count=<max N>`` before JAX is imported. They
share the machine's cores, so they show that the split runs and what it costs, not a
speed-up: on a 2-core CPU, N forced devices do the same work on the same 2 cores, plus the
collectives between them.

How
---
Every configuration starts from the same state (the trainers' own initial state of seed 0;
PPO from the shipped supervised weights, AlphaZero from scratch). One warm-up chunk per N
(compilation; AlphaZero's buffer fills), then ``--chunks`` timed chunks per N, interleaved
round by round (N = 1, 2, 4, then again) so that drifts in machine speed hit every N alike;
each chunk ends with ``jax.block_until_ready``. Updates and games are counted from the
states.

Usage: ``python experiments/bench_devices.py [--algos ppo alphazero] [--devices 1 2 4]
[--chunks 3]``. Results: docs/results/bench_devices.md.
"""

from __future__ import annotations

import argparse
import os
import sys


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--algos", nargs="+", choices=("ppo", "alphazero", "dqn", "reinforce"), default=["ppo", "alphazero"])
    p.add_argument("--devices", nargs="+", type=int, default=[1, 2, 4], help="device counts to compare (default 1 2 4)")
    p.add_argument("--chunks", type=int, default=3, help="timed chunks per device count after the warm-up (default 3)")
    p.add_argument("--vmap-seeds", type=int, default=1, help="K seeds per run (default 1)")
    p.add_argument("--shard", choices=("auto", "batch", "seeds"), default="auto", help="split of N > 1 devices")
    p.add_argument("--init-from", default="supervised", help="start weights of PPO, DQN and REINFORCE")
    return p


def _force_host_devices(n: int) -> None:
    """Give the CPU backend ``n`` devices, unless JAX has started or the flag is set already."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "jax" not in sys.modules and "xla_force_host_platform_device_count" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={n}".strip()


def _algorithms(init_from: str) -> dict:
    from c4jax import games
    from c4jax.learning.alphazero import AlphaZero, AlphaZeroConfig
    from c4jax.learning.dqn import DQN, DQNConfig
    from c4jax.learning.ppo import PPO, PPOConfig
    from c4jax.learning.reinforce import Reinforce, ReinforceConfig

    az = AlphaZeroConfig(iterations_per_eval=1)  # the defaults, one self-play iteration per chunk
    game = games.make(games.DEFAULT)
    return {  # name: (algorithm, width, init_from, settings shown in the table)
        "ppo": (PPO(PPOConfig(), game), 128, init_from, "thesis defaults: 160 games, buffer 2,000, 5 epochs of minibatch 32"),
        "alphazero": (AlphaZero(az, game), az.width, "", f"{az.games} games x {az.num_simulations} simulations, "
                      f"{az.updates_per_iteration} updates of batch {az.batch_size} per iteration"),
        "dqn": (DQN(DQNConfig(episodes_per_iteration=16, updates_per_episode=25, eval_every=2000, learning_starts=2000), game),
                128, init_from, "16 games and 400 updates of batch 48 per iteration"),
        "reinforce": (Reinforce(ReinforceConfig(), game), 128, init_from, "20 games per collect, 100 episodes per chunk"),
    }


def _flops_per_device(chunk, state) -> float:
    """XLA's cost analysis of the compiled chunk: the floating-point operations of one device's
    program (a loop body counted once), to show that a split really divides the work."""
    import jax

    cost = jax.jit(chunk).lower(state).compile().cost_analysis()
    cost = cost[0] if isinstance(cost, (list, tuple)) and cost else cost
    return float(cost.get("flops", float("nan"))) if cost else float("nan")


def main(argv: list[str] | None = None) -> dict:
    args = _parser().parse_args(argv)
    if args.chunks < 1:
        _parser().error("--chunks must be >= 1")
    if min(args.devices) < 1:
        _parser().error("--devices must be >= 1")
    _force_host_devices(max(args.devices))

    import jax

    from c4jax.io import checkpoint, devices

    available = jax.devices()
    if max(args.devices) > len(available):
        print(f"error: --devices {max(args.devices)}: only {len(available)} device(s) available (on a CPU, run the "
              "script in a fresh process: it forces host devices before JAX starts)", file=sys.stderr)
        raise SystemExit(2)
    try:
        return _bench(args, available)
    except (checkpoint.CheckpointError, devices.DeviceError) as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


def _bench(args, available: list) -> dict:
    import platform
    import time

    import jax
    import numpy as np

    from c4jax.learning import loop, placement, stacked

    counts = sorted(set(args.devices))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    rows = []
    for name in args.algos:
        algo, width, init_from, settings = _algorithms(args.init_from)[name]
        cfg = loop.LoopConfig(out="unused", game=algo.game.id, init_from=init_from)
        source = loop.source_params(cfg, width)
        fresh = stacked.stack_seeds([loop.initial_state(algo, cfg, width, s, source) for s in range(args.vmap_seeds)])
        runs = {}
        t0 = time.perf_counter()
        for n in counts:
            where = placement.plan(algo, n, args.vmap_seeds, args.shard)
            with where.context():
                chunk, state = stacked.make_chunk(algo, args.vmap_seeds, where, fresh)
                flops = _flops_per_device(chunk, state)
                state, _ = chunk(state)
                runs[n] = {"placement": where, "chunk": chunk, "state": jax.block_until_ready(state),
                           "seconds": 0.0, "updates": 0, "games": 0, "flops": flops}
        print(f"{name}: warm-up (compile{', buffer fill' if name in ('alphazero', 'dqn') else ''}) "
              f"{time.perf_counter() - t0:.1f} s for {counts} devices", flush=True)
        for r in range(args.chunks):
            for n in counts:
                run = runs[n]
                before = jax.device_get((run["state"].updates, run["state"].episodes))
                t = time.perf_counter()
                with run["placement"].context():
                    state, _ = run["chunk"](run["state"])
                    state = jax.block_until_ready(state)
                dt = time.perf_counter() - t
                after = jax.device_get((state.updates, state.episodes))
                run["state"] = state
                run["seconds"] += dt
                run["updates"] += int(np.sum(after[0]) - np.sum(before[0]))
                run["games"] += int(np.sum(after[1]) - np.sum(before[1]))
            print(f"  round {r + 1}: " + ", ".join(f"{n} dev {runs[n]['seconds'] / (r + 1):.2f} s/chunk" for n in counts),
                  flush=True)
        base = runs[counts[0]]
        for n in counts:
            run = runs[n]
            rows.append({"algo": name, "settings": settings, "devices": n, "split": run["placement"].mode,
                         "updates_per_s": run["updates"] / run["seconds"], "games_per_s": run["games"] / run["seconds"],
                         "ratio": (run["updates"] / run["seconds"]) / (base["updates"] / base["seconds"]),
                         "work": run["flops"] / base["flops"]})

    dev = available[0]
    where = (f"{dev.platform} ({platform.machine()}, {os.cpu_count()} cores; forced host devices)" if dev.platform == "cpu"
             else f"{dev.platform} ({dev.device_kind})")
    print(f"\ndevice: {where}, load average {load:.1f} at the start, jax {jax.__version__}; {args.chunks} timed chunks "
          f"per row, K = {args.vmap_seeds}")
    print("\n| algorithm | devices | split | updates/s | self-play games/s | ratio vs 1 device | work per device |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: |")
    for row in rows:
        print(f"| {row['algo']} | {row['devices']} | {row['split']} | {row['updates_per_s']:,.0f} | "
              f"{row['games_per_s']:,.1f} | {row['ratio']:.2f}x | {row['work']:.2f} |")
    print("\nwork per device: XLA's flop count of the compiled chunk for one device, relative to one device's")
    print()
    for name in args.algos:
        print(f"- {name}: {_algorithms(args.init_from)[name][3]}")
    return {"device": where, "load": load, "rows": rows}


if __name__ == "__main__":
    main()
