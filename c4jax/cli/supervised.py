"""Supervised stage (design.md §6): a network learns to imitate a teacher (CNET128 and 1StepLA by default).

``c4jax train supervised ARGS`` and ``python experiments/supervised.py ARGS`` run this module
(the same flags and ``--help``).

    python experiments/supervised.py                          # thesis settings, writes runs/supervised
    python experiments/supervised.py --out checkpoints/supervised   # how the shipped agent was made
    python experiments/supervised.py --out runs/supervised --resume  # continue an interrupted run
    python experiments/supervised.py --game GAME              # another game -> runs/GAME/supervised

Loads (or, when missing, generates and saves) the dataset of the teacher's moves
(:mod:`c4jax.learning.dataset`; the game kit's teacher: 1StepLA for the default game), splits it
80/10/10 keeping a position's images under the kit's symmetries together, trains with Adam + L2
weight decay and cross-entropy, keeps the weights with the best validation accuracy, reports the
test accuracy, plays the tournament-protocol matches of the greedy policy against the kit's
reference agents and the teacher, and saves an Orbax checkpoint (loadable with
``agents.load(OUT)``), ``metrics.jsonl``/``metrics.csv``, ``curves.png`` and
``summary.json`` in ``--out``. After every epoch it saves the training state (optimiser,
best weights so far, the minibatch order's generator) to ``--out/last``, from which ``--resume``
continues exactly; a finished run deletes last/. The network is the CNET where the game's kit says it
reads the observations, else the residual tower's policy head (:mod:`c4jax.nets.tower`; its value head is
not trained, and the agent plays its raw policy).
"""

from __future__ import annotations

import dataclasses
import json
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal, Sequence

import jax
import numpy as np
from tqdm.auto import tqdm

from c4jax import agents, evaluation, games
from c4jax.io import checkpoint, interrupt, outdir, runlog, track
from c4jax.cli import training
from c4jax.learning import config, loop, ranges
from c4jax.learning import dataset as data
from c4jax.nets import tower as towers
from c4jax.nets import cnet
from c4jax.agents.network import NetworkAgent
from c4jax.agents.network_search import AlphaZeroAgent
from c4jax.learning import supervised as sv

LAST = "last"  # the resumable state, inside --out


@dataclass(frozen=True)
class Config:
    """Supervised imitation of a teacher (defaults: the thesis on the default game; another game's from its
    kit: --game NAME --help)."""

    out: loop.OutPath = "runs/supervised"
    """Run directory: checkpoint, metrics, plots and summary go here."""
    game: str = games.DEFAULT
    """The game (one of c4jax.games.GAMES)."""
    teacher: str = ""
    """The agent to imitate (an agents.load name within --game; '': the game kit's teacher, 1steplA on the
    default game)."""
    dataset: str = ""
    """Dataset .npz; generated with --num-pairs/--data-seed (and saved here) when missing ('':
    data/[GAME/]TEACHER_<N>k.npz, the game's folder only for a game other than the default one)."""
    num_pairs: int = 200_000
    """Rows to generate when the dataset file is missing (distinct positions, their images included)."""
    data_seed: int = 0
    """Seed of dataset generation (when generated) and of the train/val/test split."""
    generation_batch: int = 4096
    """Games the teacher plays per jitted call when generating the dataset."""
    opening_plies: int = 4
    """Random moves that start each generated game, on a game whose kit has no random start positions."""
    seed: int = 0
    """Seed of the network initialisation and of the minibatch order."""
    width: int = 128
    """CNET width: filters and dense units (thesis: 96, 128, 160, 192)."""
    tower_blocks: int = 2
    """Residual blocks of the tower, on a game the CNET does not read (c4jax.nets.tower)."""
    tower_channels: int = 32
    """Filters of every 3x3 convolution of the tower."""
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
    """Play the protocol matches (100 games each) of the best network vs the game kit's reference agents and the
    teacher (Random and 1StepLA on the default game)."""
    eval_teacher: bool = True
    """With --eval-matches, also play the teacher where it is not one of the kit's reference agents."""
    symmetric: bool = True
    """The saved agent averages its policy with the mirrored board's (at play time)."""
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
    preset: Literal["default", "smoke"] = "default"
    """'default': the settings above (the game's); 'smoke': the smallest run, which checks the pipeline."""

    RANGES: ClassVar[dict] = {
        "num_pairs": ranges.ONE_OR_MORE, "data_seed": ranges.NON_NEGATIVE, "seed": ranges.NON_NEGATIVE,
        "generation_batch": ranges.ONE_OR_MORE, "opening_plies": ranges.NON_NEGATIVE, "width": ranges.ONE_OR_MORE,
        "tower_blocks": ranges.ONE_OR_MORE, "tower_channels": ranges.ONE_OR_MORE, "learning_rate": ranges.POSITIVE, "weight_decay": ranges.NON_NEGATIVE,
        "batch_size": ranges.ONE_OR_MORE, "epochs": ranges.ONE_OR_MORE, "val_fraction": ranges.Range(0, 1, high_open=True),
        "test_fraction": ranges.Range(0, 1, high_open=True), "chunk_steps": ranges.ONE_OR_MORE,
    }
    SMOKE_PAIRS: ClassVar[int] = 2000

    @property
    def smoke(self) -> dict:
        """``--preset smoke``: 2,000 rows (kept under runs/smoke), a small network, one epoch."""
        return {"dataset": str(Path("runs", config.SMOKE) / default_dataset(self.game, self.teacher_name, self.SMOKE_PAIRS)),
                "num_pairs": self.SMOKE_PAIRS, "generation_batch": min(self.generation_batch, 64), "width": 16,
                "tower_blocks": 1, "tower_channels": 8, "epochs": 1, "chunk_steps": 50,  # the epoch in one chunk
                "eval_teacher": False}

    @property
    def teacher_name(self) -> str:
        """The ``agents.load`` name of the teacher (``--teacher``, else the game kit's)."""
        return data.teacher_name(games.make(self.game), self.teacher)

    @property
    def dataset_path(self) -> Path:
        return Path(self.dataset) if self.dataset else Path("data") / default_dataset(self.game, self.teacher_name,
                                                                                       self.num_pairs)

    def check(self) -> None:
        """``ValueError`` for settings that do not fit together (:func:`c4jax.learning.config.validate`)."""
        if self.game not in games.GAMES:
            raise ValueError(f"--game must be one of {sorted(games.GAMES)}, got {self.game!r}")
        if self.val_fraction + self.test_fraction >= 1:
            raise ValueError(f"--val-fraction + --test-fraction must be < 1 (the rest trains), got "
                             f"{self.val_fraction} + {self.test_fraction}")
        track.check_backends(self.track)


def _short(game: str, name: str) -> str:
    """``name`` without its ``<game>/``."""
    return name[len(game) + 1:] if name.lower().startswith(f"{game}/") else name


def default_dataset(game: str, teacher: str, num_pairs: int) -> Path:
    """``[GAME/]TEACHER_<N>k.npz``: the dataset file's name under data/ (the game's folder only for a game
    other than the default one; the teacher's name without the game, other characters than letters, digits,
    ``-``, ``_`` and ``.`` as ``_``)."""
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in _short(game, teacher))
    size = f"{num_pairs // 1000}k" if num_pairs % 1000 == 0 else str(num_pairs)
    return Path(*([] if game == games.DEFAULT else [game]), f"{name}_{size}.npz")


def defaults(game: str, preset: str | None = None) -> Config:
    """The default settings for ``game``: :class:`Config`'s, with runs in ``runs/<game>/supervised``
    (``runs/supervised`` for the default game), then the flags that its kit sets for the stage
    (``GameKit.defaults``, section ``supervised``)."""
    cfg = dataclasses.replace(Config(out=training.out_dir(game, "supervised"), game=game),
                              **games.kit_of(game).defaults_of("supervised").get("supervised", {}))
    return training.with_preset(cfg, preset)


# Flags that a --resume may give other values than the run was started with; every other setting must match.
RESUME_MAY_CHANGE = frozenset({"out", "resume", "overwrite", "progress", "epochs", "eval_matches", "eval_teacher",
                               "track", "preset"})


def load_or_make_dataset(cfg: Config) -> tuple[data.Dataset, dict]:
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
    try:
        config.validate(cfg)
    except ValueError as e:
        raise loop.ConfigError(str(e)) from None
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
    import contextlib

    from c4jax.io import compile_cache

    first = True  # the first chunk compiles the training program: say so when it does

    def say(line: str) -> None:
        loop._say(f"supervised: {line}", bar)  # above the progress bar

    for epoch in range(done_epochs + 1, cfg.epochs + 1):
        t0 = time.perf_counter()
        batches = sv.epoch_batches(rng, len(train), cfg.batch_size)
        losses, accs = [], []
        for i in range(0, len(batches), cfg.chunk_steps):
            idx = batches[i : i + cfg.chunk_steps]
            with compile_cache.announce("the training program", say=say) if first else contextlib.nullcontext():
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
        sv.save_progress(out / LAST, state, best_params, {
            "epoch": epoch, "best": best, "rng": rng.bit_generator.state, "rows": len(ds),
            "train_s": time.perf_counter() - t_train, "config": dataclasses.asdict(cfg)})
        interrupt.set_note(interrupt.resume_note(out / LAST, f"epoch {epoch}"))
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
        agent = AlphaZeroAgent(params=best_params, label="supervised", tower=tower, num_simulations=0, game=game)
    else:
        agent = NetworkAgent(params=best_params, label="supervised", width=cfg.width, heads="one",
                             output="policy", sampled=False, symmetric=cfg.symmetric)
    if cfg.eval_matches:
        t0 = time.perf_counter()
        teacher = (_short(cfg.game, cfg.teacher_name),) if cfg.eval_teacher else ()
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
        "name": "supervised",
        "algorithm": "supervised",
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
    log.close()
    log.write_csv()
    runlog.plot_panels(
        log.rows,
        [("cross-entropy loss", ["train/loss", "val/loss"], "loss"),
         ("accuracy", ["train/accuracy", "val/accuracy"], "accuracy")],
        out / "curves.png", xlabel="epoch",
        suptitle=f"{f'tower {tower[0]}x{tower[1]}' if tower else f'CNET{cfg.width}'} imitating {cfg.teacher_name}",
    )
    summary = {"metrics": metrics, "timings": timings, "data": data_info,
               "command": runlog.command_line()}
    runlog.write_json(out / "summary.json", summary)
    checkpoint.remove(out / LAST)  # finished: nothing left to resume
    print(f"saved checkpoint, metrics and curves.png to {out}")
    return summary



def _thesis_setting(cfg: Config) -> bool:
    """Whether the run imitates the thesis' teacher on the default game (its accuracies are the thesis')."""
    return cfg.game == games.DEFAULT and not cfg.teacher


def cli(argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Parse ``argv`` (default: this process' arguments; the defaults are those of its ``--game``) and
    train; ``prog`` names the command in ``--help`` (``c4jax train supervised``; default: the script's
    file name)."""
    return training.command(defaults, main, argv, prog)
