"""Generate the design.md §6 supervised dataset: a teacher's distinct (position, action) pairs plus their images.

The teacher (the game kit's: on the default game 1StepLA, deterministic, centre tie-break) plays both
sides of batches of games from the kit's random start positions (design.md §3), or from the start
position after --opening-plies random moves; every position not collected yet (nor an image of it
under the kit's symmetries) is kept with the teacher's action, followed by its images (on the default
game its left-right mirror, action 6 - a). Writes a compressed ``.npz``
(``c4jax.learning.dataset.Dataset.load_npz`` reads it) and optionally the game's text format (the
reference thesis' on the default game).

Usage: ``python experiments/make_dataset.py [--game GAME] [--teacher NAME] [--num-pairs 200000]
[--seed 0] [--batch 4096] [--out data/1steplA_200k.npz] [--text-out data/1steplA_200k.txt] [--resume | --overwrite]``

Every ``--save-every`` batches the rows collected so far and the PRNG key are saved to
``OUT.progress`` (deleted once the dataset is written); ``--resume`` continues from it and
writes exactly the dataset of an uninterrupted run.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

import tyro

from c4jax import games
from c4jax.cli.supervised import default_dataset
from c4jax.io import compile_cache, outdir
from c4jax.learning import dataset as data


@dataclasses.dataclass(frozen=True)
class Config:
    game: str = games.DEFAULT
    """The game (one of c4jax.games.GAMES)."""
    teacher: str = ""
    """The agent whose moves are collected (an agents.load name; '': the game kit's teacher)."""
    num_pairs: int = 200_000
    """Rows to collect, images included (the last batch is truncated to hit it exactly)."""
    seed: int = 0
    """PRNG seed: the same seed gives the same dataset."""
    batch: int = 4096
    """Games played per jitted self-play call (compiled once for this shape)."""
    opening_plies: int = 4
    """Random moves that start each game, on a game whose kit has no random start positions."""
    out: str = ""
    """Where to write the dataset (.npz; parent directories are created; '': data/[GAME/]TEACHER_<N>k.npz)."""
    text_out: str = ""
    """Also export the game's text format here (the reference thesis' on the default game; '' = no text export)."""

    @property
    def teacher_name(self) -> str:
        """The teacher's ``agents.load`` name."""
        return data.teacher_name(games.make(self.game), self.teacher)

    @property
    def path(self) -> Path:
        return Path(self.out) if self.out else Path("data") / default_dataset(self.game, self.teacher_name, self.num_pairs)
    progress: bool = True
    """Show a progress bar of rows collected."""
    save_every: int = 1
    """Save the progress every this many batches to OUT.progress, for --resume (0: never)."""
    resume: bool = False
    """Continue from OUT.progress (a finished dataset has nothing to resume and is left as it is)."""
    overwrite: bool = False
    """Replace the dataset (or the progress of one) at --out; without it, a new generation refuses an --out that
    holds one."""


def progress_path(out: Path) -> Path:
    """Where the progress of the generation of ``out`` is saved."""
    return out.with_name(out.name + ".progress")


def _fail(message: str):
    print("error: " + " ".join(message.split()), file=sys.stderr)
    raise SystemExit(2)


def _resume_from(cfg: Config) -> data.Progress | None:
    """The progress to continue from; None when ``cfg.path`` is already finished (exit 2 if neither)."""
    partial = progress_path(cfg.path)
    try:
        if partial.is_file():
            return data.Progress.load(partial)
        if cfg.path.is_file():
            info = data.Dataset.load_npz(cfg.path).info
            want = {"num_pairs": cfg.num_pairs, "seed": cfg.seed, "batch": cfg.batch}
            if {k: info.get(k) for k in want} != want:
                _fail(f"--resume: {cfg.path} was made with other settings ({info}), not {want}")
            return None
    except ValueError as e:
        _fail(f"--resume: {e}")
    _fail(f"--resume: no progress to resume: neither {partial} nor {cfg.path} exists")


def main(cfg: Config) -> None:
    if cfg.save_every < 0:
        _fail(f"--save-every must be >= 0, got {cfg.save_every}")
    if cfg.game not in games.GAMES:
        _fail(f"--game must be one of {', '.join(games.GAMES)}, got {cfg.game!r}")
    text_format = games.kit_of(cfg.game).text_format
    if cfg.text_out and text_format is None:
        _fail(f"--text-out: {cfg.game} has no dataset text format")
    partial = progress_path(cfg.path)
    try:
        outdir.claim(cfg.path, outdir.DATASET, resume=cfg.resume, overwrite=cfg.overwrite)
    except outdir.OutputError as e:
        _fail(str(e))
    resume = _resume_from(cfg) if cfg.resume else None
    if cfg.resume and resume is None:
        print(f"nothing to resume: {cfg.path} is finished")
        return
    if not cfg.resume:
        partial.unlink(missing_ok=True)  # an older run's progress must not pass for this one's
    cfg.path.parent.mkdir(parents=True, exist_ok=True)

    def save(p: data.Progress) -> None:
        if p.counts["batches"] % cfg.save_every == 0:
            p.save(partial)

    if resume is not None:
        print(f"resuming from {partial} at {len(resume.observations):,} rows")
    try:
        dataset, stats = data.generate_with_stats(cfg.num_pairs, seed=cfg.seed, batch=cfg.batch,
                                                  progress=cfg.progress, resume=resume,
                                                  on_batch=save if cfg.save_every else None,
                                                  game=games.make(cfg.game), teacher=cfg.teacher_name,
                                                  opening_plies=cfg.opening_plies)
    except ValueError as e:  # bad settings, an unknown teacher, progress made with other settings
        _fail(str(e))
    t0 = time.perf_counter()
    path = dataset.save_npz(cfg.path)
    save_s = time.perf_counter() - t0
    rest = stats.total_s - stats.first_batch_s
    print(f"generation wall time: {stats.total_s:.2f} s total "
          f"(first batch incl. compile {stats.first_batch_s:.2f} s; "
          f"{stats.batches - 1} further batches {rest:.2f} s: waiting for games {stats.device_wait_s:.2f} s, "
          f"dedupe/images on host {stats.host_s:.2f} s)")
    print(f"games: {stats.games:,} in {stats.batches} batches of {cfg.batch}; "
          f"{cfg.teacher_name} moves seen: {stats.positions:,}")
    print(f"rows: {len(dataset):,} ({stats.originals:,} played by {cfg.teacher_name}, {stats.images:,} from symmetries)")
    print(f"saved: {path} ({path.stat().st_size / 1e6:.2f} MB, {save_s:.2f} s)")
    if cfg.text_out:
        t0 = time.perf_counter()
        text_path = data.export_text(dataset, cfg.text_out)
        print(f"text export: {text_path} ({text_path.stat().st_size / 1e6:.2f} MB, "
              f"{time.perf_counter() - t0:.2f} s)")
    partial.unlink(missing_ok=True)  # finished: nothing left to resume


if __name__ == "__main__":
    compile_cache.configure_script()
    main(tyro.cli(Config, description=__doc__.split("\n")[0]))
