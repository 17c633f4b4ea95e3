"""Benchmark: a game's rules exported as ONNX (c4jax.agents.rules_export) against the JAX kit.

    python experiments/bench_rules_onnx.py [--games connect_four checkers tic_tac_toe] [--batches 1 64]

For each game: the conversion time and size of the ``init`` and ``step`` models, then the time of one
step of a batch of B games in onnxruntime (Python, CPU, one intra-op thread, outputs the new state and
its views) and in JAX (``jit(vmap(game.step))`` followed by the same views, ``block_until_ready``), each
the median of ``--repeats`` calls after a warm-up, on states reached by random play; the ratio is
onnxruntime / JAX. ``tic_tac_toe`` is the guide's example game (docs/guide/extend.md, "Adding a game"),
registered from a temporary folder as the tests do.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from c4jax import games
from c4jax.agents import rules_export

SUPPORT = Path(__file__).resolve().parent.parent / "tests" / "support"


def _median_seconds(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _positions(game, runtime, batch: int, plies: int, seed: int):
    """A batch of states after up to ``plies`` random legal moves (each game stops before it would end)."""
    rng = np.random.default_rng(seed)
    state, views = runtime.init(batch)
    for _ in range(plies):
        mask = views["legal_action_mask"]
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask], np.int32)
        after, after_views = runtime.step(state, actions)
        keep = ~after_views["done"]
        if not keep.any():
            break
        state = {k: np.where(keep.reshape((-1,) + (1,) * (v.ndim - 1)), after[k], v) for k, v in state.items()}
        views = {k: np.where(keep.reshape((-1,) + (1,) * (v.ndim - 1)), after_views[k], v) for k, v in views.items()}
    return state, views, rng


def bench(game, batches: list[int], repeats: int) -> None:
    start = time.perf_counter()
    init_model = rules_export.to_model(game, "init")
    step_model = rules_export.to_model(game, "step")
    seconds = time.perf_counter() - start
    sizes = [len(m.SerializeToString()) for m in (init_model, step_model)]
    nodes = [len(m.graph.node) for m in (init_model, step_model)]
    print(f"## {game.id}\n")
    print(f"- models: init {sizes[0] / 1024:.1f} KiB ({nodes[0]} nodes), step {sizes[1] / 1024:.1f} KiB "
          f"({nodes[1]} nodes); conversion of both {seconds:.1f} s")
    runtime = rules_export.Runtime.load(game, init_model, step_model, threads=1)

    @jax.jit
    def jax_step(state, actions):
        after = jax.vmap(game.step)(state, actions)
        return after, rules_export.views(game, after)

    print("\n| B | onnxruntime step | JAX jitted step | ratio ORT/JAX |\n|---:|---:|---:|---:|")
    for batch in batches:
        state, views, rng = _positions(game, runtime, batch, plies=game.max_steps // 4, seed=batch)
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in views["legal_action_mask"]],
                           np.int32)
        ort_s = _median_seconds(lambda: runtime.step(state, actions), repeats)
        jax_state, jax_actions = rules_export.unflatten(game, state), jnp.asarray(actions)
        jax_s = _median_seconds(lambda: jax.block_until_ready(jax_step(jax_state, jax_actions)), repeats)
        print(f"| {batch} | {ort_s * 1e6:,.0f} µs | {jax_s * 1e6:,.0f} µs | {ort_s / jax_s:.2f}x |")
    print()


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--games", nargs="+", default=["connect_four", "checkers", "tic_tac_toe"])
    p.add_argument("--batches", type=int, nargs="+", default=[1, 64])
    p.add_argument("--repeats", type=int, default=50, help="timed calls per figure (median)")
    args = p.parse_args(argv)
    import onnxruntime

    print("# Rules as ONNX: size and step time\n")
    print(f"- jax {jax.__version__}, onnxruntime {onnxruntime.__version__}, CPU\n")
    for game_id in args.games:
        if game_id == "tic_tac_toe" and game_id not in games.GAMES:
            sys.path.insert(0, str(SUPPORT))
            from guide_games import registered

            with tempfile.TemporaryDirectory() as root, registered(Path(root), "tictactoe", "tic_tac_toe") as game:
                bench(game, args.batches, args.repeats)
        else:
            bench(games.make(game_id), args.batches, args.repeats)


if __name__ == "__main__":
    main()
