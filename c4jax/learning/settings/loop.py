"""The host loop's settings (:class:`LoopConfig`, every RL command's ``run`` section) and :func:`from_scratch`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Annotated, ClassVar, Literal

import tyro

from c4jax import games
from c4jax.io import cliargs, track
from c4jax.learning import ranges, selection

OutPath = Annotated[str, tyro.conf.arg(metavar="PATH")]  # a run directory flag, shown as --out PATH in --help
SHARD_MODES = ("auto", "batch", "seeds")  # how several devices split a run (c4jax.learning.placement)


@dataclass(frozen=True)
class LoopConfig:
    """Settings shared by every RL experiment."""

    out: OutPath = "runs/rl"
    """Run directory: metrics, plots, best/ (agent) and last/ (resumable state) checkpoints."""
    game: str = field(kw_only=True)
    """The game to train on (an id of c4jax.games.GAMES; an unknown one is answered with the list). Evaluation opponents are that game's agents (a game
    whose kit has no lookahead and no yardstick evaluates against random and mcts<N>)."""
    seed: int = 0
    """Seed of initialisation, self-play and evaluation."""
    init_from: str = "supervised"
    """Checkpoint whose conv/dense/head weights start the network: a shipped agent's name (as agents.load takes
    it) or a checkpoint path ('' = from scratch)."""
    freeze_conv: bool = True
    """Keep the convolutional block fixed (the thesis' transfer learning)."""
    total_updates: int = 100_000
    """Gradient updates to perform."""
    revert_drop: float = 0.08
    """Revert to the old network when the win rate vs --select-by falls this far below the best."""
    old_best_start: float = -1.0
    """The old-network rule's best win rate before the first evaluation: a win rate must beat it to make the
    weights the old network (-1: the first evaluation always does; the published code:
    0.5). best/ still keeps the best evaluation so far."""
    revert_at_equal: bool = False
    """Revert also when the win rate is exactly --revert-drop below the rule's best (<=, the published code)
    instead of only below it."""
    eval_greedy: bool = False
    """Policy networks (REINFORCE, PPO): play the evaluation matches greedily instead of sampling, so that
    the old-network rule and best/ follow deterministic, exactly repeatable win rates (not the thesis'
    setting; DQN is always greedy)."""
    eval_symmetric: bool = True
    """Play the evaluation matches with symmetric averaging (Q or π averaged with the mirrored board's), as the
    shipped agents and the tournament play, so that best/ is chosen by how the agent will play;
    --no-eval-symmetric plays them without the mirror."""
    eval_opponents: Annotated[tuple[str, ...], cliargs.NONE_IF_EMPTY] = ()
    """More agents (``agents.load`` names, e.g. 2steplA mcts200) that the current network plays one protocol
    match against at every evaluation, logged as eval/vs_<name>."""
    eval_yardstick: bool = False
    """Also grade the current network on the perfect-play yardstick (design.md §8) at every evaluation:
    yardstick/keep (share of non-trivial positions where its move keeps the game-theoretic outcome),
    yardstick/exact, and both per phase."""
    select_by: str = ""
    """What chooses best/ and drives the old-network rule: the win rate against the game's reference player
    (1steplA on Connect Four, the thesis) or against one of --eval-opponents (a stronger one once the reference
    is beaten every game), or 'yardstick' (the yardstick's keep rate; needs --eval-yardstick). '': the reference."""
    resume: bool = False
    """Continue the run in --out from its last checkpoint. Settings that shape the run must be the ones it was
    started with; --total-updates (to train longer), --progress, --track and the device flags may change."""
    overwrite: bool = False
    """Replace the run that --out holds (without it, a new run refuses an --out that holds one)."""
    track: Annotated[tuple[Literal["tensorboard", "wandb"], ...], cliargs.NONE_IF_EMPTY] = ()
    """Also send every metric row to these trackers: tensorboard (event files in OUT/tb, or OUT/seed_S/tb per seed)
    and/or wandb (one W&B run per seed, grouped by --out; the track extra)."""
    vmap_seeds: int = 1
    """Train this many seeds (--seed, --seed + 1, ...) at once, vmapped in one jitted program; each seed's
    run goes to OUT/seed_S, their mean ± spread to OUT/summary.json and OUT/seeds.md."""
    progress: bool = True
    """Show a progress bar."""
    devices: int = 0
    """Devices to train on: the first N of jax.devices() (of every process; 0 = all). With N > 1 the run is
    split over them as --shard says (one jitted program, XLA's SPMD partitioning); 1 = one device."""
    shard: str = "auto"
    """How N > 1 devices split the run: 'seeds' (each device trains --vmap-seeds / N whole seeds), 'batch'
    (self-play games, buffers and minibatches split, parameters replicated, gradients averaged over the devices;
    the batch sizes must be multiples of N) or 'auto' (seeds when N divides --vmap-seeds, else batch)."""
    coordinator_address: str = ""
    """Several hosts: HOST:PORT of process 0, which every process of the run joins (jax.distributed)."""
    num_processes: int = 1
    """Several hosts: the number of processes of the run (one per host), each started with the same flags and its
    own --process-id; 1 = a single process."""
    process_id: int = 0
    """Several hosts: this process' index, 0 .. --num-processes - 1. Process 0 writes every file."""

    RANGES: ClassVar[dict] = {
        "seed": ranges.NON_NEGATIVE, "total_updates": ranges.ONE_OR_MORE, "revert_drop": ranges.NON_NEGATIVE,
        "old_best_start": ranges.Range(-1, 1), "vmap_seeds": ranges.ONE_OR_MORE,
        "devices": ranges.Range(0, note="(0 = all)"), "num_processes": ranges.ONE_OR_MORE,
        "process_id": ranges.NON_NEGATIVE,
    }

    smoke: ClassVar[dict] = {"eval_opponents": (), "eval_yardstick": False, "init_from": "", "freeze_conv": False}

    def check(self) -> None:
        """``ValueError`` for settings that do not fit together (the opponents are loaded when the run starts)."""
        if self.shard not in SHARD_MODES:
            raise ValueError(f"--shard must be one of {SHARD_MODES}, got {self.shard!r}")
        if not 0 <= self.process_id < self.num_processes:
            raise ValueError(f"--process-id must be in 0..{self.num_processes - 1}, got {self.process_id}")
        if self.num_processes > 1 and not self.coordinator_address:
            raise ValueError("--num-processes > 1 needs --coordinator-address HOST:PORT")
        track.check_backends(self.track)
        if self.game not in games.GAMES:
            raise ValueError(f"--game must be one of {sorted(games.GAMES)}, got {self.game!r}")
        kit = games.card_of(self.game)
        if not kit.yardstick and self.eval_yardstick:
            raise ValueError(f"--eval-yardstick grades moves against solved positions; {self.game} has no yardstick "
                             "(--no-eval-yardstick)")
        if self.select_by == "yardstick" and not self.eval_yardstick:
            raise ValueError("--select-by yardstick needs --eval-yardstick")
        fixed = tuple(sorted(kit.reference_agents)) + (("yardstick",) if kit.yardstick else ())
        if self.select_by and self.select_by not in fixed and self.select_by not in self.eval_opponents:
            raise ValueError(f"--select-by must be {', '.join(fixed)} or one of --eval-opponents "
                             f"{list(self.eval_opponents)}, got {self.select_by!r}")

    def normalised(self) -> "LoopConfig":
        """This config with an empty ``select_by`` set to the game's reference player (``random`` where it has none)."""
        return self if self.select_by else replace(self, select_by=reference_player(self.game))

    def agent_name(self, name: str) -> str:
        """The ``agents.load`` name of the opponent ``name`` in this run's game (``agents.in_game``)."""
        from c4jax import agents

        return agents.in_game(name, self.game)

    @property
    def fixed_opponents(self) -> tuple[str, ...]:
        """The game kit's reference agents, which every evaluation plays besides the old network."""
        return games.kit_of(self.game).reference_agents

    @property
    def reference(self) -> str:
        """The opponent the progress bar and a --vmap-seeds summary report: the kit's reference, else --select-by."""
        reference = games.kit_of(self.game).reference
        return self.select_by if reference is None else reference

    @property
    def selection_rule(self) -> selection.Rule:
        """The old-network rule's settings."""
        return selection.Rule(revert_drop=self.revert_drop, old_best_start=self.old_best_start,
                              revert_at_equal=self.revert_at_equal)


def reference_player(game: str) -> str:
    """The ``agents.load`` name of ``game``'s reference player: its card's, else ``random``."""
    return games.card_of(game).reference or "random"


def whole_games(out: str, game: str) -> LoopConfig:
    """The run settings of the thesis' whole-games training on ``game``: the defaults, selected by the game's
    reference player (``random`` where its card names none)."""
    return LoopConfig(out=out, game=game).normalised()


def from_scratch(out: str, game: str, **changes) -> LoopConfig:
    """The run settings of a network trained from scratch (design.md §8): no ``--init-from``, selected by
    ``mcts100:sto``, no old-network rule; ``changes``: other fields."""
    return LoopConfig(**{**dict(out=out, game=game, init_from="", freeze_conv=False, eval_opponents=("mcts100:sto",),
                                select_by="mcts100:sto", revert_drop=1.0), **changes})

