"""AlphaZero's settings (:class:`AlphaZeroConfig`); the trainer is :mod:`c4jax.learning.alphazero`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, ClassVar

import tyro

from c4jax.games import kit_of
from c4jax.learning import config, ranges

if TYPE_CHECKING:
    import optax

METHODS = ("gumbel", "puct")  # the searches of c4jax.agents.network_search (its METHODS)


@dataclass(frozen=True)
class AlphaZeroConfig:
    """AlphaZero hyperparameters."""

    games: int = 128
    """Self-play games played in parallel per iteration."""
    num_simulations: int = 32
    """Search simulations per self-play move."""
    method: str = "gumbel"
    """Search policy: 'gumbel' (Gumbel MuZero) or 'puct' (PUCT with Dirichlet noise at the root)."""
    max_considered: int = 7
    """Gumbel: columns considered at the root (sequential halving over them; 7 = all)."""
    dirichlet_alpha: float = 0.3
    """PUCT: Dirichlet noise concentration at the root."""
    dirichlet_fraction: float = 0.25
    """PUCT: weight of the Dirichlet noise in the root prior."""
    temperature_moves: int = 8
    """Plies at the start of each self-play game whose move is sampled from the search policy (then: Gumbel's
    choice, or PUCT's most visited column), so that games from the empty board do not repeat each other
    once the policy is sharp (design.md §8)."""
    random_start_frac: float = 0.25
    """Share of the games that start from a random position of the game's kit instead of the empty board (more
    varied positions)."""
    buffer_size: int = 100_000
    """Replay buffer capacity in positions (mirrors included)."""
    batch_size: int = 256
    """Positions per Adam step."""
    updates_per_iteration: int = 128
    """Adam steps after each self-play iteration (each draws ``batch_size`` positions; an iteration's
    self-play costs several times more than its updates)."""
    eval_every: int = 0
    """Adam steps between evaluations (and checkpoints); 0 = 8 iterations' (another game's kit may set its own).
    One that is not a multiple of --updates-per-iteration ends each interval with a shortened iteration (its
    self-play, then the updates that remain). A multiple is saved as the number of iterations (iterations_per_eval)."""
    iterations_per_eval: Annotated[int, tyro.conf.Suppress] = 8
    """Self-play iterations between evaluations, which --eval-every sets."""
    learning_rate: float = 1e-3
    """Adam learning rate."""
    weight_decay: float = 1e-4
    """L2 penalty added to the gradient."""
    value_weight: float = 1.0
    """Weight of the value loss."""
    reply_weight: float = 0.0
    """Opponent reply prediction (KataGo, Wu 2019): the network trains a third head on the move the
    opponent makes in reply (the search policy of the game's next ply, where the other player moves),
    with this weight × its cross-entropy averaged over the rows that have such a target; an auxiliary
    target that shapes the shared features. The evaluations and best/ play the network without that
    head. 0 = off."""
    eval_simulations: int = 32
    """Simulations per move of the evaluation matches (and of --eval-yardstick)."""
    play_simulations: int = 256
    """Simulations per move of the saved agent, how ``agents.load`` plays it (``name@N`` overrides;
    docs/results/alphazero compares 128 and 256)."""
    play_solve: bool = True
    """The saved agent searches with proven values (MCTS-Solver: the project's PUCT search, which backs
    up the wins and losses it proves inside the tree; docs/results/alphazero compares it with Gumbel
    MuZero); ``name@<N>nosolve`` / ``name@<N>solve`` override it.
    Off: the saved agent searches as the evaluations do (--method)."""
    width: int = 128
    """CNET width (filters and dense units) of the two-headed network."""
    tower_blocks: int = 0
    """Residual blocks of a residual-tower network (:mod:`c4jax.nets.tower`) instead of the CNET (0 = the
    CNET; the CNET reads only the default game's boards: other games need a tower). The speed of each network on a CPU is
    in docs/results/alphazero."""
    tower_channels: int = 64
    """Filters of every 3x3 convolution of the residual tower (with --tower-blocks)."""
    full_search_frac: float = 1.0
    """Playout cap randomisation (KataGo, Wu 2019): the share of self-play plies searched with
    --num-simulations, whose search policies are policy targets; the other plies search with
    --cheap-simulations and train the value head only. One draw per ply for all games of the batch. 1 = off."""
    cheap_simulations: int = 8
    """Simulations of the cheap searches of playout cap randomisation (with --full-search-frac < 1)."""
    ema_decay: float = 0.0
    """Evaluate and save an exponential moving average of the weights, updated after every Adam step
    with this decay (e.g. 0.999); self-play keeps the trained weights. 0 = off. Needs the old-network
    rule off (--revert-drop 1, the default)."""
    value_q_weight: float = 0.5
    """Value target: (1 - w) x the game's outcome z + w x the search's root value at that ply (0: z alone;
    docs/results/alphazero compares them)."""
    lr_decay_updates: int = 0
    """Cosine-decay the learning rate from --learning-rate to --lr-final-frac times it over this many
    updates, then hold it there (0 = a constant learning rate)."""
    lr_final_frac: float = 0.1
    """The learning rate at the end of --lr-decay-updates, as a share of --learning-rate."""
    solve: bool = False
    """Self-play searches with proven values (MCTS-Solver): the project's own PUCT search
    (:func:`c4jax.agents.search.run`, with the root's Dirichlet noise) backs up the wins and losses it
    proves inside the tree as exact values, so it stops spending simulations on decided lines, and a
    proven root's value (the search part of the value target) is exact. Needs --method puct; the
    evaluations and the saved agent search as before."""
    merge_repeats: bool = False
    """Store each distinct position of an iteration's self-play once, with the mean value and policy
    targets of its copies (:mod:`c4jax.learning.dedup`), instead of one row per copy (the games' shared
    first plies and, on a game with symmetries, the mirror images repeat positions)."""

    RANGES: ClassVar[dict] = {
        "games": ranges.ONE_OR_MORE, "num_simulations": ranges.ONE_OR_MORE, "max_considered": ranges.ONE_OR_MORE,
        "dirichlet_alpha": ranges.POSITIVE, "dirichlet_fraction": ranges.UNIT, "temperature_moves": ranges.NON_NEGATIVE,
        "random_start_frac": ranges.UNIT, "buffer_size": ranges.ONE_OR_MORE, "batch_size": ranges.ONE_OR_MORE,
        "updates_per_iteration": ranges.ONE_OR_MORE, "eval_every": ranges.Range(0, note="(0 = 8 iterations)"),
        "iterations_per_eval": ranges.ONE_OR_MORE, "learning_rate": ranges.POSITIVE,
        "weight_decay": ranges.NON_NEGATIVE, "value_weight": ranges.NON_NEGATIVE, "reply_weight": ranges.NON_NEGATIVE,
        "eval_simulations": ranges.NON_NEGATIVE, "play_simulations": ranges.NON_NEGATIVE, "width": ranges.ONE_OR_MORE,
        "tower_blocks": ranges.NON_NEGATIVE, "tower_channels": ranges.ONE_OR_MORE, "full_search_frac": ranges.UNIT,
        "cheap_simulations": ranges.ONE_OR_MORE, "ema_decay": ranges.Range(0, 1, high_open=True),
        "value_q_weight": ranges.UNIT, "lr_decay_updates": ranges.NON_NEGATIVE, "lr_final_frac": ranges.UNIT,
    }

    smoke: ClassVar[dict] = {
        "games": 4, "num_simulations": 4, "updates_per_iteration": 2, "iterations_per_eval": 1, "buffer_size": 4096,
        "batch_size": 8, "eval_simulations": 0, "play_simulations": 6, "width": 8, "tower_channels": 4,
        "total_updates": 2,
    }

    def check(self) -> None:
        """``ValueError`` for settings that do not fit together (:func:`c4jax.learning.config.validate`)."""
        if self.method not in METHODS:
            raise ValueError(f"--method must be one of {METHODS}, got {self.method!r}")
        if self.solve and self.method != "puct":
            raise ValueError(f"--solve searches self-play with PUCT and proven values: it needs --method puct, "
                             f"got --method {self.method}")

    def normalised(self) -> "AlphaZeroConfig":
        """This config with ``eval_every`` given as ``iterations_per_eval`` (:func:`c4jax.learning.config.settle`)."""
        return config.eval_in_units(self, "iterations_per_eval", self.updates_per_iteration)

    def check_game(self, game) -> None:
        """The settings that depend on the game: ``ValueError`` when they do not fit ``game``."""
        if self.max_considered > game.num_actions:
            raise ValueError(f"--max-considered must be in 1..{game.num_actions}, got {self.max_considered}")
        kit = kit_of(game)
        if kit.random_start is None and self.random_start_frac > 0:
            raise ValueError(f"--random-start-frac draws random start positions; {game.id} has none: use 0")
        if not kit.cnet and not self.tower:
            raise ValueError(f"the CNET does not read {game.id}'s observations: it needs --tower-blocks >= 1")
        copies = 1 + len(kit.symmetries)  # each position and its symmetric images
        rows = copies * self.games * game.max_steps
        if rows > self.buffer_size:
            raise ValueError(f"--buffer-size ({self.buffer_size}) must hold one iteration's positions "
                             f"({f'{copies} x ' if copies > 1 else ''}games x {game.max_steps} = {rows})")

    @property
    def tower(self) -> tuple[int, ...]:
        """``(blocks, channels)`` of the residual tower, ``()`` for the CNET."""
        return (self.tower_blocks, self.tower_channels) if self.tower_blocks else ()

    @property
    def learning_rate_schedule(self) -> float | optax.Schedule:
        """The learning rate, or with --lr-decay-updates its cosine schedule over the Adam steps."""
        import optax

        if not self.lr_decay_updates:
            return self.learning_rate
        return optax.cosine_decay_schedule(self.learning_rate, self.lr_decay_updates, alpha=self.lr_final_frac)

    @property
    def reply_head(self) -> bool:
        """Whether the network trains a reply head (``reply_weight`` > 0)."""
        return self.reply_weight > 0

    @property
    def playout_cap(self) -> bool:
        """Whether playout cap randomisation is on (some plies search cheaply and train no policy)."""
        return self.full_search_frac < 1.0

    @property
    def eval_updates(self) -> int:
        """Adam steps between evaluations."""
        return self.eval_every or self.updates_per_iteration * self.iterations_per_eval


def fitted(card) -> dict:
    """The settings of :class:`AlphaZeroConfig` that a game's card (:class:`c4jax.games.card.GameCard`) changes:
    at most its number of actions considered, no random starts where it has none, a residual tower where the
    CNET does not read its observations."""
    return {"max_considered": min(AlphaZeroConfig.max_considered, card.num_actions),
            "random_start_frac": AlphaZeroConfig.random_start_frac if card.random_start else 0.0,
            **({} if card.cnet else {"tower_blocks": 2, "tower_channels": 32})}
