"""Benchmark: how the cost of a network-guided search grows with its simulations, for mctx's Gumbel
MuZero policy (``name@<N>nosolve``) and for c4jax's own PUCT search with proven values (``name@<N>solve``).

What is measured
----------------
One move of a two-headed network agent (default ``checkers/alphazero``) from B positions at once:
``jax.jit(agent.act_states)`` on the game's protocol openings (cycled to fill B), at each number of
simulations of ``--simulations``, for

- ``gumbel``: ``<agent>@<N>nosolve``, :func:`c4jax.agents.network_search.search` through
  ``mctx.gumbel_muzero_policy`` (how the agent plays without proven values);
- ``solve``: ``<agent>@<N>solve``, :func:`c4jax.agents.search.run` with PUCT and proven values
  (MCTS-Solver), the same network scoring every node.

and, at each number of ``--mcts-simulations``, the game's pure MCTS with proven values
(``checkers/mcts<N>``, ``mcts<N>`` for Connect Four: UCT, one random playout per node), the opponent
of the protocol matches, so that a match's cost can be read against its simulations.

Each program is compiled and called once first (excluded), then ``--repeats`` timed calls; the
fastest counts. Figures: seconds per call, and milliseconds per simulation (per call / N) so that
a cost linear in N shows as a flat column. Ratio = gumbel / solve at the same N.

Why: mctx backs the value up each tree with a ``vmap``-ed ``while_loop``, which JAX batches by
selecting between the old and the new tree (every array of the search tree, [B, N + 1, A] for the
edges) at every step up the path, so a simulation costs in proportion to the tree and a search to
N squared; c4jax's search (:func:`c4jax.agents.search_tree.backward`) scatters into the batch's trees
with one loop instead. With Checkers' 256 actions the tree is large, and the difference decides
whether a 500-simulation agent can play a 100-game match on a CPU in minutes or in hours.

Usage: ``python experiments/bench_network_search.py [--agent checkers/alphazero] [--simulations 50
100 200 500] [--mcts-simulations 500 1000 2000] [--batch 8] [--repeats 2] [--out FILE.md]``. No
target is set; the figures back docs/results/checkers' account of why its agents search with
proven values, and of what its matches against pure MCTS cost.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from c4jax import agents
from c4jax.evaluation import protocol
from c4jax.games.connect_four.game import GAME as CONNECT_FOUR
from c4jax.io import runlog

MODES = {"gumbel": "nosolve", "solve": "solve"}


def positions(game, batch: int):
    """The game's protocol openings, cycled to ``batch`` states."""
    moves, _ = protocol.game_openings(game)
    states = protocol.match_states(game, jnp.asarray(moves))
    index = np.arange(batch) % moves.shape[0]
    return jax.tree.map(lambda x: x[index], states)


def mcts_name(game, simulations) -> str:
    """The name of ``game``'s pure MCTS with ``simulations`` per move (proven values, as matches play it)."""
    return f"mcts{simulations}" if game.id == CONNECT_FOUR.id else f"{game.id}/mcts{simulations}"


def seconds_per_call(agent, states, repeats: int) -> float:
    act = jax.jit(agent.act_states)
    jax.block_until_ready(act(states, jax.random.key(0)))  # compile and warm up
    best = float("inf")
    for r in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(act(states, jax.random.key(1 + r)))
        best = min(best, time.perf_counter() - start)
    return best


def _shown(argv: list[str]) -> list[str]:
    """The flags as the table's command line shows them: an ``--out`` outside the working directory by
    its file name only (no machine's absolute path in a generated file)."""
    shown = list(argv)
    for i, flag in enumerate(shown[:-1]):
        if flag == "--out":
            path = runlog.display_path(shown[i + 1])
            shown[i + 1] = Path(path).name if Path(path).is_absolute() else path
    return shown


def main(argv: list[str] | None = None) -> dict[str, list[dict]]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--agent", default="checkers/alphazero",
                   help="a two-headed network agent, without @N (default checkers/alphazero)")
    p.add_argument("--simulations", type=int, nargs="+", default=[50, 100, 200, 500],
                   help="simulations per move to time (default 50 100 200 500)")
    p.add_argument("--mcts-simulations", type=int, nargs="*", default=[500, 1000, 2000],
                   help="simulations per move to time for the game's pure MCTS with proven values, the matches' "
                        "opponent (default 500 1000 2000; none: no such table)")
    p.add_argument("--batch", type=int, default=8, help="positions searched at once (default 8)")
    p.add_argument("--repeats", type=int, default=2, help="timed calls per setting; the fastest counts (default 2)")
    p.add_argument("--out", type=Path, default=None, help="also write the result as a Markdown table here")
    args = p.parse_args(argv)
    if args.batch < 1 or args.repeats < 1 or min(args.simulations + args.mcts_simulations) < 1:
        p.error("--batch, --repeats and every --simulations and --mcts-simulations must be >= 1")
    if "@" in args.agent:
        p.error(f"--agent takes a name without @N (the benchmark sets the search), got {args.agent!r}")
    try:
        base = agents.load(args.agent)
        found = {(n, mode): agents.load(f"{args.agent}@{n}{flag}")
                 for n in args.simulations for mode, flag in MODES.items()}
    except (ValueError, OSError) as e:
        p.error(str(e))
    game = getattr(base, "game", CONNECT_FOUR)
    pure = {n: agents.load(mcts_name(game, n)) for n in args.mcts_simulations}
    states = positions(game, args.batch)
    rows = []
    for n in args.simulations:
        row = {"simulations": n}
        for mode in MODES:
            row[mode] = seconds_per_call(found[n, mode], states, args.repeats)
            print(f"{found[n, mode].name}: {row[mode]:.3f} s per call of {args.batch} positions", flush=True)
        row["ratio"] = row["gumbel"] / row["solve"]
        rows.append(row)
    mcts_rows = []
    for n in args.mcts_simulations:
        mcts_rows.append({"simulations": n, "mcts": seconds_per_call(pure[n], states, args.repeats)})
        print(f"{pure[n].name}: {mcts_rows[-1]['mcts']:.3f} s per call of {args.batch} positions", flush=True)
    machine = f"{platform.machine()}, {len(jax.devices())} {jax.default_backend()} device(s), jax {jax.__version__}"
    lines = [
        f"`{args.agent}` ({game.id}), one move of {args.batch} positions (the protocol openings) per call, "
        f"the fastest of {args.repeats} timed calls; {machine}", "",
        "| simulations | Gumbel (mctx) s | ms / simulation | PUCT + proofs (c4jax) s | ms / simulation | ratio |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
        *[f"| {r['simulations']} | {r['gumbel']:.3f} | {1e3 * r['gumbel'] / r['simulations']:.2f} | "
          f"{r['solve']:.3f} | {1e3 * r['solve'] / r['simulations']:.2f} | {r['ratio']:.1f}x |" for r in rows],
    ]
    if mcts_rows:
        lines += [
            "", f"Pure MCTS with proven values, `{mcts_name(game, '<N>')}` (UCT, one random playout per node), "
            "on the same positions:", "",
            "| simulations | pure MCTS s | ms / simulation |", "| ---: | ---: | ---: |",
            *[f"| {r['simulations']} | {r['mcts']:.3f} | {1e3 * r['mcts'] / r['simulations']:.2f} |" for r in mcts_rows],
        ]
    text = "\n".join(lines)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        command = "python experiments/bench_network_search.py " + " ".join(_shown(argv if argv is not None else sys.argv[1:]))
        args.out.write_text(f"# Network search cost against simulations\n\nMade by `{command.strip()}`.\n\n{text}\n")
    return {"network": rows, "mcts": mcts_rows}


if __name__ == "__main__":
    main()
