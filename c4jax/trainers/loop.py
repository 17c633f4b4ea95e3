"""The host loop shared by every RL trainer (DQN, Dueling DQN, REINFORCE, PPO).

An algorithm supplies a pytree training state and a jitted ``chunk`` that advances
it to the next evaluation point (on device, no host round trips). Between chunks
this loop does everything that is the same for all algorithms (SPEC §7):

- tournament-protocol matches (100 games each) of the current network against
  Random, the "old network" and 1StepLA;
- the old-network rule: a new best win rate against 1StepLA makes the current
  weights the old network (and the best checkpoint, ``<out>/best``); a drop of
  more than ``revert_drop`` below the best puts the old weights back;
- ``metrics.jsonl``/``metrics.csv``, a progress bar with ETA and the latest win
  rates, and ``curves.png`` (smoothed loss, win rates, game length of the match
  against the old network, the thesis' "self-play game length", and of the
  training self-play);
- ``<out>/last``: the full training state (buffers, optimiser, PRNG key, old
  network, loop counters), saved after every evaluation, from which ``--resume``
  continues exactly where the run stopped.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

import jax
import jax.numpy as jnp
import numpy as np
from tqdm.auto import tqdm

from c4jax import agents, checkpoint, evaluate, networks, runlog
from c4jax.policies import NetworkAgent

LAST, BEST = "last", "best"


@dataclass(frozen=True)
class LoopConfig:
    """Settings shared by every RL experiment."""

    out: str = "runs/rl"
    """Run directory: metrics, plots, best/ (agent) and last/ (resumable state) checkpoints."""
    seed: int = 0
    """Seed of initialisation, self-play and evaluation."""
    init_from: str = "checkpoints/supervised"
    """Checkpoint whose conv/dense/head weights start the network ('' = from scratch)."""
    freeze_conv: bool = True
    """Keep the convolutional block fixed (the thesis' transfer learning)."""
    total_updates: int = 100_000
    """Gradient updates to perform."""
    revert_drop: float = 0.08
    """Revert to the old network when the win rate vs 1StepLA falls this far below the best."""
    resume: bool = False
    """Continue the run in --out from its last checkpoint."""
    progress: bool = True
    """Show a progress bar."""


class Algorithm(Protocol):
    """What an RL trainer provides to :func:`run`."""

    name: str  # "dqn", "dueling_dqn", "reinforce", "ppo"
    heads: str  # CNet heads
    output: str  # "q" or "policy"
    default_mode: str  # how the saved agent plays by default: "det" or "sto"

    def init(self, key: jax.Array, params: Any) -> Any: ...  # -> training state (pytree)

    def chunk(self, state: Any) -> tuple[Any, dict]: ...  # jitted: run to the next evaluation

    def params(self, state: Any) -> Any: ...

    def with_params(self, state: Any, params: Any) -> Any: ...

    def updates(self, state: Any) -> int: ...  # gradient updates done so far


def initial_params(cfg: LoopConfig, heads: str, width: int, key: jax.Array):
    """Fresh CNet params of ``heads``, with conv/dense/head copied from ``cfg.init_from``."""
    params = networks.init_params(key, width=width, heads=heads)
    if not cfg.init_from:
        return params
    meta = checkpoint.read_metadata(cfg.init_from)
    src_width, src_heads = meta["network"]["width"], meta["network"]["heads"]
    if src_width != width:
        raise ValueError(f"--init-from {cfg.init_from!r} has width {src_width}, this run uses {width}")
    like = {"params": networks.init_params(jax.random.key(0), width=width, heads=src_heads)}
    src = checkpoint.restore(cfg.init_from, like)["params"]
    return {**params, **{k: src[k] for k in ("conv", "dense", "head")}}


# --- checkpoints of the whole training state ------------------------------------------------


def _is_key(x) -> bool:
    return hasattr(x, "dtype") and jnp.issubdtype(x.dtype, jax.dtypes.prng_key)


def _keys_to_data(tree):
    return jax.tree.map(lambda x: jax.random.key_data(x) if _is_key(x) else x, tree)


def _data_to_keys(tree, like):
    return jax.tree.map(lambda x, t: jax.random.wrap_key_data(x) if _is_key(t) else x, tree, like)


def save_state(directory: Path, state, old_params, loop: dict, meta: dict) -> None:
    tree = {"state": _keys_to_data(state), "old_params": old_params}
    checkpoint.save(directory, tree, {**meta, "loop": loop})


def load_state(directory: Path, state_like, params_like):
    like = {"state": _keys_to_data(state_like), "old_params": params_like}
    tree = checkpoint.restore(directory, like)
    meta = checkpoint.read_metadata(directory)
    return _data_to_keys(tree["state"], state_like), tree["old_params"], meta["loop"]


# --- the loop -------------------------------------------------------------------------------


def run(algo: Algorithm, cfg: LoopConfig, *, width: int, algo_config: dict,
        extra_panels: Callable[[], list] | None = None) -> dict:
    """Train ``algo`` to ``cfg.total_updates`` with evaluation, old-network rule, checkpoints."""
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    key = jax.random.key(cfg.seed)
    init_key, run_key = jax.random.split(key)
    params0 = initial_params(cfg, algo.heads, width, init_key)
    state = algo.init(run_key, params0)
    meta_common = {
        "name": algo.name,
        "algorithm": algo.name,
        "network": {"width": width, "heads": algo.heads},
        "agent": {"output": algo.output, "default_mode": algo.default_mode, "symmetric": True},
        "config": {**dataclasses.asdict(cfg), **algo_config},
    }
    loop = {"evals": 0, "best_win_rate": -1.0, "best_updates": 0, "reverts": 0, "wall_s": 0.0}
    old_params = algo.params(state)
    if cfg.resume:
        if not (out / LAST / checkpoint.METADATA_FILE).is_file():
            raise checkpoint.CheckpointError(f"--resume: no checkpoint to resume in {str(out / LAST)!r}")
        state, old_params, loop = load_state(out / LAST, state, old_params)
        print(f"resumed {out} at {algo.updates(state):,} updates ({loop['evals']} evaluations)")
    log = runlog.RunLog(out, resume=cfg.resume, after_step=algo.updates(state) if cfg.resume else None)

    def agent_of(params, label):
        return NetworkAgent(params=params, label=label, width=width, heads=algo.heads, output=algo.output,
                            sampled=algo.default_mode == "sto", symmetric=False)

    random_agent, lookahead = agents.load("random"), agents.load("1steplA")
    bar = tqdm(total=cfg.total_updates, initial=algo.updates(state), desc=algo.name, unit="upd",
               disable=not cfg.progress, dynamic_ncols=True)
    t_start = time.perf_counter() - loop["wall_s"]
    while algo.updates(state) < cfg.total_updates:
        before = algo.updates(state)
        state, metrics = algo.chunk(state)
        metrics = {k: float(np.mean(np.asarray(v))) for k, v in jax.device_get(metrics).items()}
        params, updates = algo.params(state), algo.updates(state)
        eval_key = jax.random.fold_in(jax.random.key(cfg.seed + 1), loop["evals"])
        current = agent_of(params, algo.name)
        row = dict(metrics)
        for tag, opp in (("random", random_agent), ("old", agent_of(old_params, "old")), ("1steplA", lookahead)):
            res = evaluate.match(current, opp, eval_key)
            row[f"eval/vs_{tag}"] = res.win_rate
            row[f"eval/vs_{tag}_length"] = res.mean_length
        win = row["eval/vs_1steplA"]
        loop["evals"] += 1
        reverted = False
        if win > loop["best_win_rate"]:
            loop["best_win_rate"], loop["best_updates"] = win, updates
            old_params = params
            checkpoint.save(out / BEST, {"params": params}, {
                **meta_common, "metrics": {**row, "updates": updates}})
        elif win < loop["best_win_rate"] - cfg.revert_drop:
            state = algo.with_params(state, old_params)
            loop["reverts"] += 1
            reverted = True
        row.update({"eval/best_vs_1steplA": loop["best_win_rate"], "eval/reverted": float(reverted),
                    "time/wall_s": time.perf_counter() - t_start})
        log.log(updates, row)
        loop["wall_s"] = time.perf_counter() - t_start
        save_state(out / LAST, state, old_params, loop, {**meta_common, "metrics": row})
        bar.update(updates - before)
        bar.set_postfix(vs1=f"{win:.2f}", best=f"{loop['best_win_rate']:.2f}",
                        rand=f"{row['eval/vs_random']:.2f}", len=f"{row.get('selfplay/length', 0):.1f}")
    bar.close()
    log.write_csv()
    panels = [
        ("loss (smoothed)", [k for k in ("train/loss",) if any(k in r for r in log.rows)], "loss"),
        ("win rate (protocol, 100 games)", ["eval/vs_1steplA", "eval/vs_random", "eval/vs_old"], "win rate"),
        ("game length", ["eval/vs_old_length", "selfplay/length"], "moves"),
    ] + (extra_panels() if extra_panels else [])
    runlog.plot_panels(log.rows, panels, out / "curves.png", xlabel="updates",
                       smooth_window=5, suptitle=f"{algo.name} (seed {cfg.seed})")
    summary = {
        "algorithm": algo.name,
        "best_vs_1steplA": loop["best_win_rate"],
        "best_updates": loop["best_updates"],
        "reverts": loop["reverts"],
        "evaluations": loop["evals"],
        "wall_s": round(loop["wall_s"], 1),
        "final": log.rows[-1] if log.rows else {},
        "best": checkpoint.read_metadata(out / BEST)["metrics"] if (out / BEST).exists() else {},
        "command": " ".join(["python"] + sys.argv),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"{algo.name}: best win rate vs 1StepLA {loop['best_win_rate']:.2f} at {loop['best_updates']:,} "
          f"updates; {loop['reverts']} reverts; {loop['wall_s']:.0f}s. Best agent: {out / BEST}")
    return summary
