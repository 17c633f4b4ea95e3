"""The supervised stage's settings (:class:`Config`); the trainer is :mod:`c4jax.cli.supervised`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, ClassVar, Literal

from c4jax import games
from c4jax.agents import shipped
from c4jax.io import cliargs, track
from c4jax.learning import config, ranges
from c4jax.learning.settings.loop import OutPath


@dataclass(frozen=True)
class Config:
    """Supervised imitation of a teacher (defaults: the thesis on the default game; another game's from its
    kit: --game NAME --help)."""

    out: OutPath = "runs/supervised"
    """Run directory: checkpoint, metrics, plots and summary go here."""
    game: str = field(kw_only=True)
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
    track: Annotated[tuple[Literal["tensorboard", "wandb"], ...], cliargs.NONE_IF_EMPTY] = ()
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
        """The ``agents.load`` name of ``--teacher`` (else the game card's) within ``--game``."""
        return shipped.in_game(self.teacher or games.card_of(self.game).teacher, self.game)

    @property
    def dataset_path(self) -> Path:
        """``--dataset``, else ``data/`` + :func:`default_dataset`."""
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


def short_name(game: str, name: str) -> str:
    """``name`` without its ``<game>/``."""
    return name[len(game) + 1:] if name.lower().startswith(f"{game}/") else name


def default_dataset(game: str, teacher: str, num_pairs: int) -> Path:
    """``[GAME/]TEACHER_<N>k.npz`` under data/ (GAME/ only off the default game; odd characters as ``_``)."""
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in short_name(game, teacher))
    size = f"{num_pairs // 1000}k" if num_pairs % 1000 == 0 else str(num_pairs)
    return Path(games.subfolder(game), f"{name}_{size}.npz")
