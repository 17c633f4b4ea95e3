"""The host loop shared by every RL trainer (design.md §7).

An :class:`~c4jax.learning.algorithm.Algorithm` supplies a pytree training state and a jitted ``chunk``
that advances it to the next evaluation. Between chunks this loop evaluates
(:mod:`~c4jax.learning.training_eval`), applies the old-network rule (:mod:`~c4jax.learning.selection`),
writes the run directory (:mod:`~c4jax.learning.rundir`) and saves ``<out>/last``, from which
``--resume`` continues exactly, even after ``kill -9``. Seeds stack with :mod:`~c4jax.learning.stacked`,
devices with :mod:`~c4jax.learning.placement`.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path
from typing import Any, Callable

import jax
import numpy as np

from c4jax import agents
from c4jax.io import checkpoint, devices, interrupt, outdir, track
from c4jax.nets import cnet
from c4jax.learning import hostrun, portable, selection
from c4jax.learning.algorithm import EVAL_FIELDS, Algorithm
from c4jax.learning.config import settle
from c4jax.learning.hostrun import LAST, say as _say
from c4jax.learning.training_eval import evaluate, evaluated_agent, metrics_row
from c4jax.learning.placement import Placement, plan
from c4jax.learning.rundir import BEST, SeedRun, seed_dirs, summarize_seeds
from c4jax.learning.stacked import make_chunk, seed_slice, stack_seeds
from c4jax.learning.settings.loop import LoopConfig as LoopConfig
from c4jax.learning.settings.loop import from_scratch as from_scratch
from c4jax.learning.settings.loop import OutPath as OutPath
from c4jax.learning.train_state import data_to_keys, keys_to_data, where_seeds


class ConfigError(ValueError):
    """Settings that do not fit together, found when the run starts (e.g. an algorithm and a
    --game it cannot train on)."""


def source_params(cfg: LoopConfig, width: int) -> dict | None:
    """The params of ``cfg.init_from`` (``None`` when training from scratch), restored once."""
    if not cfg.init_from:
        return None
    source = agents.checkpoint_path(cfg.init_from)
    meta = checkpoint.read_metadata(source, game=cfg.game)
    src_width, src_heads = meta["network"]["width"], meta["network"]["heads"]
    if src_width != width:
        raise checkpoint.CheckpointError(f"--init-from {cfg.init_from!r} has width {src_width}, this run uses {width}")
    like = {"params": cnet.param_shapes(width=width, heads=src_heads)}
    return checkpoint.restore(source, like)["params"]


def initial_params(cfg: LoopConfig, heads: str, width: int, key: jax.Array, source: dict | None = None):
    """Fresh CNet params of ``heads`` with conv/dense/head copied from ``cfg.init_from`` (a value head stays
    fresh). ``source``: ``source_params(cfg, width)`` if already restored."""
    params = cnet.init_params(key, width=width, heads=heads)
    if source is None:
        source = source_params(cfg, width)
    if source is None:
        return params
    return {**params, **{k: source[k] for k in ("conv", "dense", "head")}}


def initial_state(algo: Algorithm, cfg: LoopConfig, width: int, seed: int, source: dict | None = None):
    """The fresh training state of ``seed`` (the same alone or inside ``--vmap-seeds``)."""
    init_key, run_key = jax.random.split(jax.random.key(seed))
    fresh = algo.fresh_params(init_key)  # an algorithm's own network (not a CNET)
    if fresh is not None:
        return algo.init(run_key, fresh)
    return algo.init(run_key, initial_params(cfg, algo.heads, width, init_key, source))


# --- checkpoints of the whole training state ------------------------------------------------


def save_state(directory: Path, state, old_params, loop: dict, meta: dict, write: bool = True) -> None:
    """Save ``last/`` from host copies of the arrays, keeping the previous checkpoint as a fallback.
    Every process calls it; only the one with ``write`` writes."""
    tree = devices.to_host({"state": keys_to_data(state), "old_params": old_params})
    if write:
        checkpoint.save(directory, tree, {**meta, "loop": loop}, keep_previous=True)


def load_state(directory: Path, state_like, params_like, seeds: list[int] | None = None, game: str | None = None):
    """``(state, old_params, loop counters)`` saved in ``directory`` (the previous checkpoint, with a warning,
    if the latest is damaged). ``CheckpointError`` unless it holds ``seeds`` of ``game`` (None: any)."""
    def check(meta: dict) -> None:
        if game is not None and meta.get("game") != game:
            raise checkpoint.CheckpointError(f"checkpoint {str(directory)!r} is of the game {meta.get('game')!r}, "
                                             f"not {game!r}")
        if seeds is not None and meta.get("seeds") != seeds:
            raise checkpoint.CheckpointError(f"--resume: {str(directory)!r} holds seeds {meta.get('seeds')}, not {seeds}")

    like = {"state": keys_to_data(state_like), "old_params": params_like}
    tree, meta = checkpoint.restore_latest(directory, like, check=check)
    return data_to_keys(tree["state"], state_like), tree["old_params"], meta["loop"]


# --- the loop -------------------------------------------------------------------------------


def _meta_common(algo: Algorithm, cfg: LoopConfig, width: int, algo_config: dict, seed: int) -> dict:
    return {
        "name": algo.name,
        "algorithm": algo.name,
        "game": algo.game.id,
        "network": {"width": width, "heads": algo.heads, **algo.network_meta},
        "agent": {"output": algo.output, "default_mode": algo.default_mode, "symmetric": True, **algo.agent_meta},
        "config": {**dataclasses.asdict(cfg), "seed": seed, **algo_config},
    }


def _check_resumable(out: Path) -> None:
    if not checkpoint.exists(out / LAST) and not portable.exists(out / portable.PORTABLE):
        raise checkpoint.CheckpointError(f"--resume: no checkpoint to resume in {str(out / LAST)!r} "
                                         f"(nor a portable state in {str(out / portable.PORTABLE)!r})")


def _resume_state(algo: Algorithm, out: Path, state, old_params, seeds: list[int], game: str, write: bool):
    """``(state, old_params, counters)`` of ``--resume``: from ``last/``, else from the portable state."""
    if checkpoint.exists(out / LAST):
        return load_state(out / LAST, state, old_params, seeds, game)
    state, old_params, counters, targets = portable.load(out / portable.PORTABLE, state, old_params, seeds, game)
    rows = sum(max(n) for n in targets.values()) if targets else 0
    if write:
        print(f"{algo.name}: resuming from the portable state {out / portable.PORTABLE}"
              + (f": refilling the replay buffer by self-play ({rows:,} rows; not bit-exact) ..." if rows else ""),
              flush=True)
    state, _ = portable.refill(algo, state, targets, len(seeds))
    return state, old_params, counters


def exit_on_error(fn: Callable[..., Any], *args, **kwargs) -> Any:
    """``fn(*args, **kwargs)``; a checkpoint, output, device, tracker, config or OS error instead prints one
    ``error: ...`` line to stderr and exits with status 2; Ctrl-C: :func:`c4jax.io.interrupt.guard`."""
    try:
        with interrupt.guard():
            return fn(*args, **kwargs)
    except (checkpoint.CheckpointError, devices.DeviceError, outdir.OutputError, track.TrackingError, ConfigError) as e:
        message = str(e)
    except OSError as e:  # the disk filled, a file became unwritable
        message = f"{e.strerror}: {str(e.filename)!r}" if e.filename and e.strerror else str(e)
    print("error: " + " ".join(message.split()), file=sys.stderr)
    raise SystemExit(2)


# Flags that a --resume may give other values than the run was started with; every other setting must match.
RESUME_MAY_CHANGE = frozenset({"out", "resume", "overwrite", "progress", "total_updates", "track", "devices", "shard",
                               "coordinator_address", "num_processes", "process_id"})


def check_resume_config(out: Path, config: dict, interval_of: Callable[[dict], int | None] | None = None) -> None:
    """Refuse a ``--resume`` whose settings differ from the saved run's outside :data:`RESUME_MAY_CHANGE`.
    ``interval_of(config)``: updates between evaluations; settings giving the same interval count as equal."""
    saved = hostrun.saved_config(out / LAST)
    if saved is None and portable.exists(out / portable.PORTABLE):
        saved = portable.read_metadata(out / portable.PORTABLE).get("config")
    if saved and saved.get("init_from") and config.get("init_from") and saved["init_from"] != config["init_from"]:
        # one checkpoint named two ways (the shipped name, or a path to it) is the same setting
        was, now = (agents.checkpoint_path(c["init_from"]).resolve() for c in (saved, config))
        saved = {**saved, "init_from": config["init_from"]} if was == now else saved
    if saved and interval_of is not None:
        fields = [k for k in EVAL_FIELDS if k in saved and k in config]
        if any(saved[k] != config[k] for k in fields) and interval_of(saved) == interval_of(config) is not None:
            saved = {**saved, **{k: config[k] for k in fields}}
    outdir.check_resume_config(saved, config, RESUME_MAY_CHANGE, str(out))


def _spread(values: list[float], digits: int = 2) -> str:
    """One value, or K seeds' mean±std."""
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return f"{np.mean(values):.{digits}f}±{np.std(values):.{digits}f}"


def evaluation_line(name: str, updates: int, rows: list[dict], select_by: str, wall_s: float) -> str:
    """The stdout line of one evaluation of K seeds' metric ``rows`` (K > 1: mean±std), e.g.
    ``ppo  1,000 upd  vs_random 1.00  vs_old 0.50  vs_1steplA 0.62  best 0.62  12.3s``."""
    first = rows[0]
    parts = [name if len(rows) == 1 else f"{name} x{len(rows)}", f"{updates:,} upd"]
    for key in first:
        if key.startswith("eval/vs_") and not key.endswith("_length"):
            parts.append(f"{key.removeprefix('eval/')} {_spread([row[key] for row in rows])}")
    if "yardstick/keep" in first:
        parts.append(f"keep {_spread([row['yardstick/keep'] for row in rows])}")
    best = f"eval/best_vs_{select_by}"
    if best in first:
        parts.append(f"best {_spread([row[best] for row in rows])}")
    reverted = sum(bool(row.get("eval/reverted")) for row in rows)
    if reverted:
        parts.append("reverted" if len(rows) == 1 else f"reverted {reverted}/{len(rows)}")
    return "  ".join(parts + [f"{wall_s:.1f}s"])


def run(algo: Algorithm, cfg: LoopConfig, *, width: int, algo_config: dict,
        extra_panels: Callable[[], list] | None = None, note: str = "") -> dict:
    """Train ``algo`` to ``cfg.total_updates`` with evaluation, the old-network rule and checkpoints.

    K = ``cfg.vmap_seeds`` seeds (``cfg.seed + k``) train stacked in one program; seed ``s`` uses the
    same keys whatever K is. On N > 1 devices the program is partitioned (:func:`placement.plan`);
    numbers match one device up to float rounding. Only process 0 writes files. Writes per seed a run
    directory (``--out``, or ``<out>/seed_<s>`` when K > 1) with metrics, curves, ``best/`` and
    ``summary.json``; ``<out>/last`` for ``--resume``; with K > 1 also ``<out>/summary.json``,
    ``seeds.md`` and ``curves.png``. ``note``: appended to every evaluation line and the closing line.
    Returns the summary (``{}`` on processes other than 0). :class:`ConfigError` for unfit settings.
    """
    try:
        cfg = settle(cfg)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    if cfg.num_processes > 1:
        devices.initialize(cfg.coordinator_address, cfg.num_processes, cfg.process_id)
    placement = plan(algo, cfg.devices, cfg.vmap_seeds, cfg.shard)
    with placement.context():
        return _run(algo, cfg, placement, width=width, algo_config=algo_config, extra_panels=extra_panels, note=note)


def load_opponents(cfg: LoopConfig) -> None:
    """:class:`ConfigError` naming the first of ``cfg.eval_opponents`` that does not load."""
    for name in cfg.eval_opponents:
        try:
            agents.load(cfg.agent_name(name))
        except (ValueError, FileNotFoundError, checkpoint.CheckpointError) as e:
            raise ConfigError(f"--eval-opponents {name!r}: {e}") from None


def _run(algo: Algorithm, cfg: LoopConfig, placement: Placement, *, width: int, algo_config: dict,
         extra_panels: Callable[[], list] | None = None, note: str = "") -> dict:
    """:func:`run` on ``placement``'s devices."""
    tail = f"  {note}" if note else ""
    if algo.game.id != cfg.game:
        raise ConfigError(f"{algo.name} trains on {algo.game.id} only; this run's --game is {cfg.game}")
    load_opponents(cfg)
    total = cfg.total_updates
    write = devices.is_main_process()
    k_seeds = cfg.vmap_seeds
    seeds = [cfg.seed + k for k in range(k_seeds)]
    out = Path(cfg.out)
    if write:
        outdir.claim(out, outdir.RUN, resume=cfg.resume, overwrite=cfg.overwrite)
    if cfg.resume:  # before anything is loaded: a resume with other settings is refused, naming them
        _check_resumable(out)
        check_resume_config(out, _meta_common(algo, cfg, width, algo_config, cfg.seed)["config"], algo.eval_interval_of)
    if cfg.init_from and not algo.is_cnet:
        raise checkpoint.CheckpointError(f"--init-from starts a CNET from a checkpoint; this run's network is not "
                                         f"a CNET ({algo.network_meta})")
    source = source_params(cfg, width)
    state = stack_seeds([initial_state(algo, cfg, width, s, source) for s in seeds])
    metas = [_meta_common(algo, cfg, width, algo_config, s) for s in seeds]
    meta_all = {**metas[0], "seeds": seeds, "devices": {"count": placement.n, "split": placement.mode}}
    counters = {"seeds": [selection.new_counters() for _ in seeds], "wall_s": 0.0, "cpu_s": 0.0}
    old_params = algo.playing_params(state)
    if cfg.resume:
        state, old_params, counters = _resume_state(algo, out, state, old_params, seeds, cfg.game, write)
    elif write:  # a new run: an older run's state must not become the fallback of this one's
        hostrun.clear_state(out, portable.PORTABLE)
    chunk, state = make_chunk(algo, k_seeds, placement, state, budget=total)  # a resumed run: onto any devices
    if placement.mesh is not None:
        old_params = devices.put(old_params, jax.tree.map(lambda s: s.sharding, state.params))
    updates_of = lambda st: np.asarray(devices.to_host(st.updates))  # noqa: E731  [K]
    after = int(updates_of(state).min()) if cfg.resume else None
    if cfg.resume and write:
        print(f"resumed {out} at {after:,} updates ({counters['seeds'][0]['evals']} evaluations)")
    if cfg.resume:
        hostrun.note_saved(out, f"{after:,} updates")
    else:
        hostrun.note_nothing_saved(out, "at the first evaluation")
    if placement.mesh is not None and write:
        print(f"{algo.name}: {placement.describe()}" + (f", {jax.process_count()} processes" if jax.process_count() > 1 else ""))
    dirs = seed_dirs(out, seeds)
    # each seed keeps the rows up to its own checkpointed step (seeds of a vmapped run differ in updates)
    afters = [int(u) for u in updates_of(state)] if cfg.resume else [None] * k_seeds
    runs = [SeedRun(d, s, m, c, cfg.resume, a, write, cfg.track, out.resolve().name,
                    rule=cfg.selection_rule, select_by=cfg.select_by, reference=cfg.reference)
            for d, s, m, c, a in zip(dirs, seeds, metas, counters["seeds"], afters)]

    agent_of = evaluated_agent(algo, cfg, width)
    desc = algo.name if k_seeds == 1 else f"{algo.name} x{k_seeds}"
    bar = hostrun.progress_bar(total, int(updates_of(state).min()), desc, "upd", cfg.progress and write)
    t_start = time.perf_counter() - counters["wall_s"]
    cpu_start = time.process_time() - counters.get("cpu_s", 0.0)  # a state saved without it: from this segment on
    first = write  # the first chunk and evaluation of this process compile their programs: say so once
    while updates_of(state).min() < total:
        done = updates_of(state) >= total  # [K] seeds at the budget: kept as they are, no row logged
        before, held = int(updates_of(state).min()), state
        with hostrun.compiling("the training program", algo.name, bar, first):
            if algo.block_end(before) <= total:
                state, metrics = chunk(state)
            else:  # the last block, shortened to end at the budget (a chunk of its own, compiled once)
                units = algo.short_block(seed_slice(state, 0), total - before)
                short, state = make_chunk(algo, k_seeds, placement, state, units, budget=total)
                state, metrics = short(state)
                if int(updates_of(state).min()) == before:  # no update is left to make (self-play left none)
                    break
        if done.any():
            state = where_seeds(done, held, state)
        params, updates = algo.playing_params(state), updates_of(state)
        with hostrun.compiling("the evaluation matches", algo.name, bar, first):
            evaluated = evaluate(agent_of, algo.name, params, old_params, seeds, [r.loop["evals"] for r in runs], cfg,
                                 algo.game)
        first = False
        wall, cpu = time.perf_counter() - t_start, time.process_time() - cpu_start
        saved = params if placement.mesh is None else devices.to_host(params)  # best/: host copies on a mesh
        saved = algo.saved_params(saved)
        decisions, rows = [], []
        for k, r in enumerate(runs):
            if done[k]:
                decisions.append(None)
                rows.append(r.last_row())
                continue
            row = metrics_row(metrics, k, evaluated[k])
            decisions.append(r.record(int(updates[k]), row, seed_slice(saved, k), wall, cpu))
            rows.append(row)
        best = np.array([d == selection.BEST for d in decisions])
        revert = np.array([d == selection.REVERT for d in decisions])
        old_params = where_seeds(best, params, old_params)
        if revert.any():
            state = state.replace(params=where_seeds(revert, old_params, state.params))
        state = algo.sync_target(state, best | revert)  # DQN: optionally reset its target network too
        counters["wall_s"], counters["cpu_s"] = wall, cpu
        metrics_meta = rows[0] if k_seeds == 1 else {"seeds": rows}
        save_state(out / LAST, state, old_params, counters, {**meta_all, "metrics": metrics_meta}, write)
        portable.save(out / portable.PORTABLE, state, old_params, counters, meta_all, write)
        hostrun.note_saved(out, f"{int(updates.min()):,} updates")
        bar.update(int(updates.min()) - before)
        if write:
            _say(evaluation_line(algo.name, int(updates.min()), rows, cfg.select_by, wall) + tail, bar)
        wins = [row[f"eval/vs_{cfg.reference}"] for row in rows]
        bar.set_postfix({f"vs_{cfg.reference}": f"{np.mean(wins):.2f}" + (f"±{np.std(wins):.2f}" if k_seeds > 1 else "")},
                        best=f"{np.mean([r.loop['best_win_rate'] for r in runs]):.2f}",
                        len=f"{np.mean([row.get('selfplay/length', 0) for row in rows]):.1f}")
    bar.close()
    per_seed = [r.finish(algo.name, extra_panels) for r in runs]
    if not write:  # another process of a multi-process run: process 0 reports
        return {}
    if k_seeds == 1:
        c = runs[0].loop
        print(f"{algo.name}: best win rate vs {cfg.select_by} {c['best_win_rate']:.2f} at {c['best_updates']:,} "
              f"updates; {c['reverts']} revert{'s' * (c['reverts'] != 1)}; {counters['wall_s']:.0f}s. Best agent: {out / BEST}{tail}")
        return per_seed[0]
    return summarize_seeds(algo.name, out, seeds, runs, per_seed, counters["wall_s"], cfg.select_by, cfg.reference)
