"""Make the perfect-play yardstick's position set: positions from mixed games, solved exactly.

Plays ``--games`` games from the empty board in jitted batches. In each game both seats are
drawn uniformly from ``--players`` (per game), and every move is replaced by a uniformly
random legal column with probability ``--random-move-prob``. Every position met before a
move (never a finished one) is collected once up to mirroring, split by stones into the
phases opening (0-11), middle (12-27) and end (28+), and ``--per-phase`` positions of
each phase are drawn uniformly without replacement. The exact solver (the ``solver``
extra) scores every legal column of each. Writes ``--out`` (``.npz``: ``boards``
int8[N, 6, 7], ``scores`` int8[N, 7], full columns -100) and a ``.json`` beside it with
the command, seed, counts per phase and the solver version.

Usage: ``python experiments/make_yardstick.py [--seed 0] [--games 8192] [--per-phase 2000 2000 2000]
[--out c4jax/evaluation/yardstick_positions.npz]``
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import tyro
from flax import struct
from jax import Array
from tqdm import tqdm

import c4jax
from c4jax import agents
from c4jax.agents import arena
from c4jax.agents.base import AgentBase
from c4jax.agents.baselines import RandomAgent
from c4jax.evaluation import yardstick
from c4jax.games.connect_four import perfect
from c4jax.io import compile_cache
from c4jax.io.runlog import command_line, display_path

GAME = "connect_four"  # the game of the solver that grades the positions


@dataclasses.dataclass(frozen=True)
class Config:
    seed: int = 0
    """PRNG seed of the games and of the draws per phase: the same seed gives the same set."""
    games: int = 8192
    """Games to play (rounded up to whole batches)."""
    batch: int = 1024
    """Games per jitted call."""
    players: tuple[str, ...] = ("random", "1steplA:sto", "2steplA:sto", "dqn", "ppo")
    """Agents (names as in agents.load) whose games give the positions; each seat of each game is one of them."""
    random_move_prob: float = 0.1
    """Probability that a move is a uniformly random legal column instead of the seat's agent's."""
    per_phase: tuple[int, int, int] = (2000, 2000, 2000)
    """Positions drawn for the opening (0-11 stones), middle (12-27) and end (28+) phases."""
    out: Path = yardstick.POSITIONS_FILE
    """Where to write the set (.npz; the .json goes beside it)."""
    progress: bool = True
    """Show a progress bar while solving."""


@struct.dataclass
class _Mixture(AgentBase):
    """Game b is played by ``players[which[b]]``; each move is random with probability ``random_prob``."""

    players: tuple
    which: Array  # int32[B]
    random_prob: Array  # float32[]
    name: str = struct.field(pytree_node=False, default="mixture")
    stochastic: bool = struct.field(pytree_node=False, default=True)
    game: object = struct.field(pytree_node=False, kw_only=True)

    def _act(self, boards: Array, key: Array) -> Array:
        keys = jax.random.split(key, len(self.players) + 2)
        acts = jnp.stack([p._act(boards, k) for p, k in zip(self.players, keys)])  # [P, B]
        chosen = jnp.take_along_axis(acts, self.which[None], axis=0)[0]
        explore = jax.random.uniform(keys[-1], self.which.shape) < self.random_prob
        return jnp.where(explore, RandomAgent(game=self.game)._act(boards, keys[-2]), chosen)


@functools.partial(jax.jit, static_argnames=("batch",))
def _play(players: tuple, random_prob: Array, key: Array, batch: int) -> tuple[Array, Array]:
    """``batch`` games from the empty board, both seats drawn per game: boards before each move, valid."""
    seat_key, play_key = jax.random.split(key)
    which = jax.random.randint(seat_key, (2, batch), 0, len(players))
    game = c4jax.games.make(c4jax.games.DEFAULT)
    seat_a, seat_b = (_Mixture(players, w, random_prob, game=game) for w in which)
    traj = arena.rollout(seat_a, seat_b, arena.initial_states(batch, game), True, play_key, game=game)
    return traj.observations, traj.valid


def collect(cfg: Config, players: list) -> dict[bytes, np.ndarray]:
    """Distinct positions (up to mirroring) of the mixed games, in the order first met."""
    seen: dict[bytes, np.ndarray] = {}
    key = jax.random.key(cfg.seed)
    for _ in range(-(-cfg.games // cfg.batch)):
        key, sub = jax.random.split(key)
        boards, valid = jax.device_get(_play(tuple(players), jnp.float32(cfg.random_move_prob), sub, cfg.batch))
        for b in np.asarray(boards)[np.asarray(valid)]:
            seen.setdefault(min(b.tobytes(), b[:, ::-1].tobytes()), b)
    return seen


def fail(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def main(cfg: Config, command: str | None = None) -> dict:
    if cfg.games < 1 or cfg.batch < 1:
        fail(f"--games and --batch must be positive, got {cfg.games} and {cfg.batch}")
    if not 0.0 <= cfg.random_move_prob <= 1.0:
        fail(f"--random-move-prob must lie in [0, 1], got {cfg.random_move_prob}")
    if any(n < 0 for n in cfg.per_phase) or sum(cfg.per_phase) == 0:
        fail(f"--per-phase needs three non-negative counts, not all 0, got {list(cfg.per_phase)}")
    if not cfg.players:
        fail("--players needs at least one agent")
    if not perfect.solver_available():
        fail(perfect.MISSING_SOLVER)
    try:
        players = [agents.load(p) for p in cfg.players]
    except (ValueError, OSError) as e:
        fail(str(e))
    t0 = time.perf_counter()
    pool = collect(cfg, players)
    play_s = time.perf_counter() - t0
    boards = np.stack(list(pool.values()))
    phase = yardstick.phase_of(np.count_nonzero(boards, axis=(1, 2)))
    rng = np.random.default_rng(cfg.seed)
    picked = []
    for i, (name, want) in enumerate(zip(yardstick.PHASES, cfg.per_phase)):
        idx = np.flatnonzero(phase == i)
        if len(idx) < want:
            fail(f"only {len(idx)} distinct {name} positions in {cfg.games} games, {want} asked; play more --games")
        picked.append(np.sort(rng.choice(idx, size=want, replace=False)))
    boards = boards[np.concatenate(picked)]

    t0 = time.perf_counter()
    scores = np.concatenate([perfect.solve_scores(b[None]) for b in
                             tqdm(boards, desc="solving", disable=not cfg.progress, mininterval=2)])
    solve_s = time.perf_counter() - t0
    pos = yardstick.Positions(boards, scores, game=GAME)
    counts = {name: {"positions": int(np.sum(pos.phase == i)), "nontrivial": int(np.sum(pos.nontrivial & (pos.phase == i))),
                     "stones": list(yardstick.PHASE_STONES[i])}
              for i, name in enumerate(yardstick.PHASES)}
    meta = {
        "game": GAME,
        "command": command or command_line(),
        "seed": cfg.seed,
        "players": list(cfg.players),
        "random_move_prob": cfg.random_move_prob,
        "games": -(-cfg.games // cfg.batch) * cfg.batch,
        "distinct_positions_met": len(pool),
        "positions": len(pos),
        "nontrivial": int(pos.nontrivial.sum()),
        "phases": counts,
        "solver": perfect.solver_version(),
        "score_convention": ("exact value of each column for the player to move: 0 draw; s > 0 a win whose "
                             "last stone is the mover's (22 - s)-th; s < 0 a loss, the same count for the "
                             "opponent; -100 a full column"),
        "c4jax_version": c4jax.__version__,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "play_seconds": round(play_s, 1),
        "solve_seconds": round(solve_s, 1),
    }
    path = dataclasses.replace(pos, meta=meta).save(cfg.out)  # the .npz and, beside it, the .json of meta
    meta_path = path.with_suffix(".json")
    print(f"games: {meta['games']} ({play_s:.1f} s), distinct positions: {len(pool):,}; solved {len(pos)} "
          f"in {solve_s:.1f} s")
    for name, c in counts.items():
        print(f"  {name:<8} {c['positions']:>5} positions, {c['nontrivial']:>5} non-trivial")
    print(f"wrote {display_path(path)} ({path.stat().st_size / 1e3:.1f} kB) and {display_path(meta_path)}")
    return {"positions": pos, "meta": meta, "path": path}


if __name__ == "__main__":
    compile_cache.configure_script()
    main(tyro.cli(Config, description=__doc__.split("\n")[0]))
