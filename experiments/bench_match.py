"""Benchmark: one protocol match of another game than Connect Four, each agent asked only where it
moves (``compact``, what ``evaluation.match`` plays) against both agents asked about every game.

What is measured
----------------
The 100-game match program ``c4jax.evaluation.protocol._play_game`` of agents A and B (default:
``checkers/mcts50`` against ``checkers/alphazero@0``), compiled ahead of the timing for each mode:
``compact=False`` asks both agents about all 100 games at every ply until the longest game ends;
``compact=True`` gathers the games where an agent is to move into the smallest of a few batch
sizes (``arena.compact_capacities``). Figure: seconds per match; ratio = full / compact. Both
modes play the same key; deterministic agents play the same games in both (printed), sampling
agents other games of the same kind.

Usage: ``python experiments/bench_match.py [A B] [--repeats 1] [--out FILE.md]``. No target is
set; the figures are in docs/results/bench_match.md.
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


def _time(compiled, args, repeats: int) -> tuple[float, dict]:
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = jax.block_until_ready(compiled(*args))
        best = min(best, time.perf_counter() - start)
    return best, jax.tree.map(np.asarray, out)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a", nargs="?", default="checkers/mcts50", help="agent A (default checkers/mcts50)")
    p.add_argument("b", nargs="?", default="checkers/alphazero@0", help="agent B (default checkers/alphazero@0)")
    p.add_argument("--repeats", type=int, default=1, help="timed matches per mode; the fastest counts (default 1)")
    p.add_argument("--seed", type=int, default=0, help="the match key (default 0)")
    p.add_argument("--out", type=Path, default=None, help="also write the result as a Markdown table here")
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error("--repeats must be >= 1")
    try:
        a, b = agents.load(args.a), agents.load(args.b)
    except (ValueError, OSError) as e:
        p.error(str(e))
    game = getattr(a, "game", CONNECT_FOUR)
    if game.id == CONNECT_FOUR.id or getattr(b, "game", CONNECT_FOUR).id != game.id:
        p.error(f"A and B must play the same game, another than Connect Four (whose matches never compact); "
                f"got {args.a!r} and {args.b!r}")
    moves, _, a_to_move = protocol.seats(game)
    call = (a, b, jax.random.key(args.seed), jnp.asarray(moves), jnp.asarray(a_to_move))
    result = {"a": a.name, "b": b.name, "game": game.id}
    outs = {}
    for compact in (False, True):
        start = time.perf_counter()
        compiled = protocol._play_game.lower(*call, game, compact=compact).compile()
        result[f"compile_s_{'compact' if compact else 'full'}"] = time.perf_counter() - start
        seconds, outs[compact] = _time(compiled, call, args.repeats)
        result[f"{'compact' if compact else 'full'}_s"] = seconds
    result["ratio"] = result["full_s"] / result["compact_s"]
    result["same_games"] = all(np.array_equal(outs[False][k], outs[True][k]) for k in outs[False])
    result["mean_length"] = float(outs[True]["length"].mean())
    result["longest"] = int(max(outs[False]["length"].max(), outs[True]["length"].max()))
    machine = f"{platform.machine()}, {len(jax.devices())} {jax.default_backend()} device(s), jax {jax.__version__}"
    lines = [
        f"{result['a']} vs {result['b']} ({game.id}), one 100-game protocol match, key {args.seed}; {machine}",
        f"  every game, both agents:  {result['full_s']:.1f} s (compile {result['compile_s_full']:.1f} s)",
        f"  only where each moves:    {result['compact_s']:.1f} s (compile {result['compile_s_compact']:.1f} s)",
        f"  ratio full / compact: {result['ratio']:.2f}x; the same games: {result['same_games']}; "
        f"mean length {result['mean_length']:.1f} plies, longest {result['longest']}",
    ]
    print("\n".join(lines))
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            f"# A {game.id} match: each agent asked only where it moves, against every game asked\n\n"
            "One 100-game protocol match per mode, compiled ahead (compile time excluded: "
            f"{result['compile_s_full']:.0f} s for every game, {result['compile_s_compact']:.0f} s for the "
            "compacted program, which holds each agent's search once per batch size).\n\n"
            "| A | B | every game, both agents (s) | only where each moves (s) | ratio | same games | mean / longest game (plies) |\n"
            "| --- | --- | ---: | ---: | ---: | --- | ---: |\n"
            f"| {result['a']} | {result['b']} | {result['full_s']:.1f} | {result['compact_s']:.1f} | "
            f"{result['ratio']:.2f}x | {'yes' if result['same_games'] else 'no'} | "
            f"{result['mean_length']:.1f} / {result['longest']} |\n\n"
            f"`python experiments/bench_match.py {' '.join(argv if argv is not None else sys.argv[1:])}`; {machine}.\n")
    return result


if __name__ == "__main__":
    main()
