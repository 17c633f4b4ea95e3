"""Benchmark: c4jax environment throughput against pgx, and baseline-agent decision rates.

What is measured
----------------
1. Random-play environment steps per second, for c4jax and for pgx's ``connect_four``
   in the same process, at each batch size of ``--batch-sizes``. One measured call is
   a jitted ``lax.scan`` of ``--steps`` plies over a ``vmap``-ed batch of games with
   auto-reset: a game that ends is replaced by the initial state inside the scan, so
   every ply of every game is a real environment step. Steps/s = batch * steps / time.
2. Decisions per second of the 1StepLA and 2StepLA baseline agents (``c4jax.agents``)
   at ``--agent-batch`` boards: one measured call is ``jax.jit``-ed ``agent.act`` on
   random non-terminal positions (``env.random_initial_state`` + ``env.observe``).

How
---
Every jitted function is called once first (compilation and warm-up excluded), then
``--repeats`` timed calls, each ended with ``jax.block_until_ready``; the median is
reported. Inputs are built and placed on the device before timing. At each batch size
the c4jax, c4jax+observe and pgx rollouts are timed round-robin (one call of each per
repeat), so that drifts in machine speed (common on shared/virtual CPUs) hit all of
them alike and the ratio stays meaningful; the ratio is c4jax median / pgx median.

Fairness of the environment comparison
--------------------------------------
Both environments get the identical, cheap action selection: every game carries a
xorshift32 state (uint32) in the scan carry, advanced once per ply, and plays the k-th
legal column with ``k = ((x >> 16) * n_legal) >> 16``. Drawing a fresh
``jax.random`` (threefry) key per ply and game would cost more than one Connect Four
step itself and would dominate *both* measurements, hiding the difference between
the environments. For the same reason the auto-reset is the same cheap select for
both (``where(done, initial_state, state)`` with a precomputed initial state) rather
than ``pgx.experimental.auto_reset``, which splits a threefry key and calls ``init``
on every ply. pgx's ``step`` also computes its observation (part of its state, so it
is always paid); c4jax's ``step`` does not, its board being read with ``observe`` on
demand. The "c4jax+observe" figure adds an ``observe`` per ply (folded into a carried
checksum so that XLA cannot drop it) for a like-for-like view.

Targets: c4jax >= 3x pgx at batch 4096; 1StepLA >= 100k and 2StepLA >= 10k decisions/s.

Checkers (``--game checkers``)
------------------------------
Random-play steps/s of c4jax's Checkers (``c4jax.games.checkers``, design.md "Checkers",
default rules) with the same jitted, vmapped, auto-resetting scan, against OpenSpiel's C++
``checkers`` stepped one state at a time from Python in the same process (``legal_actions``,
a uniform choice from precomputed random numbers, ``apply_action``, a new game when one ends;
``--openspiel-steps`` plies per timed call), timed round-robin with the c4jax calls at every
batch size. pgx has no Checkers (``pgx.available_envs()``), so there is no pgx column. c4jax
picks the k-th legal action straight from the state's 8 legal-move bitboards
(:func:`pick_legal_bits`, the same xorshift draw as above, computed by
``c4jax.games.checkers.env.pick_action`` with elementwise bit operations); the "mask pick" column picks from the unpacked
``legal_action_mask`` (bool[256]) with :func:`pick_legal`, which costs more than the step itself; "+observe" adds an ``observe`` per ply as above. OpenSpiel plays its own draw
rule (40 plies without a capture) and c4jax design.md's (threefold repetition, fifty moves of
each side), so the games differ; their mean random-game lengths are printed.

Target: c4jax >= 10x OpenSpiel at batch 4096.

Usage: ``python experiments/bench_env.py [--game connect_four|checkers] [--batch-sizes 1 256
4096] [--steps 100] [--repeats 5] [--openspiel-steps 20000] [--quick]``.
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import statistics
import time
from typing import Callable

import jax
import jax.numpy as jnp
import jaxlib
import numpy as np
import pgx

from c4jax import agents
from c4jax.games.connect_four import env

ENV_RATIO_TARGET = 3.0  # c4jax / pgx steps per second at batch ENV_TARGET_BATCH
ENV_TARGET_BATCH = 4096
CHECKERS_RATIO_TARGET = 10.0  # c4jax / OpenSpiel checkers steps per second at batch ENV_TARGET_BATCH
AGENT_TARGETS = {"1steplA": 100_000.0, "2steplA": 10_000.0}  # decisions per second


# --------------------------------------------------------------------------- action picking


def xorshift32(x: jax.Array) -> jax.Array:
    """One xorshift32 step (Marsaglia 13/17/5) on uint32 arrays; never maps a non-zero to 0."""
    x = x ^ (x << 13)
    x = x ^ (x >> 17)
    return x ^ (x << 5)


def pick_legal(x: jax.Array, legal: jax.Array) -> jax.Array:
    """int32[]: the k-th legal column, k = ((x >> 16) * n_legal) >> 16 (0 if none is legal)."""
    n_legal = legal.sum(dtype=jnp.uint32)
    k = ((x >> 16) * n_legal) >> 16  # uniform-ish in [0, n_legal), uint32 throughout
    rank = jnp.cumsum(legal, dtype=jnp.uint32)  # legal columns up to and including each
    return jnp.argmax(rank > k).astype(jnp.int32)


def initial_rng(batch: int, seed: int = 1) -> jax.Array:
    """uint32[batch]: distinct non-zero xorshift seeds."""
    x = np.random.default_rng(seed).integers(1, 2**32, size=batch, dtype=np.uint32)
    return jnp.asarray(x)


# --------------------------------------------------------------------------- the two environments


def _reset_where(done: jax.Array, initial, state):
    return jax.tree.map(lambda i, s: jnp.where(done, i, s), initial, state)


def c4jax_ply(carry, _, with_observe: bool = False):
    """One auto-reset ply of one c4jax game; carry = (state, rng, checksum)."""
    state, x, checksum = carry
    x = xorshift32(x)
    state = env.step(state, pick_legal(x, state.legal_mask))
    if with_observe:
        checksum = checksum + env.observe(state).sum(dtype=jnp.int32)
    state = _reset_where(state.done, env.init(), state)
    return (state, x, checksum), None


_PGX_ENV = pgx.make("connect_four")
_PGX_INITIAL = _PGX_ENV.init(jax.random.PRNGKey(0))


def pgx_ply(carry, _):
    """One auto-reset ply of one pgx game; carry = (state, rng, checksum)."""
    state, x, checksum = carry
    x = xorshift32(x)
    state = _PGX_ENV.step(state, pick_legal(x, state.legal_action_mask))
    state = _reset_where(state.terminated, _PGX_INITIAL, state)
    return (state, x, checksum), None


def make_rollout(ply: Callable, steps: int) -> Callable:
    """jit(vmap(scan of `steps` plies)) over a batch carry."""

    def one_game(carry):
        carry, _ = jax.lax.scan(ply, carry, None, length=steps)
        return carry

    return jax.jit(jax.vmap(one_game))


def batched_carry(initial_state, batch: int):
    """(state, rng, checksum) for ``batch`` games, all at ``initial_state``."""
    state = jax.tree.map(lambda a: jnp.broadcast_to(a, (batch,) + a.shape), initial_state)
    return (state, initial_rng(batch), jnp.zeros(batch, jnp.int32))


# --------------------------------------------------------------------------- timing


def median_seconds(fn: Callable, args: tuple, repeats: int) -> float:
    """Median wall time of ``fn(*args)`` over ``repeats`` calls, after one warm-up call."""
    jax.block_until_ready(fn(*args))  # compile + warm-up, not timed
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def interleaved_median_seconds(calls: dict[str, tuple[Callable, tuple]], repeats: int) -> dict[str, float]:
    """Like :func:`median_seconds` for several calls, timed round-robin.

    On a shared (virtual) machine the speed of the whole process drifts between regimes
    over seconds; timing the competitors in alternation exposes them to the same
    conditions, so their ratio stays meaningful even when the absolute figures move.
    """
    for fn, args in calls.values():
        jax.block_until_ready(fn(*args))  # compile + warm-up, not timed
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeats):
        for name, (fn, args) in calls.items():
            t0 = time.perf_counter()
            jax.block_until_ready(fn(*args))
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(t) for name, t in times.items()}


def env_steps_per_second(batch: int, steps: int, repeats: int) -> dict[str, float]:
    """Steps/s of c4jax, c4jax+observe and pgx at one batch size (interleaved timing)."""
    c4_carry = jax.device_put(batched_carry(env.init(), batch))
    px_carry = jax.device_put(batched_carry(_PGX_INITIAL, batch))
    calls = {
        "c4jax": (make_rollout(c4jax_ply, steps), (c4_carry,)),
        "c4jax+observe": (make_rollout(functools.partial(c4jax_ply, with_observe=True), steps), (c4_carry,)),
        "pgx": (make_rollout(pgx_ply, steps), (px_carry,)),
    }
    seconds = interleaved_median_seconds(calls, repeats)
    return {name: batch * steps / t for name, t in seconds.items()}


def same_games(batch: int, steps: int) -> bool:
    """Both rollouts play the very same games: their final boards agree (canonical view)."""
    c4_state, _, _ = make_rollout(c4jax_ply, steps)(batched_carry(env.init(), batch))
    px_state, _, _ = make_rollout(pgx_ply, steps)(batched_carry(_PGX_INITIAL, batch))
    obs = px_state.observation
    px_boards = obs[..., 0].astype(jnp.int8) - obs[..., 1].astype(jnp.int8)
    return bool(jnp.array_equal(jax.vmap(env.observe)(c4_state), px_boards))


def random_positions(batch: int, seed: int = 0) -> jax.Array:
    """int8[batch, 6, 7]: random non-terminal positions (design.md §3), player to move = 1."""
    keys = jax.random.split(jax.random.PRNGKey(seed), batch)
    states = jax.jit(jax.vmap(env.random_initial_state))(keys)
    return jax.block_until_ready(jax.vmap(env.observe)(states))


@jax.jit
def _act(agent, boards, key):
    return agent.act(boards, key)


def decisions_per_second(name: str, boards: jax.Array, repeats: int) -> float:
    agent = agents.load(name)
    key = jax.random.PRNGKey(0)
    return boards.shape[0] / median_seconds(_act, (agent, boards, key), repeats)


# --------------------------------------------------------------------------- report


def verdict(ok: bool, applies: bool = True) -> str:
    if not applies:
        return "n/a (--quick)"
    return "PASS" if ok else "FAIL"


def print_machine_info() -> None:
    devices = ", ".join(f"{d.platform}:{d.device_kind}" for d in jax.devices())
    print("## Machine")
    print(f"- jax {jax.__version__}, jaxlib {jaxlib.__version__}, pgx {pgx.__version__}, numpy {np.__version__}, Python {platform.python_version()}")
    print(f"- devices: {devices}")
    print(f"- CPU count: {os.cpu_count()} ({platform.processor() or platform.machine()}), {platform.system()}")
    print()


def bench_envs(batch_sizes: list[int], steps: int, repeats: int, targets: bool) -> None:
    print(f"## Random-play environment steps/s ({steps}-ply jitted scan with auto-reset, "
          f"median of {repeats}, compile excluded)")
    print()
    print("| batch | c4jax steps/s | pgx steps/s | ratio | c4jax+observe steps/s | ratio (+observe) |")
    print("|---:|---:|---:|---:|---:|---:|")
    ratios = {}
    for batch in batch_sizes:
        rates = env_steps_per_second(batch, steps, repeats)
        c4, c4_obs, px = rates["c4jax"], rates["c4jax+observe"], rates["pgx"]
        ratios[batch] = c4 / px
        print(f"| {batch} | {c4:,.0f} | {px:,.0f} | {c4 / px:.2f}x | {c4_obs:,.0f} | {c4_obs / px:.2f}x |",
              flush=True)
    print()
    check_batch = max(batch_sizes)
    print(f"- same workload: c4jax and pgx end the {steps}-ply rollout at batch {check_batch} with "
          f"identical boards: {'yes' if same_games(check_batch, steps) else 'NO (action picking differs!)'}")
    if ENV_TARGET_BATCH in ratios:
        r = ratios[ENV_TARGET_BATCH]
        print(f"- target c4jax >= {ENV_RATIO_TARGET:g}x pgx at batch {ENV_TARGET_BATCH}: "
              f"{r:.2f}x  {verdict(r >= ENV_RATIO_TARGET, targets)}")
    else:
        print(f"- target c4jax >= {ENV_RATIO_TARGET:g}x pgx at batch {ENV_TARGET_BATCH}: not measured")
    print()


def bench_agents(batch: int, repeats: int, names: list[str], targets: bool) -> None:
    print(f"## Baseline agents: decisions/s (jit(agent.act) on {batch} random non-terminal boards, "
          f"median of {repeats}, compile excluded)")
    print()
    boards = random_positions(batch)
    print("| agent | decisions/s | target | verdict |")
    print("|---|---:|---:|---|")
    for name in names:
        rate = decisions_per_second(name, boards, repeats)
        target = AGENT_TARGETS[name]
        print(f"| {name} | {rate:,.0f} | >= {target:,.0f} | {verdict(rate >= target, targets)} |", flush=True)
    print()


# --------------------------------------------------------------------------- checkers


def pick_legal_bits(x: jax.Array, legal: jax.Array) -> jax.Array:
    """int32[]: the k-th legal Checkers action, k = ((x >> 16) * n_legal) >> 16, read from the
    state's legal-move bitboards ``legal`` (uint32[8], bit q of word kind = action 8 q + kind),
    ordered by kind then square: :func:`c4jax.games.checkers.env.pick_action` (elementwise bit
    arithmetic, no unpacking of the 256-wide mask)."""
    from c4jax.games.checkers import env as checkers_env

    return checkers_env.pick_action(legal, x)


def checkers_ply(carry, _, mask_pick: bool = False, with_observe: bool = False):
    """One auto-reset ply of one c4jax Checkers game; carry = (state, rng, checksum)."""
    from c4jax.games.checkers.game import GAME

    state, x, checksum = carry
    x = xorshift32(x)
    action = pick_legal(x, state.legal_action_mask) if mask_pick else pick_legal_bits(x, state.legal)
    state = GAME.step(state, action)
    if with_observe:
        checksum = checksum + GAME.observe(state).sum(dtype=jnp.int32)
    state = _reset_where(state.terminated | state.truncated, GAME.init(), state)
    return (state, x, checksum), None


class OpenSpielCheckers:
    """OpenSpiel's C++ checkers played at random, one state at a time; each call plays
    ``steps`` plies, continuing the same sequence of games."""

    def __init__(self, steps: int, seed: int = 0):
        import pyspiel

        self.game = pyspiel.load_game("checkers")
        self.state = self.game.new_initial_state()
        self.steps = steps
        self.uniform = np.random.default_rng(seed).random(steps).tolist()
        self.games = self.plies = 0

    def __call__(self) -> None:
        state, new = self.state, self.game.new_initial_state
        for u in self.uniform:
            actions = state.legal_actions()
            state.apply_action(actions[int(u * len(actions))])
            self.plies += 1
            if state.is_terminal():
                state, self.games = new(), self.games + 1
        self.state = state


def checkers_steps_per_second(batch: int, steps: int, repeats: int, openspiel: OpenSpielCheckers) -> dict[str, float]:
    """Steps/s of c4jax's Checkers (three pickings) and OpenSpiel's at one batch size (interleaved)."""
    from c4jax.games.checkers.game import GAME

    carry = jax.device_put(batched_carry(GAME.init(), batch))
    calls = {
        "c4jax": (make_rollout(checkers_ply, steps), (carry,)),
        "mask pick": (make_rollout(functools.partial(checkers_ply, mask_pick=True), steps), (carry,)),
        "+observe": (make_rollout(functools.partial(checkers_ply, with_observe=True), steps), (carry,)),
        "openspiel": (openspiel, ()),
    }
    seconds = interleaved_median_seconds(calls, repeats)
    rates = {name: batch * steps / t for name, t in seconds.items() if name != "openspiel"}
    rates["openspiel"] = openspiel.steps / seconds["openspiel"]
    return rates


def checkers_mean_length(batch: int = 1024, plies: int = 1000) -> float:
    """Mean length of c4jax's random Checkers games (those finished within ``plies``)."""
    from c4jax.games.checkers.game import GAME

    def one(x):
        def ply(carry, _):
            state, x = carry
            x = xorshift32(x)
            state = GAME.step(state, pick_legal_bits(x, state.legal))
            return (state, x), state.step_count

        (state, _), _ = jax.lax.scan(ply, (GAME.init(), x), None, length=plies)
        return state.step_count, state.terminated

    lengths, ended = jax.jit(jax.vmap(one))(initial_rng(batch, seed=2))
    return float(np.asarray(lengths)[np.asarray(ended)].mean())


def bench_checkers(batch_sizes: list[int], steps: int, repeats: int, openspiel_steps: int, targets: bool) -> None:
    import pyspiel

    print(f"## Checkers: random-play steps/s (c4jax: {steps}-ply jitted scan with auto-reset; OpenSpiel "
          f"{pyspiel.__version__ if hasattr(pyspiel, '__version__') else ''}: {openspiel_steps} plies "
          f"stepped one state at a time from Python; median of {repeats}, compile excluded)")
    print()
    print("| batch | c4jax steps/s | OpenSpiel steps/s | ratio | c4jax mask pick steps/s | c4jax+observe steps/s |")
    print("|---:|---:|---:|---:|---:|---:|")
    openspiel = OpenSpielCheckers(openspiel_steps)
    ratios = {}
    for batch in batch_sizes:
        r = checkers_steps_per_second(batch, steps, repeats, openspiel)
        ratios[batch] = r["c4jax"] / r["openspiel"]
        print(f"| {batch} | {r['c4jax']:,.0f} | {r['openspiel']:,.0f} | {ratios[batch]:.2f}x | "
              f"{r['mask pick']:,.0f} | {r['+observe']:,.0f} |", flush=True)
    print()
    print(f"- pgx: no checkers among pgx.available_envs() = {', '.join(pgx.available_envs())}")
    if openspiel.games:
        print(f"- mean random game: OpenSpiel {openspiel.plies / openspiel.games:.1f} plies (approx., "
              f"{openspiel.games} games), c4jax {checkers_mean_length():.1f} plies")
    if ENV_TARGET_BATCH in ratios:
        r = ratios[ENV_TARGET_BATCH]
        print(f"- target c4jax >= {CHECKERS_RATIO_TARGET:g}x OpenSpiel at batch {ENV_TARGET_BATCH}: "
              f"{r:.2f}x  {verdict(r >= CHECKERS_RATIO_TARGET, targets)}")
    else:
        print(f"- target c4jax >= {CHECKERS_RATIO_TARGET:g}x OpenSpiel at batch {ENV_TARGET_BATCH}: not measured")
    print()


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--game", choices=["connect_four", "checkers"], default="connect_four",
                   help="connect_four: c4jax vs pgx and the baseline agents; checkers: c4jax vs OpenSpiel")
    p.add_argument("--openspiel-steps", type=int, default=20_000, help="OpenSpiel plies per timed call (checkers)")
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 256, 4096])
    p.add_argument("--steps", type=int, default=100, help="plies per timed scan")
    p.add_argument("--repeats", type=int, default=5, help="timed calls per figure (median)")
    p.add_argument("--agent-batch", type=int, default=4096, help="boards per agent.act call")
    p.add_argument("--quick", action="store_true",
                   help="tiny smoke run (batches 1 and 64, 10 plies, 2 repeats, 256 boards)")
    args = p.parse_args(argv)
    if args.quick:
        args.batch_sizes, args.steps, args.repeats, args.agent_batch = [1, 64], 10, 2, 256
        args.openspiel_steps = 2_000
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    print("# c4jax environment benchmark")
    print()
    print_machine_info()
    targets = not args.quick  # a smoke run's figures say nothing about the targets
    if args.game == "checkers":
        bench_checkers(args.batch_sizes, args.steps, args.repeats, args.openspiel_steps, targets)
        return
    bench_envs(args.batch_sizes, args.steps, args.repeats, targets)
    bench_agents(args.agent_batch, args.repeats, list(AGENT_TARGETS), targets)


if __name__ == "__main__":
    main()
