"""PPO for two-player self-play (design.md §7), on every game: one config (:class:`PPOConfig`), two
collections (``--collect``, :class:`~c4jax.learning.onpolicy.OnPolicyConfig`), one GAE
(:func:`c4jax.learning.losses.negamax_gae`) and one loss (:func:`c4jax.learning.losses.ppo_loss`).
:func:`trainer` makes the algorithm of a config and a game.

``--collect games`` (:class:`PPO`, the thesis). Each *buffer*: ``games_per_collect``
(default: enough to fill it) self-play games sampled from the current policy in parallel from
design.md §3 random start boards, each followed by its mirror
(the mirrored action's log-prob recomputed on the mirrored board), trimmed to the
first ``buffer_size`` transitions in game order; then ``epochs`` passes of shuffled
minibatches with the clipped objective, Smooth-L1 value loss and entropy bonus;
then the buffer is discarded. The host loop evaluates after every buffer (every
``buffers_per_eval`` buffers).
Optionally (``--opponent``) a fixed agent plays one side of a fraction of the games.

``--collect streams`` (:class:`StreamPPO`, :mod:`c4jax.learning.onpolicy_streams`): each buffer is one
collection of ``envs x steps`` plies with the game's own rewards, then ``epochs`` passes of shuffled
minibatches (``minibatch_size`` divides the collection) with the squared value error on tanh values
and advantages normalised over each minibatch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import Annotated, ClassVar

import jax
import jax.numpy as jnp
import tyro

from c4jax.agents import arena
from c4jax.learning import losses, onpolicy, onpolicy_streams, ranges
from c4jax.learning.optim import apply_gradients
from c4jax.learning.train_state import TrainState

# the whole-games collection's PPO switches (design.md §7a), with the values that leave them off
GAMES_ONLY = {"td_advantage": False, "explore": 0.0, "selfplay_mirror_avg": False, "unmasked_log_probs": False}


# the settings of --collect streams on a game whose kit gives none (those measured in docs/results/<game>)
STREAMS = MappingProxyType(dict(collect="streams", network="tower", envs=64, steps=64, epochs=4, minibatch_size=512,
                                clip=0.2, c1=0.5, c2=0.01, gamma=1.0, gae_lambda=0.95, learning_rate=3e-4, weight_decay=0.0,
                                max_grad_norm=0.5, buffers_per_eval=50, tower_blocks=2, tower_channels=32))
STREAMS_UPDATES = 40_000  # --total-updates of such a run


@dataclass(frozen=True)
class PPOConfig(onpolicy.OnPolicyConfig):
    """PPO hyperparameters (defaults: the thesis, design.md §7, on the default game; another game's from its kit). With
    --opponent, only the learner's own moves are training rows; the opponent's moves shape their returns."""

    buffer_size: int = 2000
    """--collect games: transitions per buffer (mirrors included); --collect streams: a buffer is one collection."""
    epochs: int = 5
    """Passes over each buffer."""
    minibatch_size: int = 32
    """Transitions per optimiser step."""
    clip: float = 0.2
    """Ratio clip."""
    c1: float = 0.75
    """Value-loss weight (Smooth-L1; --collect streams: the squared error of tanh(value))."""
    c2: float = 0.04
    """Entropy-bonus weight (the entropy over the legal actions)."""
    gae_lambda: float = 1.0
    """GAE(λ) for advantages; 1.0 is the thesis' G - V."""
    learning_rate: float = 1e-4
    """Adam learning rate."""
    weight_decay: float = 5e-5
    """L2 penalty added to the gradient."""
    games_per_collect: int = 0
    """--collect games: self-play games played in parallel to fill one buffer; 0 = ceil(buffer_size / 12.5),
    enough to fill it (a game from a random start gives 15-20 rows with its mirror; the extra rows are dropped). With
    --opponent, games against it give half the rows, and the automatic value grows to match."""
    td_advantage: bool = False
    """One-step TD value targets and advantages on the mirror-averaged value V̄ of the collecting network:
    target = r - γ(1 - done)·V̄(s'), advantage = target - V̄(s); the value head regresses on the target (the
    published code, design.md §7a; replaces the Monte-Carlo G and --gae-lambda)."""
    explore: float = 0.0
    """Probability of a uniformly random legal move in self-play (the published code: 0.10, design.md §7a)."""
    selfplay_mirror_avg: bool = False
    """Self-play samples the mirror-averaged logits (masked to legal columns), as the published code does
    (design.md §7a)."""
    unmasked_log_probs: bool = False
    """Stored and recomputed log-probs and the entropy bonus over all 7 columns, unmasked and not
    mirror-averaged (the published code, design.md §7a)."""
    eval_every: int = 0
    """Updates between evaluations (and checkpoints), a multiple of one buffer's (--epochs x
    ceil(--buffer-size / --minibatch-size); --collect streams: --epochs x --envs x --steps / --minibatch-size);
    0 = the preset's: every buffer (thesis), every 5 buffers (published, design.md §7a); another game's kit
    gives its own. Saved as the number of buffers (buffers_per_eval)."""
    buffers_per_eval: Annotated[int, tyro.conf.Suppress] = 1
    """Buffers (collect + update) between evaluations, which --eval-every sets (the published code: 5)."""

    RANGES: ClassVar[dict] = {
        "buffer_size": ranges.ONE_OR_MORE, "epochs": ranges.ONE_OR_MORE, "minibatch_size": ranges.ONE_OR_MORE,
        "clip": ranges.POSITIVE, "c1": ranges.NON_NEGATIVE, "c2": ranges.NON_NEGATIVE, "gae_lambda": ranges.UNIT,
        "learning_rate": ranges.POSITIVE, "weight_decay": ranges.NON_NEGATIVE,
        "games_per_collect": ranges.at_least(0, "(0 = auto)"), "explore": ranges.UNIT,
        "eval_every": ranges.at_least(0, "(0 = the preset's)"), "buffers_per_eval": ranges.ONE_OR_MORE,
    }

    SMOKE: ClassVar[dict] = {"width": 16, "buffer_size": 256, "games_per_collect": 16, "epochs": 2, "buffers_per_eval": 1,
                             "total_updates": 16}
    STREAMS_SMOKE: ClassVar[dict] = {"envs": 4, "steps": 8, "minibatch_size": 16, "epochs": 1, "buffers_per_eval": 1,
                                     "tower_blocks": 1, "tower_channels": 4, "total_updates": 2}

    def __post_init__(self):
        super().__post_init__()
        if not ranges.checking():
            return
        if self.streams:
            self.refuse_games_only(GAMES_ONLY)
            if (self.envs * self.steps) % self.minibatch_size:
                raise ValueError(f"--minibatch-size ({self.minibatch_size}) must divide a collection's rows "
                                 f"(--envs x --steps = {self.envs * self.steps})")
            unit = "collection (--epochs x --envs x --steps / --minibatch-size)"
        else:
            if self.minibatch_size > self.buffer_size:
                raise ValueError(f"--minibatch-size ({self.minibatch_size}) cannot exceed --buffer-size ({self.buffer_size})")
            unit = "buffer (--epochs x ceil(--buffer-size / --minibatch-size))"
        ranges.eval_every_to_units(self, "buffers_per_eval", self.buffer_updates, unit)

    @property
    def smoke(self) -> dict:
        """``--preset smoke``'s sizes for this config's collection (:func:`c4jax.learning.config.smoke_config`)."""
        return self.STREAMS_SMOKE if self.streams else self.SMOKE

    @property
    def buffer_updates(self) -> int:
        """The optimiser steps of one full buffer: --epochs passes of ceil(--buffer-size / --minibatch-size)
        minibatches (a buffer that self-play leaves short makes fewer); --collect streams: of --envs x --steps
        / --minibatch-size minibatches."""
        if self.streams:
            return self.epochs * self.minibatches
        return self.epochs * -(-self.buffer_size // self.minibatch_size)

    @property
    def minibatches(self) -> int:
        """--collect streams: optimiser steps per epoch."""
        return self.envs * self.steps // self.minibatch_size

    @property
    def games(self) -> int:
        """Self-play games per buffer (``games_per_collect``, or its automatic value when 0)."""
        if self.games_per_collect:
            return self.games_per_collect
        games = math.ceil(self.buffer_size / 12.5)
        if self.opponent_games(games):  # only the learner's half of those games' moves are rows
            games = math.ceil(self.buffer_size / (12.5 * (1.0 - self.opponent_frac / 2)))
        return games


def trainer(cfg: PPOConfig, game, freeze_conv: bool = True):
    """The PPO algorithm of ``cfg``'s collection on ``game``: :class:`PPO` (whole games, on a game whose kit
    says the CNET reads its boards) or :class:`StreamPPO`; ``ValueError`` when the game cannot take it."""
    if cfg.streams:
        return StreamPPO(cfg, game, freeze_conv)
    onpolicy.check_games_collection(game)
    return PPO(cfg, freeze_conv=freeze_conv)


class PPO(onpolicy.OnPolicyAlgorithm):
    """PPO on the whole-games collection (the thesis, design.md §7)."""

    name = "ppo"

    def __init__(self, cfg: PPOConfig, freeze_conv: bool = True):
        self.cfg = cfg
        self.strategies = onpolicy.Strategies.of(
            cfg, explore=cfg.explore, mirror_avg=cfg.selfplay_mirror_avg, td_advantage=cfg.td_advantage,
            unmasked_log_probs=cfg.unmasked_log_probs)
        self.batch_sizes = {"--games-per-collect (games per buffer)": cfg.games, "--buffer-size": cfg.buffer_size,
                            "--minibatch-size": cfg.minibatch_size}
        super().__init__(cfg.learning_rate, cfg.weight_decay, freeze_conv)
        self.update_step, self.update_step_name = cfg.buffer_updates, "buffer"
        self.eval_updates = cfg.buffers_per_eval * cfg.buffer_updates

    def chunk_of(self, units: int):
        return jax.jit(partial(self._chunk, units=units))

    def _chunk(self, state: TrainState, units: int | None = None):
        """``buffers_per_eval`` buffers (``units``: that many; one ``lax.scan``); metrics averaged over them."""
        buffers = self.cfg.buffers_per_eval if units is None else units
        if buffers == 1:
            return self._buffer(state, None)
        state, m = jax.lax.scan(self._buffer, state, None, length=buffers)
        metrics = {k: v.mean() for k, v in m.items()}
        metrics["selfplay/episodes"] = state.episodes.astype(jnp.float32)
        return state, metrics

    def _buffer(self, state: TrainState, _):
        cfg = self.cfg
        key, start_key, play_key, update_key = jax.random.split(state.key, 4)
        starts = arena.random_initial_states(start_key, cfg.games)
        batch, lengths = onpolicy.collect_mixed(
            state.params, play_key, starts, cfg.opponent_agent, cfg.opponent_games(cfg.games), gamma=cfg.gamma,
            gae_lambda=cfg.gae_lambda, width=cfg.width, backprop_n=cfg.reward_backprop_n, strategies=self.strategies)
        games_length = lengths.mean()
        buffer = onpolicy.take_first(batch, cfg.buffer_size)
        params, opt_state, m = onpolicy.ppo_update(
            state.params, state.opt_state, buffer, update_key, tx=self.tx, epochs=cfg.epochs,
            minibatch_size=cfg.minibatch_size, clip=cfg.clip, c1=cfg.c1, c2=cfg.c2, width=cfg.width,
            log_prob_columns=self.strategies.log_prob_columns)
        new = state.replace(params=params, opt_state=opt_state, key=key, updates=state.updates + m["train/updates"],
                             episodes=state.episodes + cfg.games)
        metrics = {k: v for k, v in m.items() if k not in ("train/updates", "train/samples")}
        metrics.update({"selfplay/length": games_length.astype(jnp.float32),
                        "buffer/samples": m["train/samples"].astype(jnp.float32),
                        "selfplay/episodes": new.episodes.astype(jnp.float32)})
        return new, metrics


class StreamPPO(onpolicy_streams.StreamsAlgorithm):
    """PPO on per-ply streams of ``game`` (``--collect streams``)."""

    name = "ppo"

    def __init__(self, cfg: PPOConfig, game, freeze_conv: bool = False):
        super().__init__(cfg, game, freeze_conv)
        self.update_step, self.update_step_name = cfg.buffer_updates, "collection"
        self.eval_updates = cfg.buffers_per_eval * cfg.buffer_updates

    def _loss(self, params, mb: onpolicy_streams.Rows, adv, target):
        cfg = self.cfg
        logits, value = self._apply(params, mb.obs, mb.legal)
        norm = (adv - adv.mean()) / (adv.std() + 1e-8)
        loss_fn = partial(losses.ppo_loss, clip=cfg.clip, c1=cfg.c1, c2=cfg.c2, value_loss="squared")
        total, aux = jax.vmap(loss_fn)(logits, mb.legal, mb.action, mb.logp, norm, value, target)
        loss = total.mean()
        return loss, {"train/loss": loss, "train/policy_loss": aux["policy_loss"].mean(),
                      "train/value_loss": aux["value_loss"].mean(), "train/entropy": aux["entropy"].mean(),
                      "train/approx_kl": jnp.mean(mb.logp - aux["log_prob"]),
                      "train/clip_fraction": aux["clipped"].mean()}

    def _buffer(self, state: onpolicy_streams.StreamState, _):
        """One collection, then --epochs passes of shuffled minibatches over it."""
        cfg = self.cfg
        key, play_key, epoch_key = jax.random.split(state.key, 3)
        rows, last_value, envs, plies, finished, lengths = self._collect(state.params, state.envs, state.plies, play_key)
        adv, target = self._advantages(rows, last_value, cfg.gae_lambda)
        n = cfg.envs * cfg.steps
        flat = jax.tree.map(lambda x: x.reshape((n,) + x.shape[2:]), (rows, adv, target))
        grad = jax.grad(self._loss, has_aux=True)

        def minibatch(carry, index):
            params, opt_state = carry
            mb, a, t = jax.tree.map(lambda x: x[index], flat)
            grads, metrics = grad(params, mb, a, t)
            return apply_gradients(self.tx, params, opt_state, grads), metrics

        def epoch(carry, k):
            order = jax.random.permutation(k, n).reshape(cfg.minibatches, cfg.minibatch_size)
            return jax.lax.scan(minibatch, carry, order)

        (params, opt_state), m = jax.lax.scan(epoch, (state.params, state.opt_state),
                                              jax.random.split(epoch_key, cfg.epochs))
        state = state.replace(params=params, opt_state=opt_state, key=key, envs=envs, plies=plies,
                              updates=state.updates + cfg.buffer_updates, episodes=state.episodes + finished)
        metrics = {k: v.mean() for k, v in m.items()}
        metrics["selfplay/finished"] = finished.astype(jnp.float32)
        metrics["selfplay/length_sum"] = lengths.astype(jnp.float32)
        return state, metrics

    def _chunk(self, state: onpolicy_streams.StreamState, units: int | None = None):
        """``buffers_per_eval`` collections (``units``: that many)."""
        length = self.cfg.buffers_per_eval if units is None else units
        state, m = jax.lax.scan(self._buffer, state, None, length=length)
        return state, self.chunk_metrics(state, m)
