"""Benchmark: pure-MCTS search throughput of c4jax (its batched search + the jitted environment) against
OpenSpiel's C++ MCTS bot with random rollouts.

What is measured
----------------
c4jax: ``c4jax.agents.search.run`` with the pure-MCTS evaluator (uniform prior, one random
playout per expanded node) and UCT selection as ``agents.load("mcts<N>")`` plays it,
``--simulations`` per move, on a batch of B positions at each
batch size of ``--batch-sizes``: one measured call is one jitted search of the whole batch
(``jax.block_until_ready`` on its visit counts). Simulations/s = B * simulations / time,
moves/s = B / time.

OpenSpiel: ``pyspiel.MCTSBot`` (UCT, c = 2, no solver) with a ``RandomRolloutEvaluator`` of
one rollout, the same simulations per move, on ``connect_four``. The bot is not batched: it
searches one position at a time; one measured call searches every position once.
Simulations/s = positions * simulations / time. The ratio is c4jax / OpenSpiel simulations/s.

AlphaZero self-play: one self-play move of B games as ``experiments/alphazero.py`` makes it
(``c4jax.agents.network_search.search``: Gumbel MuZero guided by the two-headed CNET128, ``--az-simulations``
per move, then ``env.step``), one jitted call per move of the whole batch; moves/s = B / time,
simulations/s = B * simulations / time. The network is freshly initialised: the cost of a
simulation does not depend on the weights.

Positions: the 50 openings of the tournament protocol (the empty board and the 49 boards after
two moves), cycled to fill a batch; OpenSpiel searches the same 50.

How
---
Each jitted c4jax search is called once first (compilation excluded), then ``--repeats``
timed calls; the median is reported. OpenSpiel gets one untimed warm-up pass, then
``--repeats`` timed passes over the 50 positions, median reported.

Usage: ``python experiments/bench_search.py [--batch-sizes 1 256 4096] [--simulations 100]
[--repeats 3] [--out docs/results/bench_search.md]`` (``pip install -e '.[bench-search]'``
for OpenSpiel; without it the OpenSpiel columns are left empty with a printed note).
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

from c4jax.agents import network_search, search
from c4jax.evaluation.protocol import openings
from c4jax.games.connect_four import env
from c4jax.games.connect_four.game import GAME as C4
from c4jax.nets import cnet

UCT_C = 2.0  # OpenSpiel's UCT exploration constant (its examples' default)


def c4jax_seconds(batch: int, simulations: int, repeats: int) -> float:
    """Median seconds of one jitted pure-MCTS search of ``batch`` protocol openings."""
    states, _ = openings(C4)
    idx = jnp.arange(batch) % states.done.shape[0]
    batch_states = jax.device_put(jax.tree.map(lambda x: x[idx], states))
    keys = jax.random.split(jax.random.key(0), batch)
    fn = jax.jit(lambda s, k: search.run(search.RolloutEvaluator(C4), None, s, k, simulations, game=C4,
                                         rule="uct", uct_c=search.UCT_C).visit_counts)
    counts = jax.block_until_ready(fn(batch_states, keys))  # compile + warm-up, not timed
    if not bool((np.asarray(counts).sum(-1) == simulations).all()):
        raise RuntimeError("c4jax search: a root did not receive every simulation")
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(batch_states, keys))
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def alphazero_seconds(batch: int, simulations: int, repeats: int) -> float:
    """Median seconds of one AlphaZero self-play move (search + step) of ``batch`` games."""
    states, _ = openings(C4)
    idx = jnp.arange(batch) % states.done.shape[0]
    batch_states = jax.device_put(jax.tree.map(lambda x: x[idx], states))
    params = cnet.init_params(jax.random.key(0), heads="two")

    def move(p, s, k):
        out = network_search.search(p, s, k, num_simulations=simulations, game=C4)
        return jax.vmap(env.step)(s, out.action)

    fn = jax.jit(move)
    jax.block_until_ready(fn(params, batch_states, jax.random.key(1)))  # compile + warm-up, not timed
    times = []
    for i in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(params, batch_states, jax.random.key(2 + i)))
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def openspiel_seconds(simulations: int, repeats: int) -> tuple[float, int] | None:
    """(median seconds of one pass over the 50 openings, positions) with OpenSpiel's MCTSBot,
    or None when ``open_spiel`` is not installed."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("connect_four")
    _, moves = openings(C4)
    positions = []
    for m in np.asarray(moves):
        state = game.new_initial_state()
        for col in m:
            if col >= 0:
                state.apply_action(int(col))
        positions.append(state)
    bot = pyspiel.MCTSBot(game, pyspiel.RandomRolloutEvaluator(1, 0), UCT_C, simulations, 10**6, False, 0, False)

    def one_pass():
        for state in positions:
            bot.step(state)

    one_pass()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        one_pass()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(positions)


def markdown(rows: list[dict], os_rate: float | None, args, command: str, header: str,
             az_rows: list[dict] | None = None) -> str:
    lines = [
        "# Search throughput: c4jax pure MCTS (batched) vs OpenSpiel's C++ MCTS, and AlphaZero self-play",
        "",
        f"Made by `{command}`.",
        "",
        header,
        "",
        f"{args.simulations} simulations per move, one random playout per simulation, positions: the 50",
        "protocol openings (cycled to fill a batch). OpenSpiel searches one position at a time.",
        "",
        "| batch | c4jax simulations/s | c4jax moves/s | OpenSpiel simulations/s (batch 1) | c4jax / OpenSpiel |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        os_col = f"{os_rate:,.0f}" if os_rate else "n/a"
        ratio = f"{r['sims_per_s'] / os_rate:.2f}x" if os_rate else "n/a"
        lines.append(f"| {r['batch']} | {r['sims_per_s']:,.0f} | {r['moves_per_s']:,.1f} | {os_col} | {ratio} |")
    if az_rows:
        lines += ["", f"AlphaZero self-play (Gumbel MuZero, CNET128 two heads, {args.az_simulations} simulations per "
                  "move; one move of every game per call):", "",
                  "| batch | simulations/s | self-play moves/s |", "| ---: | ---: | ---: |"]
        lines += [f"| {r['batch']} | {r['sims_per_s']:,.0f} | {r['moves_per_s']:,.1f} |" for r in az_rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 256, 4096],
                   help="c4jax batch sizes (default 1 256 4096)")
    p.add_argument("--simulations", type=int, default=100, help="simulations per move (default 100)")
    p.add_argument("--az-simulations", type=int, default=32,
                   help="simulations per AlphaZero self-play move (default 32; 0 = skip the AlphaZero part)")
    p.add_argument("--repeats", type=int, default=3, help="timed calls per measurement; median reported (default 3)")
    p.add_argument("--out", default="docs/results/bench_search.md",
                   help="markdown table written here ('' = do not write; default docs/results/bench_search.md)")
    args = p.parse_args(argv)
    if any(b < 1 for b in args.batch_sizes):
        p.error("--batch-sizes must be >= 1")
    if not 1 <= args.simulations <= search.MAX_SIMULATIONS:
        p.error(f"--simulations must be in 1..{search.MAX_SIMULATIONS}")
    if args.repeats < 1:
        p.error("--repeats must be >= 1")
    if not 0 <= args.az_simulations <= search.MAX_SIMULATIONS:
        p.error(f"--az-simulations must be in 0..{search.MAX_SIMULATIONS}")

    dev = jax.devices()[0]
    load = f", load average {os.getloadavg()[0]:.1f} at the start" if hasattr(os, "getloadavg") else ""
    header = (f"Device: {dev.platform} ({platform.machine()}, {jax.device_count()} device(s), "
              f"{os.cpu_count()} CPU cores{load}), jax {jax.__version__}")
    print(header)
    os_result = openspiel_seconds(args.simulations, args.repeats)
    os_rate = None
    if os_result is None:
        print("note: open_spiel is not installed (pip install -e '.[bench-search]'): OpenSpiel part skipped")
    else:
        seconds, n = os_result
        os_rate = n * args.simulations / seconds
        print(f"OpenSpiel MCTSBot: {os_rate:,.0f} simulations/s, {n / seconds:,.1f} moves/s")
    rows = []
    for b in args.batch_sizes:
        seconds = c4jax_seconds(b, args.simulations, args.repeats)
        row = {"batch": b, "seconds": seconds, "sims_per_s": b * args.simulations / seconds,
               "moves_per_s": b / seconds}
        rows.append(row)
        ratio = f", {row['sims_per_s'] / os_rate:.2f}x OpenSpiel" if os_rate else ""
        print(f"c4jax batch {b}: {row['sims_per_s']:,.0f} simulations/s, {row['moves_per_s']:,.1f} moves/s{ratio}",
              flush=True)
    az_rows = []
    for b in args.batch_sizes if args.az_simulations else []:
        seconds = alphazero_seconds(b, args.az_simulations, args.repeats)
        az_rows.append({"batch": b, "seconds": seconds, "sims_per_s": b * args.az_simulations / seconds,
                        "moves_per_s": b / seconds})
        print(f"AlphaZero self-play batch {b}: {az_rows[-1]['sims_per_s']:,.0f} simulations/s, "
              f"{az_rows[-1]['moves_per_s']:,.1f} moves/s", flush=True)
    command = "python experiments/bench_search.py " + " ".join(sys.argv[1:] if argv is None else argv)
    table = markdown(rows, os_rate, args, command.strip(), header, az_rows)
    print(table)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(table)
        print(f"wrote {args.out}")
    return {"c4jax": rows, "alphazero": az_rows, "openspiel_sims_per_s": os_rate}


if __name__ == "__main__":
    main()
