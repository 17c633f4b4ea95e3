"""Supervised stage (design.md §6): a network learns to imitate a teacher (CNET128 and 1StepLA by default).

``c4jax train supervised ARGS`` and ``python experiments/supervised.py ARGS`` run this module (the same
flags and ``--help``; docs/guide/train.md describes the runs). The dataset of the teacher's moves is loaded,
or generated and saved when missing (:mod:`c4jax.learning.dataset`); the network is the CNET where the
game's card says it reads the observations, else the residual tower's policy head."""

from __future__ import annotations

import dataclasses
import json
import time
import zipfile
from pathlib import Path
from typing import Sequence

from c4jax import games
from c4jax.cli import training
from c4jax.learning.settings.supervised import Config as Config
from c4jax.learning.settings.supervised import default_dataset as default_dataset
from c4jax.learning.settings.supervised import short_name

NAME = "supervised"


def defaults(game: str, preset: str | None = None) -> Config:
    """The default settings for ``game``: :class:`Config`'s with runs in ``runs/[<game>/]supervised``,
    then the card's flags for the stage."""
    cfg = dataclasses.replace(Config(out=training.out_dir(game, NAME), game=game),
                              **games.card_of(game).defaults_of(NAME).get(NAME, {}))
    return training.with_preset(cfg, preset)


# Flags that a --resume may give other values than the run was started with; every other setting must match.
RESUME_MAY_CHANGE = frozenset({"out", "resume", "overwrite", "progress", "epochs", "eval_matches", "eval_teacher",
                               "track", "preset"})


def load_or_make_dataset(cfg: Config):
    """``(dataset, info)``: the dataset of ``cfg.dataset_path``, or the one generated with
    ``cfg``'s teacher and saved there when the file is missing; ``info``: ``dataset_path``, ``generated``,
    ``generation_s``. :class:`c4jax.learning.loop.ConfigError` for a file that does not load, of another game,
    or a teacher that cannot generate it."""
    from c4jax.learning import dataset as data
    from c4jax.learning import loop

    path = cfg.dataset_path
    if path.exists():
        try:
            ds = data.Dataset.load_npz(path)
        except (ValueError, KeyError, zipfile.BadZipFile) as e:  # ValueError names the file
            raise loop.ConfigError(str(e) if isinstance(e, ValueError) else f"--dataset {str(path)!r}: {e}") from None
        if ds.game != cfg.game:
            raise loop.ConfigError(f"--dataset {str(path)!r} holds positions of {ds.game}, not of {cfg.game}")
        return ds, {"dataset_path": str(path), "generated": False}
    t0 = time.perf_counter()
    try:
        ds = data.generate(cfg.num_pairs, seed=cfg.data_seed, batch=cfg.generation_batch, progress=cfg.progress,
                           game=games.make(cfg.game), teacher=cfg.teacher_name, opening_plies=cfg.opening_plies)
    except ValueError as e:  # an unknown teacher, a teacher whose games repeat
        raise loop.ConfigError(f"--teacher {cfg.teacher_name!r}: {e}") from None
    seconds = time.perf_counter() - t0
    path.parent.mkdir(parents=True, exist_ok=True)
    ds.save_npz(path)
    print(f"generated {len(ds):,} pairs in {seconds:.1f}s -> {path}")
    return ds, {"dataset_path": str(path), "generated": True, "generation_s": round(seconds, 2)}


def _finished_summary(out: Path) -> dict | None:
    """The summary of a finished run in ``out`` (its agent and summary.json written), else None."""
    from c4jax.io import checkpoint
    from c4jax.learning import hostrun

    try:
        if checkpoint.read_metadata(out, game=None).get("algorithm") == NAME:
            return json.loads((out / hostrun.SUMMARY).read_text())
    except (checkpoint.CheckpointError, OSError, ValueError):
        pass
    return None


def main(cfg: Config) -> dict:
    """Train, evaluate and save the run of ``cfg`` (the module's docstring); returns its summary (that of the
    finished run in ``--out`` for a ``--resume`` with nothing left to do)."""
    import jax
    import numpy as np

    from c4jax import agents, evaluation
    from c4jax.agents.network import NetworkAgent
    from c4jax.agents.network_search import AlphaZeroAgent
    from c4jax.io import checkpoint, outdir, runlog
    from c4jax.learning import config, hostrun, loop
    from c4jax.learning import supervised as sv
    from c4jax.nets import cnet
    from c4jax.nets import tower as towers

    try:
        config.validate(cfg)
    except ValueError as e:
        raise loop.ConfigError(str(e)) from None
    out = outdir.claim(cfg.out, outdir.RUN, resume=cfg.resume, overwrite=cfg.overwrite)
    last = out / hostrun.LAST
    if cfg.resume and not checkpoint.exists(last):
        done = _finished_summary(out)
        if done is None:
            raise checkpoint.CheckpointError(f"--resume: no checkpoint to resume in {str(last)!r}")
        print(f"nothing to resume: {out} holds a finished run")
        return done
    if cfg.resume:
        outdir.check_resume_config(hostrun.saved_config(last, "progress"), dataclasses.asdict(cfg), RESUME_MAY_CHANGE,
                                   str(out))
    else:  # a new run: an older run's files must not pass for this one's
        hostrun.clear_state(out, hostrun.SUMMARY)
    timings = {}
    ds, data_info = load_or_make_dataset(cfg)
    train_frac = 1.0 - cfg.val_fraction - cfg.test_fraction
    train, val, test = ds.split((train_frac, cfg.val_fraction, cfg.test_fraction), seed=cfg.data_seed)
    print(f"dataset {len(ds):,} rows: train {len(train):,} / val {len(val):,} / test {len(test):,}")

    game = games.make(cfg.game)
    tower = () if games.kit_of(game).cnet else (cfg.tower_blocks, cfg.tower_channels)
    key = jax.random.key(cfg.seed)
    if tower:
        net, params = towers.two_headed(tower=tower, game=game), towers.init_params(key, tower=tower, game=game)
    else:
        net, params = cnet.CNet(width=cfg.width, heads="one"), cnet.init_params(key, width=cfg.width, heads="one")
    tx = sv.adam_l2(cfg.learning_rate, cfg.weight_decay)
    state = sv.TrainState(params=params, opt_state=tx.init(params), step=jax.numpy.int32(0))
    train_chunk, evaluate_split = sv.make_train_chunk(net, tx), sv.make_evaluate(net)
    rng = np.random.default_rng(cfg.seed)
    best = {"val/accuracy": -1.0}
    best_params = params
    done_epochs, train_s0 = 0, 0.0
    if cfg.resume:
        state, best_params, saved = sv.load_progress(last, state, params)
        if saved["rows"] != len(ds):
            raise checkpoint.CheckpointError(f"--resume: {str(last)!r} was trained on {saved['rows']:,} rows, "
                                             f"the dataset has {len(ds):,}")
        done_epochs, best, train_s0 = saved["epoch"], saved["best"], saved["train_s"]
        rng.bit_generator.state = saved["rng"]
        print(f"resumed {out} after epoch {done_epochs}")
        hostrun.note_saved(out, f"epoch {done_epochs}")
    else:
        hostrun.note_nothing_saved(out, "after the first epoch")
    log = runlog.RunLog(out, resume=cfg.resume, after_step=done_epochs if cfg.resume else None, track=cfg.track,
                        config=dataclasses.asdict(cfg), name=out.resolve().name)

    steps_per_epoch = len(train) // cfg.batch_size
    bar = hostrun.progress_bar(cfg.epochs * steps_per_epoch, done_epochs * steps_per_epoch, NAME, "step",
                               cfg.progress)
    t_train = time.perf_counter() - train_s0
    first = True  # the first chunk compiles the training program: say so when it does
    for epoch in range(done_epochs + 1, cfg.epochs + 1):
        t0 = time.perf_counter()
        batches = sv.epoch_batches(rng, len(train), cfg.batch_size)
        losses, accs = [], []
        for i in range(0, len(batches), cfg.chunk_steps):
            idx = batches[i : i + cfg.chunk_steps]
            with hostrun.compiling("the training program", NAME, bar, first):
                state, m = train_chunk(state, train.observations[idx], train.actions[idx])
            first = False
            losses.append(np.asarray(m["loss"]))
            accs.append(np.asarray(m["accuracy"]))
            bar.update(len(idx))
        train_s = time.perf_counter() - t0
        val_loss, val_acc = evaluate_split(state.params, val.observations, val.actions)
        row = log.log(epoch, {
            "epoch": epoch,
            "train/loss": float(np.concatenate(losses).mean()),
            "train/accuracy": float(np.concatenate(accs).mean()),
            "val/loss": val_loss,
            "val/accuracy": val_acc,
            "time/train_s": train_s,
            "time/epoch_s": time.perf_counter() - t0,
        })
        if val_acc > best["val/accuracy"]:
            best, best_params = {**row}, state.params
        bar.set_postfix(train_acc=f"{row['train/accuracy']:.3f}", val_acc=f"{val_acc:.3f}",
                        best=f"{best['val/accuracy']:.3f}@{best['epoch']}")
        sv.save_progress(last, state, best_params, {
            "epoch": epoch, "best": best, "rng": rng.bit_generator.state, "rows": len(ds),
            "train_s": time.perf_counter() - t_train, "config": dataclasses.asdict(cfg)})
        hostrun.note_saved(out, f"epoch {epoch}")
    bar.close()
    timings["train_s"] = round(time.perf_counter() - t_train, 2)

    test_loss, test_acc = evaluate_split(best_params, test.observations, test.actions)
    train_loss, train_acc = evaluate_split(best_params, train.observations, train.actions)
    metrics = {
        "best_epoch": best["epoch"],
        "train/accuracy": train_acc,
        "train/loss": train_loss,
        "val/accuracy": best["val/accuracy"],
        "val/loss": best["val/loss"],
        "test/accuracy": test_acc,
        "test/loss": test_loss,
    }
    print(f"best epoch {best['epoch']}: train acc {train_acc:.4f}, val acc {best['val/accuracy']:.4f}, "
          f"test acc {test_acc:.4f}" + (" (thesis: ~0.87 train, ~0.85 test)" if _thesis_setting(cfg) else ""))

    if tower:
        agent = AlphaZeroAgent(params=best_params, label=NAME, tower=tower, num_simulations=0, game=game)
    else:
        agent = NetworkAgent(params=best_params, label=NAME, width=cfg.width, heads="one",
                             output="policy", sampled=False, symmetric=cfg.symmetric, game=game)
    if cfg.eval_matches:
        t0 = time.perf_counter()
        teacher = (short_name(cfg.game, cfg.teacher_name),) if cfg.eval_teacher else ()
        for opp in dict.fromkeys(games.kit_of(game).reference_agents + teacher):
            res = evaluation.match(agent, agents.load(agents.in_game(opp, cfg.game)), jax.random.key(cfg.seed), game=game)
            metrics[f"eval/vs_{opp}"] = res.win_rate
            metrics[f"eval/vs_{opp}_first"] = res.win_rate_a_first
            metrics[f"eval/vs_{opp}_second"] = res.win_rate_b_first
            metrics[f"eval/vs_{opp}_length"] = res.mean_length
            print(f"greedy policy vs {opp}: win rate {res.win_rate:.2f} "
                  f"(first {res.win_rate_a_first:.2f}, second {res.win_rate_b_first:.2f})")
        timings["eval_s"] = round(time.perf_counter() - t0, 2)

    checkpoint.save(out, {"params": best_params}, {
        "name": NAME,
        "algorithm": NAME,
        "game": game.id,
        # a tower plays its raw policy (name@N would search with its untrained value head)
        "network": {"width": cfg.width, "heads": "two", "tower": list(tower)} if tower else
                   {"width": cfg.width, "heads": "one"},
        "agent": {"output": "policy", "default_mode": "det", "symmetric": cfg.symmetric,
                  **({"search": {"simulations": 0, "solve": False}} if tower else {})},
        "config": dataclasses.asdict(cfg),
        "metrics": metrics,
        "data": {**data_info, "rows": len(ds), "train": len(train), "val": len(val), "test": len(test)},
        "timings": timings,
    })
    network = f"tower {tower[0]}x{tower[1]}" if tower else f"CNET{cfg.width}"
    summary = hostrun.finish(log, lambda rows: runlog.plot_panels(
        rows,
        [("cross-entropy loss", ["train/loss", "val/loss"], "loss"),
         ("accuracy", ["train/accuracy", "val/accuracy"], "accuracy")],
        out / "curves.png", xlabel="epoch", suptitle=f"{network} imitating {cfg.teacher_name}",
    ), {"metrics": metrics, "timings": timings, "data": data_info})
    checkpoint.remove(last)  # finished: nothing left to resume
    print(f"saved checkpoint, metrics and curves.png to {out}")
    return summary


def _thesis_setting(cfg: Config) -> bool:
    """Whether the run imitates its game's own teacher on a game the thesis' CNET reads (the card's ``cnet``):
    the setting whose accuracies the thesis reports."""
    return games.card_of(cfg.game).cnet and not cfg.teacher


def cli(argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Parse ``argv`` (default: this process' arguments; the defaults are those of its ``--game``) and
    train; ``prog`` names the command in ``--help`` (``c4jax train supervised``; default: the script's
    file name)."""
    return training.command(NAME, defaults, main, argv, prog)
