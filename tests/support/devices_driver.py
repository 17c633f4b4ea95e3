"""Checks on several forced CPU devices, run by tests/io/test_devices.py in a subprocess.

    XLA_FLAGS=--xla_force_host_platform_device_count=4 python tests/support/devices_driver.py RESULT.json WORKDIR CHECK...

JAX reads XLA_FLAGS once, when its backend starts, so a test process that has already run JAX
on one device cannot give itself four: this script runs in a fresh process and writes what
it measured to RESULT.json for the test to judge. Checks: ``cheap`` (no training run),
``ppo``, ``reinforce``, ``dqn``, ``alphazero`` (tiny runs on 1 and 4 devices; ``ppo`` also 2
seeds on 1 and 2 devices, ``dqn`` also resumed on 2 and on 1 device).
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from scripts import run_script  # beside this file: Python puts a script's folder first on sys.path

from c4jax import agents, evaluation, games
from c4jax.evaluation import protocol
from c4jax.io import devices
from c4jax.learning import loop, onpolicy_games, placement, rundir, stacked
from c4jax.learning.dqn import DQN, DQNConfig
from c4jax.learning.ppo import PPO, PPOConfig
from c4jax.nets import cnet

C4 = games.make(games.DEFAULT)

PPO_FLAGS = ("--buffer-size", "256", "--games-per-collect", "16", "--epochs", "2", "--total-updates", "20")
REI_FLAGS = ("--games-per-collect", "4", "--eval-every", "8", "--total-updates", "16")
DQN_FLAGS = ("--buffer-size", "2000", "--learning-starts", "200", "--eval-every", "200", "--episodes-per-iteration", "8",
             "--updates-per-episode", "25")
AZ_FLAGS = ("--games", "8", "--num-simulations", "4", "--updates-per-iteration", "2", "--eval-every", "2",
            "--buffer-size", "800", "--batch-size", "8", "--eval-simulations", "4", "--play-simulations", "6",
            "--width", "8", "--eval-opponents", "random", "--select-by", "random", "--no-eval-yardstick",
            "--total-updates", "4")


def _sharding(x) -> dict:
    """How an array is laid out: devices it spans, its spec, the shape of one device's shard."""
    return {"devices": len(x.sharding.device_set), "spec": str(getattr(x.sharding, "spec", "")),
            "shard_shape": list(x.addressable_shards[0].data.shape), "shape": list(x.shape)}


def _init_params(heads: str):
    """Random CNET128 parameters of the right shapes (cheaper than compiling flax's init)."""
    shapes = jax.eval_shape(lambda k: cnet.init_params(k, width=128, heads=heads), jax.random.key(0))
    rng = np.random.default_rng(0)
    return jax.tree.map(lambda x: jnp.asarray(0.05 * rng.standard_normal(x.shape), x.dtype), shapes)


def _rows(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def _run(script: str, out: Path, *flags) -> list[dict]:
    """The metrics rows of a run of ``script`` (of its first seed with ``--vmap-seeds``)."""
    proc = run_script(script, "--out", out, "--no-progress", *flags)
    if proc.returncode != 0:
        raise RuntimeError(f"{script} {' '.join(map(str, flags))} failed:\n{proc.stderr[-3000:]}")
    return _rows(out if (out / "metrics.jsonl").is_file() else rundir.seed_dir(out, 0))


def _spy_on_saved_state(record: dict):
    """Record the layout of the live training state each time the loop saves ``last/``."""
    original = loop.save_state

    def spy(directory, state, old_params, *args, **kwargs):
        leaves = jax.tree_util.tree_flatten_with_path(state)[0]
        record.clear()
        record.update({jax.tree_util.keystr(p): _sharding(x) for p, x in leaves if hasattr(x, "sharding")})
        return original(directory, state, old_params, *args, **kwargs)

    loop.save_state = spy
    return original


def check_cheap(work: Path) -> dict:
    """Without training: errors, a protocol match and a PPO update on 4 devices vs 1, placement."""
    out: dict = {"devices": jax.device_count()}
    try:
        devices.select(jax.device_count() + 1)
    except ValueError as e:
        out["too_many_error"] = str(e)
    try:
        placement.plan(PPO(PPOConfig(games_per_collect=10, buffer_size=250), C4), 4)
    except ValueError as e:
        out["divisible_error"] = str(e)
    out["auto_modes"] = {f"K={k}": placement.plan(PPO(PPOConfig(), C4), 4, k).mode for k in (1, 2, 4, 8)}
    out["two_devices_mode"] = placement.plan(PPO(PPOConfig(), C4), 2, 2).mode
    # the default (all devices) takes as many as the batches allow: 10 games split over 2, not 4
    out["auto_fallback"] = placement.plan(PPO(PPOConfig(games_per_collect=10, buffer_size=250), C4), 0).n

    # a protocol match: the same games whether its 100 games are split over 4 devices or not
    key = jax.random.key(3)
    a, b = agents.load("random"), agents.load("random:sto")
    one = evaluation.match(a, b, key)
    mesh = devices.make_mesh(4)
    with jax.set_mesh(mesh):
        four = evaluation.match(a, b, key)
        game = protocol.game_of(a)
        moves, _, a_to_move = protocol.seats(game)
        played = protocol._play_game(a, b, key, jnp.asarray(moves), jnp.asarray(a_to_move), game,
                                     compact=False)  # the program match ran, before to_host
    out["match_same_games"] = one.games == four.games
    out["match_actions"] = _sharding(played["actions"])

    # a PPO update (minibatch gradients averaged over 4 devices) against the same update on 1 device
    algo = PPO(PPOConfig(epochs=1, minibatch_size=32), games.make(games.DEFAULT))
    params = _init_params("two")
    rng, n = np.random.default_rng(1), 128
    boards = rng.integers(-1, 2, (n, 6, 7)).astype(np.int8)
    batch = onpolicy_games.Samples(
        obs=boards, legal=boards[:, 0, :] == 0, action=rng.integers(0, 7, n).astype(np.int32),
        logp=np.full(n, -1.9, np.float32), value=np.zeros(n, np.float32), reward=np.zeros(n, np.float32),
        done=np.zeros(n, bool), advantage=rng.standard_normal(n).astype(np.float32),
        target=rng.standard_normal(n).astype(np.float32), valid=rng.random(n) < 0.9)
    opt = algo.tx.init(params)
    update = jax.jit(algo.update)
    p1, _, m1, _ = update(params, opt, batch, jax.random.key(4))
    with jax.set_mesh(mesh):
        rep = devices.replicated(mesh)
        p4, _, m4, _ = update(devices.put(params, rep), devices.put(opt, rep),
                              devices.put(batch, devices.batch_sharding(mesh)), jax.random.key(4))
    diff = jax.tree.map(lambda x, y: float(np.max(np.abs(np.asarray(x) - np.asarray(y)))), p1, p4)
    out["ppo_update"] = {"loss_1": float(m1["train/loss"]), "loss_4": float(m4["train/loss"]),
                         "max_param_diff": max(jax.tree.leaves(diff)), "params": _sharding(p4["head"]["out"]["kernel"])}

    # a DQN state placed with a batch split: the replay storage over 4 devices, the rest replicated
    dqn = DQN(DQNConfig(buffer_size=2000, learning_starts=200, eval_every=200, episodes_per_iteration=8, updates_per_episode=25), game=C4)
    state = stacked.stack_seeds([dqn.init(jax.random.key(0), _init_params("one"))])
    where = placement.plan(dqn, 4, 1)
    placed = devices.put(state, where.state_shardings(state, dqn.batch_fields))
    out["dqn_placed"] = {"buffer_board": _sharding(placed.buffer.items.board), "params": _sharding(placed.params["dense"]["kernel"]),
                         "updates": _sharding(placed.updates)}
    return out


def _compare(one: list[dict], four: list[dict]) -> dict:
    """Per metric: the largest relative difference over the logged rows (time/* left out)."""
    if [r["step"] for r in one] != [r["step"] for r in four]:
        return {"steps": [[r["step"] for r in one], [r["step"] for r in four]]}
    worst: dict = {}
    for ra, rb in zip(one, four):
        for k, va in ra.items():
            if k.startswith("time/") or k == "step":
                continue
            vb = rb.get(k)
            worst[k] = max(worst.get(k, 0.0), abs(va - vb) / max(abs(va), 1e-6) if vb is not None else float("inf"))
    return worst


def check_ppo(work: Path) -> dict:
    """PPO on 1 and 4 devices (games, buffer and minibatches split; graded on the yardstick too);
    2 seeds on 1 and on 2 devices (whole seeds per device)."""
    out: dict = {}
    t = time.perf_counter()
    one = _run("ppo.py", work / "ppo1", "--devices", "1", "--eval-yardstick", *PPO_FLAGS)
    out["seconds_1"] = time.perf_counter() - t
    t = time.perf_counter()
    four = _run("ppo.py", work / "ppo4", "--devices", "4", "--eval-yardstick", *PPO_FLAGS)
    out["seconds_4"] = time.perf_counter() - t
    out["compare_4"] = _compare(one, four)
    out["rows"] = [one, four]
    seeds1 = _run("ppo.py", work / "seeds1", "--devices", "1", "--vmap-seeds", "2", *PPO_FLAGS)
    record: dict = {}
    original = _spy_on_saved_state(record)
    try:
        seeds2 = _run("ppo.py", work / "seeds2", "--devices", "2", "--vmap-seeds", "2", *PPO_FLAGS)
    finally:
        loop.save_state = original
    seed1 = [_rows(rundir.seed_dir(work / d, 1)) for d in ("seeds1", "seeds2")]
    out["compare_seeds"], out["compare_seed_1"] = _compare(seeds1, seeds2), _compare(*seed1)
    out["seeds_rows"] = [[seeds1, seeds2], seed1]
    out["seeds_state"] = {k: v for k, v in record.items() if "dense" in k or k.endswith(".updates")}
    out["seeds_meta"] = json.loads((work / "seeds2" / "last" / "metadata.json").read_text())["devices"]
    return out


def check_dqn(work: Path) -> dict:
    """DQN on 1 and 4 devices (replay storage and minibatches split); the 4-device run stopped
    after its first evaluation and resumed on 2 devices and on 1."""
    out: dict = {}
    one = _run("dqn.py", work / "dqn1", "--devices", "1", "--total-updates", "400", *DQN_FLAGS)
    record: dict = {}
    original = _spy_on_saved_state(record)
    try:
        four = _run("dqn.py", work / "dqn4", "--devices", "4", "--total-updates", "400", *DQN_FLAGS)
    finally:
        loop.save_state = original
    out["compare_4"], out["rows"] = _compare(one, four), {"one": one, "four": four}
    out["state"] = {k: v for k, v in record.items() if "buffer" in k or "dense" in k}
    half = work / "half4"
    _run("dqn.py", half, "--devices", "4", "--total-updates", "200", *DQN_FLAGS)
    for n in (2, 1):
        resumed = work / f"resumed{n}"
        shutil.copytree(half, resumed)
        rows = _run("dqn.py", resumed, "--devices", str(n), "--total-updates", "400", "--resume", *DQN_FLAGS)
        out[f"compare_resume_{n}"], out["rows"][f"resumed_{n}"] = _compare(four, rows), rows
    bad = run_script("dqn.py", "--out", work / "bad", "--no-progress", "--devices", "4", "--total-updates", "400",
                     *DQN_FLAGS[:-4], "--episodes-per-iteration", "10", "--updates-per-episode", "20")
    out["bad_batch"] = {"returncode": bad.returncode, "stderr": bad.stderr[-2000:]}
    return out


def check_alphazero(work: Path) -> dict:
    """AlphaZero on 1 and 4 devices (self-play games, replay storage and minibatches split)."""
    one = _run("alphazero.py", work / "az1", "--devices", "1", *AZ_FLAGS)
    four = _run("alphazero.py", work / "az4", "--devices", "4", *AZ_FLAGS)
    return {"compare_4": _compare(one, four), "rows": [one, four]}


def check_reinforce(work: Path) -> dict:
    """REINFORCE on 1 and 4 devices (self-play games split; its one-episode updates whole)."""
    one = _run("reinforce.py", work / "rei1", "--devices", "1", *REI_FLAGS)
    four = _run("reinforce.py", work / "rei4", "--devices", "4", *REI_FLAGS)
    return {"compare_4": _compare(one, four), "rows": [one, four]}


CHECKS = {"cheap": check_cheap, "ppo": check_ppo, "dqn": check_dqn, "alphazero": check_alphazero,
          "reinforce": check_reinforce}


def main(argv: list[str]) -> None:
    result_path, work = Path(argv[0]), Path(argv[1])
    results = {}
    for name in argv[2:]:
        t = time.perf_counter()
        results[name] = CHECKS[name](work / name)
        results[name]["wall_s"] = time.perf_counter() - t
        result_path.write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main(sys.argv[1:])
