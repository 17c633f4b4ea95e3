"""DQN's settings (:class:`DQNConfig`), also of its ``--collect streams`` runs."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Annotated, ClassVar

import tyro

from c4jax.learning import config, ranges
from c4jax.learning.settings.selfplay import SelfPlayConfig

# Double DQN on a game's own rewards: the settings of --collect streams on a game that has no whole-game
# self-play (its kit sets the sizes: GameKit.defaults["dqn"])
STREAMS = MappingProxyType(dict(collect="streams", double=True, loss="huber", gamma=1.0, tau=0.005,
                                eps_schedule="linear", eps_per_update=True, eps_start=1.0, eps_end=0.05,
                                weight_decay=0.0, max_grad_norm=1.0, eval_every=0))


@dataclass(frozen=True)
class DQNConfig(SelfPlayConfig):
    """DQN hyperparameters: the thesis' by default, a trainer command's from its --preset and --game, which
    explicit flags override. With --opponent, the opponent's moves are stored and learned from too (Q-learning
    is off-policy)."""

    dueling: bool = False
    """Dueling head: Q = V + A - mean(A) (two heads)."""
    double: bool = False
    """Double DQN: the online network picks a', the target network values it."""
    collect: str = "games"
    """How experience is collected: 'games' (the thesis: whole games from random starts with the shaped
    reward, back-propagated, and their mirrors; games with CNET boards) or 'streams' (games of any game side by
    side, --steps plies of each per iteration, on the game's own rewards)."""
    loss: str = "mse"
    """'mse' (thesis) or 'huber' (the Double DQN article)."""
    huber_delta: float = 1.0
    """Huber loss threshold (--loss huber)."""
    learning_rate: float = 1e-4
    """Adam learning rate."""
    weight_decay: float = 5e-4
    """L2 penalty added to the gradient."""
    batch_size: int = 48
    """Transitions per update."""
    buffer_size: int = 60_000
    """Replay capacity (transitions, mirrors included)."""
    learning_starts: int = 30_000
    """Transitions in the buffer before the first update."""
    updates_per_episode: int = 20
    """Updates per new self-play game."""
    episodes_per_iteration: int = 10
    """Self-play games played in parallel per iteration (each followed by its updates; --collect games)."""
    envs: int = 64
    """Games played side by side, each starting again as soon as it ends (--collect streams)."""
    steps: int = 4
    """Plies of every game per iteration: --envs x --steps transitions into the buffer (--collect streams)."""
    updates_per_iteration: int = 4
    """Updates per iteration once the buffer holds --learning-starts transitions (--collect streams)."""
    target_update_every: int = 400
    """Hard target copy period in updates (used when tau == 1)."""
    tau: float = 1.0
    """Soft target update rate per update; 1.0 = hard copies every target_update_every."""
    eps_start: float = 0.8
    """ε at episode 0 (0.05 + 0.75)."""
    eps_end: float = 0.05
    """ε floor."""
    eps_decay: float = 500.0
    """ε decay constant in episodes (or updates, with --eps-per-update); with --eps-schedule linear, the
    episodes (updates) over which ε falls to --eps-end."""
    eps_schedule: str = "exp"
    """'exp' (the thesis: eps_end + (eps_start - eps_end) exp(-n / eps_decay)) or 'linear' (from
    eps_start to eps_end over eps_decay)."""
    eval_every: int = 0
    """Updates between evaluations (and checkpoints); 0 = the default: 1000 (--collect games), the game's number
    of iterations (--collect streams; those before --learning-starts make no updates). One that is not a multiple
    of an iteration's updates ends each interval with an iteration that makes the updates that remain.
    --collect streams: a multiple is saved as the number of iterations (iterations_per_eval)."""
    iterations_per_eval: Annotated[int, tyro.conf.Suppress] = 250
    """Iterations between evaluations with --collect streams, which --eval-every sets."""
    max_grad_norm: float = 0.0
    """Gradients are clipped to this global norm (0: not clipped)."""
    value_weight: float = 0.5
    """Weight of the residual tower's value-head loss (squared error to max_a Q_target(s, a))."""
    tower_blocks: int = 2
    """Residual blocks of the tower, the network of a game the CNET does not read (:mod:`c4jax.nets.tower`)."""
    tower_channels: int = 32
    """Filters of every 3x3 convolution of the tower."""
    target_online: bool = False
    """Compute the TD target with the online network (the target copy is still refreshed but never read),
    as the published code does."""
    target_mirror_avg: bool = False
    """Average Q(s') with the mirrored board's Q (mirrored back) before the max of the TD target (the
    published code)."""
    target_unmasked: bool = False
    """Take the TD target's max over all 7 columns of s', full ones included (the published code)."""
    eps_per_update: bool = False
    """Decay ε with the updates done so far instead of the episodes (the published code):
    the warm-up before --learning-starts is played at ε = --eps-start."""
    selfplay_mirror_avg: bool = False
    """Self-play acts on the mirror-averaged Q-values (then masks full columns), as the published code
    does."""
    reset_target_on_old: bool = False
    """Reset the target network to the weights the old-network rule leaves in place, on a new best and on a
    revert (the published code)."""

    RANGES: ClassVar[dict] = {
        "learning_rate": ranges.POSITIVE, "weight_decay": ranges.NON_NEGATIVE, "batch_size": ranges.ONE_OR_MORE,
        "buffer_size": ranges.ONE_OR_MORE, "learning_starts": ranges.NON_NEGATIVE,
        "updates_per_episode": ranges.ONE_OR_MORE, "episodes_per_iteration": ranges.ONE_OR_MORE,
        "target_update_every": ranges.ONE_OR_MORE, "tau": ranges.Range(0, 1, low_open=True),
        "eps_start": ranges.UNIT, "eps_end": ranges.UNIT, "eps_decay": ranges.POSITIVE,
        "eval_every": ranges.Range(0, note="(0 = the default)"),
        "huber_delta": ranges.POSITIVE, "envs": ranges.ONE_OR_MORE, "steps": ranges.ONE_OR_MORE,
        "updates_per_iteration": ranges.ONE_OR_MORE, "iterations_per_eval": ranges.ONE_OR_MORE,
        "max_grad_norm": ranges.NON_NEGATIVE, "value_weight": ranges.NON_NEGATIVE,
        "tower_blocks": ranges.ONE_OR_MORE, "tower_channels": ranges.ONE_OR_MORE,
    }

    SMOKE: ClassVar[dict] = {"width": 16, "buffer_size": 2000, "learning_starts": 200, "updates_per_episode": 2,
                             "episodes_per_iteration": 2, "eval_every": 8, "total_updates": 8}
    STREAM_SMOKE: ClassVar[dict] = {"envs": 4, "steps": 2, "batch_size": 8, "buffer_size": 64, "learning_starts": 8,
                                    "updates_per_iteration": 1, "iterations_per_eval": 4, "tower_blocks": 1,
                                    "tower_channels": 4, "total_updates": 4}
    GAMES_EVAL_EVERY: ClassVar[int] = 1000  # --collect games: the updates between evaluations of --eval-every 0
    # the switches that only whole games (--collect games) have: the published code's and the opponent's
    GAMES_ONLY: ClassVar[tuple[str, ...]] = ("target_mirror_avg", "target_unmasked", "selfplay_mirror_avg",
                                             "replace_draws", "reset_target_on_old")

    @property
    def smoke(self) -> dict:
        """``--preset smoke``'s sizes of this collection (:func:`c4jax.learning.config.smoke_config`)."""
        return self.STREAM_SMOKE if self.collect == "streams" else self.SMOKE

    def check(self) -> None:
        """``ValueError`` for settings that do not fit together (:func:`c4jax.learning.config.validate`)."""
        super().check()
        if self.loss not in ("mse", "huber"):
            raise ValueError(f"--loss must be 'mse' or 'huber', got {self.loss!r}")
        if self.collect not in ("games", "streams"):
            raise ValueError(f"--collect must be 'games' or 'streams', got {self.collect!r}")
        if self.eps_schedule not in ("exp", "linear"):
            raise ValueError(f"--eps-schedule must be 'exp' or 'linear', got {self.eps_schedule!r}")
        if self.learning_starts > self.buffer_size:
            raise ValueError(f"--learning-starts ({self.learning_starts}) cannot exceed --buffer-size ({self.buffer_size})")
        if self.collect == "streams":
            self._check_stream()

    def _check_stream(self) -> None:
        on = [f for f in self.GAMES_ONLY if getattr(self, f)]
        on += ["reward_backprop"] if self.reward_backprop != "per_player" else []
        on += ["opponent"] if not self.self_play else []
        if on:
            flags = ", ".join("--" + f.replace("_", "-") for f in on)
            raise ValueError(f"{flags}: only with --collect games (the thesis' whole games)")
        if self.envs * self.steps > self.buffer_size:
            raise ValueError(f"--buffer-size ({self.buffer_size}) must hold one iteration's transitions "
                             f"(--envs x --steps = {self.envs * self.steps})")

    def normalised(self) -> "DQNConfig":
        """This config with --collect streams' ``eval_every`` given as ``iterations_per_eval``."""
        if self.collect != "streams":
            return self
        return config.eval_in_units(self, "iterations_per_eval", self.updates_per_iteration)

    @property
    def eval_updates(self) -> int:
        """The updates between evaluations (--eval-every, or its default)."""
        if self.eval_every:
            return self.eval_every
        if self.collect == "streams":
            return self.iterations_per_eval * self.updates_per_iteration
        return self.GAMES_EVAL_EVERY

    @property
    def iteration_updates(self) -> int:
        """The updates of one iteration once the buffer holds --learning-starts transitions."""
        return self.updates_per_episode * self.episodes_per_iteration

