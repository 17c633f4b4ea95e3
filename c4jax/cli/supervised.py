"""Supervised stage (design.md §6): CNET128 learns to imitate 1StepLA.

``c4jax train supervised ARGS`` and ``python experiments/supervised.py ARGS`` run this module
(the same flags and ``--help``).

    python experiments/supervised.py                          # thesis settings, writes runs/supervised
    python experiments/supervised.py --out checkpoints/supervised   # how the shipped agent was made
    python experiments/supervised.py --out runs/supervised --resume  # continue an interrupted run

Loads (or, when missing, generates and saves) the 1StepLA dataset, splits it
80/10/10 keeping mirror pairs together, trains with Adam + L2 weight decay and
cross-entropy, keeps the weights with the best validation accuracy, reports the
test accuracy, plays the tournament-protocol matches of the greedy policy against
Random and 1StepLA, and saves an Orbax checkpoint (loadable with
``agents.load(OUT)``), ``metrics.jsonl``/``metrics.csv``, ``curves.png`` and
``summary.json`` in ``--out``. After every epoch it saves the training state (optimiser,
best weights so far, the minibatch order's generator) to ``--out/last``, from which ``--resume``
continues exactly; a finished run deletes last/.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal, Sequence

import jax
import numpy as np
from tqdm.auto import tqdm

from c4jax import agents, evaluation, games
from c4jax.io import checkpoint, cliargs, interrupt, outdir, runlog, track
from c4jax.learning import config, loop, ranges
from c4jax.nets import cnet
from c4jax.agents.network import NetworkAgent
from c4jax.learning import supervised as sv

# the stage trains on the default game: it imitates its kit's dataset (design.md §6) and is evaluated against
# its kit's reference agents
KIT = games.kit_of(games.DEFAULT)
data = importlib.import_module(KIT.dataset)

LAST = "last"  # the resumable state, inside --out


@dataclass(frozen=True)
class Config:
    """Supervised imitation of 1StepLA (defaults: the thesis, design.md §6)."""

    out: str = "runs/supervised"
    """Run directory: checkpoint, metrics, plots and summary go here."""
    dataset: str = "data/1steplA_200k.npz"
    """Dataset .npz; generated with --num-pairs/--data-seed (and saved here) when missing."""
    num_pairs: int = 200_000
    """Rows to generate when the dataset file is missing (unique boards, mirrors included)."""
    data_seed: int = 0
    """Seed of dataset generation (when generated) and of the train/val/test split."""
    seed: int = 0
    """Seed of the network initialisation and of the minibatch order."""
    width: int = 128
    """CNET width: filters and dense units (thesis: 96, 128, 160, 192)."""
    learning_rate: float = 5e-4
    """Adam learning rate."""
    weight_decay: float = 2e-3
    """L2 penalty added to the gradient (PyTorch Adam's weight_decay)."""
    batch_size: int = 64
    """Minibatch size."""
    epochs: int = 20
    """Passes over the training split."""
    val_fraction: float = 0.1
    """Share of rows in the validation split."""
    test_fraction: float = 0.1
    """Share of rows in the test split."""
    chunk_steps: int = 250
    """Training steps per jitted call (the progress bar advances per chunk)."""
    eval_matches: bool = True
    """Play the protocol matches (100 games each) of the best network vs Random and 1StepLA."""
    symmetric: bool = True
    """The saved agent averages its policy with the mirrored board's (design.md §7, play time)."""
    progress: bool = True
    """Show progress bars."""
    resume: bool = False
    """Continue the run in --out from its last epoch's checkpoint (--out/last); a finished run has nothing
    to resume and is left as it is. Settings must be the ones the run was started with; --epochs (to train
    longer), --eval-matches, --progress and --track may change."""
    overwrite: bool = False
    """Replace the run that --out holds (without it, a new run refuses an --out that holds one)."""
    track: tuple[Literal["tensorboard", "wandb"], ...] = ()
    """Also send every epoch's metrics to these trackers: tensorboard (event files in OUT/tb) and/or wandb
    (the track extra)."""

    RANGES: ClassVar[dict] = {
        "num_pairs": ranges.ONE_OR_MORE, "data_seed": ranges.NON_NEGATIVE, "seed": ranges.NON_NEGATIVE,
        "width": ranges.ONE_OR_MORE, "learning_rate": ranges.POSITIVE, "weight_decay": ranges.NON_NEGATIVE,
        "batch_size": ranges.ONE_OR_MORE, "epochs": ranges.ONE_OR_MORE, "val_fraction": ranges.Range(0, 1, high_open=True),
        "test_fraction": ranges.Range(0, 1, high_open=True), "chunk_steps": ranges.ONE_OR_MORE,
    }
    SMOKE: ClassVar[dict] = {"dataset": "runs/smoke/1steplA_2k.npz", "num_pairs": 2000, "width": 16, "epochs": 1, "chunk_steps": 10}

    def __post_init__(self):
        if not ranges.checking():
            return
        ranges.check(self)
        if self.val_fraction + self.test_fraction >= 1:
            raise ValueError(f"--val-fraction + --test-fraction must be < 1 (the rest trains), got "
                             f"{self.val_fraction} + {self.test_fraction}")
        track.check_backends(self.track)


# Flags that a --resume may give other values than the run was started with; every other setting must match.
RESUME_MAY_CHANGE = frozenset({"out", "resume", "overwrite", "progress", "epochs", "eval_matches", "track"})


def load_or_make_dataset(cfg: Config) -> tuple[data.Dataset, dict]:
    path = Path(cfg.dataset)
    if path.exists():
        try:
            return data.Dataset.load_npz(path), {"dataset_path": str(path), "generated": False}
        except (ValueError, KeyError, zipfile.BadZipFile) as e:  # ValueError names the file
            raise loop.ConfigError(str(e) if isinstance(e, ValueError) else f"--dataset {str(path)!r}: {e}") from None
    t0 = time.perf_counter()
    ds = data.generate(cfg.num_pairs, seed=cfg.data_seed, progress=cfg.progress)
    seconds = time.perf_counter() - t0
    path.parent.mkdir(parents=True, exist_ok=True)
    ds.save_npz(path)
    print(f"generated {len(ds):,} pairs in {seconds:.1f}s -> {path}")
    return ds, {"dataset_path": str(path), "generated": True, "generation_s": round(seconds, 2)}


def _finished_summary(out: Path) -> dict | None:
    """The summary of a finished run in ``out`` (its agent and summary.json written), else None."""
    try:
        if checkpoint.read_metadata(out).get("algorithm") == "supervised":
            return json.loads((out / "summary.json").read_text())
    except (checkpoint.CheckpointError, OSError, ValueError):
        pass
    return None


def _saved_config(last: Path) -> dict | None:
    """The settings a resumable run was started with (None: saved before they were recorded)."""
    for name in (checkpoint.METADATA_FILE, checkpoint.PREVIOUS_FILE):
        try:
            return checkpoint.read_metadata(last, name)["progress"].get("config")
        except (checkpoint.CheckpointError, KeyError, AttributeError):
            continue
    return None


def main(cfg: Config) -> dict:
    out = outdir.claim(cfg.out, outdir.RUN, resume=cfg.resume, overwrite=cfg.overwrite)
    if cfg.resume and not checkpoint.exists(out / LAST):
        done = _finished_summary(out)
        if done is None:
            raise checkpoint.CheckpointError(f"--resume: no checkpoint to resume in {str(out / LAST)!r}")
        print(f"nothing to resume: {out} holds a finished run")
        return done
    if cfg.resume:
        outdir.check_resume_config(_saved_config(out / LAST), dataclasses.asdict(cfg), RESUME_MAY_CHANGE, str(out))
    if not cfg.resume:  # a new run: an older run's files must not pass for this one's
        checkpoint.remove(out / LAST)
        (out / "summary.json").unlink(missing_ok=True)
    timings = {}
    ds, data_info = load_or_make_dataset(cfg)
    train_frac = 1.0 - cfg.val_fraction - cfg.test_fraction
    train, val, test = ds.split((train_frac, cfg.val_fraction, cfg.test_fraction), seed=cfg.data_seed)
    print(f"dataset {len(ds):,} rows: train {len(train):,} / val {len(val):,} / test {len(test):,}")

    net = cnet.CNet(width=cfg.width, heads="one")
    tx = sv.adam_l2(cfg.learning_rate, cfg.weight_decay)
    key = jax.random.key(cfg.seed)
    params = cnet.init_params(key, width=cfg.width, heads="one")
    state = sv.TrainState(params=params, opt_state=tx.init(params), step=jax.numpy.int32(0))
    train_chunk, evaluate_split = sv.make_train_chunk(net, tx), sv.make_evaluate(net)
    rng = np.random.default_rng(cfg.seed)
    best = {"val/accuracy": -1.0}
    best_params = params
    done_epochs, train_s0 = 0, 0.0
    if cfg.resume:
        state, best_params, saved = sv.load_progress(out / LAST, state, params)
        if saved["rows"] != len(ds):
            raise checkpoint.CheckpointError(f"--resume: {str(out / LAST)!r} was trained on {saved['rows']:,} rows, "
                                             f"the dataset has {len(ds):,}")
        done_epochs, best, train_s0 = saved["epoch"], saved["best"], saved["train_s"]
        rng.bit_generator.state = saved["rng"]
        print(f"resumed {out} after epoch {done_epochs}")
    log = runlog.RunLog(out, resume=cfg.resume, after_step=done_epochs if cfg.resume else None, track=cfg.track,
                        config=dataclasses.asdict(cfg), name=out.resolve().name)

    steps_per_epoch = len(train) // cfg.batch_size
    bar = tqdm(total=cfg.epochs * steps_per_epoch, initial=done_epochs * steps_per_epoch, desc="supervised",
               unit="step", disable=not cfg.progress, dynamic_ncols=True)
    t_train = time.perf_counter() - train_s0
    for epoch in range(done_epochs + 1, cfg.epochs + 1):
        t0 = time.perf_counter()
        batches = sv.epoch_batches(rng, len(train), cfg.batch_size)
        losses, accs = [], []
        for i in range(0, len(batches), cfg.chunk_steps):
            idx = batches[i : i + cfg.chunk_steps]
            state, m = train_chunk(state, train.boards[idx], train.actions[idx])
            losses.append(np.asarray(m["loss"]))
            accs.append(np.asarray(m["accuracy"]))
            bar.update(len(idx))
        train_s = time.perf_counter() - t0
        val_loss, val_acc = evaluate_split(state.params, val.boards, val.actions)
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
        sv.save_progress(out / LAST, state, best_params, {
            "epoch": epoch, "best": best, "rng": rng.bit_generator.state, "rows": len(ds),
            "train_s": time.perf_counter() - t_train, "config": dataclasses.asdict(cfg)})
        interrupt.set_note(interrupt.resume_note(out / LAST, f"epoch {epoch}"))
    bar.close()
    timings["train_s"] = round(time.perf_counter() - t_train, 2)

    test_loss, test_acc = evaluate_split(best_params, test.boards, test.actions)
    train_loss, train_acc = evaluate_split(best_params, train.boards, train.actions)
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
          f"test acc {test_acc:.4f} (thesis: ~0.87 train, ~0.85 test)")

    agent = NetworkAgent(params=best_params, label="supervised", width=cfg.width, heads="one",
                         output="policy", sampled=False, symmetric=cfg.symmetric)
    if cfg.eval_matches:
        t0 = time.perf_counter()
        for opp in KIT.reference_agents:
            res = evaluation.match(agent, agents.load(opp), jax.random.key(cfg.seed))
            metrics[f"eval/vs_{opp}"] = res.win_rate
            metrics[f"eval/vs_{opp}_first"] = res.win_rate_a_first
            metrics[f"eval/vs_{opp}_second"] = res.win_rate_b_first
            metrics[f"eval/vs_{opp}_length"] = res.mean_length
            print(f"greedy policy vs {opp}: win rate {res.win_rate:.2f} "
                  f"(first {res.win_rate_a_first:.2f}, second {res.win_rate_b_first:.2f})")
        timings["eval_s"] = round(time.perf_counter() - t0, 2)

    checkpoint.save(out, {"params": best_params}, {
        "name": "supervised",
        "algorithm": "supervised",
        "network": {"width": cfg.width, "heads": "one"},
        "agent": {"output": "policy", "default_mode": "det", "symmetric": cfg.symmetric},
        "config": dataclasses.asdict(cfg),
        "metrics": metrics,
        "data": {**data_info, "rows": len(ds), "train": len(train), "val": len(val), "test": len(test)},
        "timings": timings,
    })
    log.close()
    log.write_csv()
    runlog.plot_panels(
        log.rows,
        [("cross-entropy loss", ["train/loss", "val/loss"], "loss"),
         ("accuracy", ["train/accuracy", "val/accuracy"], "accuracy")],
        out / "curves.png", xlabel="epoch", suptitle=f"CNET{cfg.width} imitating 1StepLA",
    )
    summary = {"metrics": metrics, "timings": timings, "data": data_info,
               "command": runlog.command_line()}
    runlog.write_json(out / "summary.json", summary)
    checkpoint.remove(out / LAST)  # finished: nothing left to resume
    print(f"saved checkpoint, metrics and curves.png to {out}")
    return summary



def cli(argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Parse ``argv`` (default: this process' arguments) and train; ``prog`` names the command in
    ``--help`` (``c4jax train supervised``; default: the script's file name)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    with cliargs.one_line_errors(argv, prog):
        cfg = config.parse_cli(Config(), argv, prog=prog)
    return loop.exit_on_error(main, cfg)
