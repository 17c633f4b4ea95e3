"""Vanilla, Dueling and Double DQN for two-player self-play on any game (design.md §7, the Double DQN
article).

One network plays both sides with ε-greedy; its moves go into a replay buffer from which it learns
Q-values from the point of view of the player to move, with the turn-based zero-sum target
``y = r + γ·sign·max_{legal a'} Q_target(s', a')`` (``y = r`` at the end; ``sign = -1`` when the
opponent moves in s', so its value is subtracted). What differs between games are strategies that
the config's fields choose, with per-game defaults from the game's kit (``GameKit.defaults["dqn"]``,
:mod:`c4jax.cli.dqn`):

- how experience is collected (``collect``): ``"games"``, the thesis' whole games from random
  starts with the back-propagated shaped reward and mirror images, optionally
  partly against a fixed opponent (:mod:`c4jax.learning.dqn_games`; a game whose kit has CNET boards, random
  starts and a mirror), or ``"streams"``,
  per-ply streams of games side by side on the game's own rewards (:mod:`c4jax.learning.dqn_streams`);
- the network: the CNET where the game's kit says it reads the observations, else the residual
  tower of :mod:`c4jax.nets.tower`, whose Q is ``tanh`` of its policy head and whose value head
  learns ``V(s) = max_a Q_target(s, a)`` (weight ``value_weight``) so that the saved agent, which
  plays greedily through :class:`c4jax.agents.network_search.AlphaZeroAgent` (``@0``), can also
  search (``@N``);
- the ε schedule (``eps_schedule``: the thesis' 0.05 + 0.75·exp(−episodes/500), or linear;
  ``eps_per_update``: in episodes or updates) and the target network's update (``tau``: hard copies
  or Polyak averaging);
- the published code's switches of the whole-game collection (design.md §7a, :class:`Strategies`).

Every variant has one TD target (:func:`c4jax.learning.losses.negamax_td_target`, Double DQN's with
``double``), one loss and one update step (:meth:`DQN.update`), on one replay buffer
(:mod:`c4jax.learning.buffer`). Batched and jitted: a *chunk* (what the host loop calls between
evaluations) runs the collection's iterations, each of which plays, stores, and updates once the
buffer holds ``learning_starts`` transitions.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import Annotated, Callable, ClassVar

import jax
import jax.numpy as jnp
import optax
import tyro
from jax import Array

from c4jax import games
from c4jax.learning import buffer as rb
from c4jax.learning import config, losses, ranges
from c4jax.agents.network_search import AlphaZeroAgent
from c4jax.nets import tower as towers
from c4jax.nets.cnet import CNet
from c4jax.agents.policy import all_columns
from c4jax.games.base import check_game
from c4jax.learning.algorithm import Algorithm
from c4jax.learning.config import SelfPlayConfig
from c4jax.learning.dqn_games import DQNState as DQNState
from c4jax.learning.dqn_games import EpsilonGreedy as EpsilonGreedy
from c4jax.learning.dqn_games import GameCollection, mirror_avg_q, q_values, whole_games_fit
from c4jax.learning.dqn_games import Transition as Transition
from c4jax.learning.dqn_games import mirror_average as mirror_average
from c4jax.learning.dqn_games import transitions as transitions
from c4jax.learning.dqn_streams import StreamCollection
from c4jax.learning.optim import adam_l2, apply_gradients, make_optimizer
from c4jax.learning.train_state import where_seeds
from c4jax.learning import rollouts
from c4jax.learning import backprop as backprop_lib


# Double DQN on a game's own rewards: the settings of --collect streams on a game that has no whole-game
# self-play (its kit sets the sizes: GameKit.defaults["dqn"])
STREAMS = MappingProxyType(dict(collect="streams", double=True, loss="huber", gamma=1.0, tau=0.005,
                                eps_schedule="linear", eps_per_update=True, eps_start=1.0, eps_end=0.05,
                                weight_decay=0.0, max_grad_norm=1.0, eval_every=0))


@dataclass(frozen=True)
class DQNConfig(SelfPlayConfig):
    """DQN hyperparameters (defaults: the thesis). With --opponent, the opponent's moves are stored
    and learned from too (Q-learning is off-policy)."""

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
        "eval_every": ranges.at_least(0, "(0 = the default)"),
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
        """``--preset smoke``'s sizes of this collection (:func:`c4jax.learning.config.smoke_sizes`)."""
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
        """This config with --collect streams' ``eval_every`` given as ``iterations_per_eval``
        (:func:`c4jax.learning.config.settle`)."""
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


def epsilon(cfg: DQNConfig, episodes: Array) -> Array:
    """ε after ``episodes`` self-play games (or updates, with ``eps_per_update``):
    eps_end + (eps_start - eps_end)·exp(−episodes/decay), or with ``eps_schedule="linear"`` from
    eps_start to eps_end over ``eps_decay``."""
    if cfg.eps_schedule == "linear":
        frac = jnp.minimum(episodes / cfg.eps_decay, 1.0)
        return cfg.eps_start + frac * (cfg.eps_end - cfg.eps_start)
    return cfg.eps_end + (cfg.eps_start - cfg.eps_end) * jnp.exp(-episodes / cfg.eps_decay)


# --- strategies: what the published code's switches choose, as functions -------------------------


def tanh_q(apply, params, obs: Array) -> Array:
    """float32[..., A]: Q(s) of a residual tower ``apply``, ``tanh`` of its policy head (a game's values
    are in [-1, 1])."""
    return jnp.tanh(apply({"params": params}, obs)[0])


def target_network(params, target_params):
    """The weights that value s' in the TD target: the target network's (the thesis)."""
    del params
    return target_params


def online_network(params, target_params):
    """The weights that value s' in the TD target: the online network's, not differentiated (the
    published code; the target copy is still refreshed but never read)."""
    del target_params
    return jax.lax.stop_gradient(params)


def _negamax_targets(batch, q_next: Array, legal_next: Array, gamma, q_select: Array | None) -> Array:
    """``losses.negamax_td_target`` of every transition of ``batch``, with its ``sign`` (one scalar
    for all, or one per transition)."""
    sign_axis = None if isinstance(batch.sign, float) else 0
    select_axis = None if q_select is None else 0
    return jax.vmap(losses.negamax_td_target, in_axes=(0, sign_axis, 0, 0, 0, None, select_axis))(
        batch.reward, batch.sign, batch.done, q_next, legal_next, gamma, q_select)


def _next_legal(batch, legal) -> Array:
    """bool[N, A]: the legal actions of s' by ``legal`` (a function of the observations), or the ones the
    transitions store (``legal=None``)."""
    return batch.next_legal if legal is None else legal(batch.next_obs)


def max_td_target(apply, params, target_params, batch, gamma, *, net=target_network, q=q_values,
                  legal=None) -> Array:
    """float32[N]: ``y = r + gamma sign max_{a'} Q(s', a')`` (``y = r`` at the end; ``sign = -1`` when
    the opponent moves in s'), Q(s') = ``q`` of the weights ``net`` chooses, the max over the actions
    ``legal(s')`` (``None``: those the transitions store)."""
    q_next = q(apply, net(params, target_params), batch.next_obs)
    return _negamax_targets(batch, q_next, _next_legal(batch, legal), gamma, None)


def double_td_target(apply, params, target_params, batch, gamma, *, net=target_network, q=q_values,
                     legal=None) -> Array:
    """float32[N]: Double DQN's ``y = r + gamma sign Q_net(s', argmax_{a'} Q_online(s', a'))``, both Q by
    ``q``, the argmax over the actions ``legal(s')`` (``None``: those the transitions store)."""
    q_next_target = q(apply, net(params, target_params), batch.next_obs)
    legal_next = _next_legal(batch, legal)
    q_next_online = q(apply, params, batch.next_obs)
    return _negamax_targets(batch, q_next_target, legal_next, gamma, q_next_online)


def squared_error(q: Array, y: Array) -> Array:
    """float32[...]: ``(q - y) ** 2`` elementwise (the thesis' MSE loss before its mean)."""
    return jnp.square(q - y)


def episode_clock(state) -> Array:
    """What ε decays with: the self-play games played (the thesis)."""
    return state.episodes


def update_clock(state) -> Array:
    """What ε decays with: the updates done (the published code; 0 during the warm-up)."""
    return state.updates


def keep_target(state, reset):
    """The old-network rule leaves the target network alone (the thesis)."""
    del reset
    return state


def reset_target(state, reset):
    """The target network becomes the current weights where ``reset`` (bool[K], one per seed: a new
    best or a revert; the published code)."""
    return state.replace(target_params=where_seeds(reset, state.params, state.target_params))


@dataclass(frozen=True)
class Strategies:
    """How DQN plays, learns and follows the old-network rule, chosen once from a :class:`DQNConfig`
    (:meth:`of`); the defaults are the thesis, the alternatives the published code (design.md §7a) and
    the Double DQN article."""

    behaviour_q: Callable = q_values
    """``(apply, params, boards) -> Q`` that ε-greedy self-play acts on: ``q_values`` or ``mirror_avg_q`` (its
    ``symmetry`` bound)."""
    epsilon_clock: Callable = episode_clock
    """``state -> count`` that ε decays with: ``episode_clock`` or ``update_clock``."""
    td_target: Callable = max_td_target
    """``(apply, params, target_params, batch, gamma) -> y``: ``max_td_target`` or ``double_td_target``
    with its ``net``, ``q`` and ``legal`` bound."""
    error: Callable = squared_error
    """``(q, y) -> loss`` per transition: ``squared_error`` or ``optax.huber_loss`` with ``huber_delta``."""
    play: Callable = rollouts.mixed_rollout
    """The games: ``rollouts.mixed_rollout`` or ``rollouts.mixed_rollout_no_draws`` (draws replaced)."""
    backprop: Callable = backprop_lib.backprop_per_player
    """``(traj, n) -> rewards [B, T]``: a value of ``backprop_lib.BACKPROP``."""
    sync_target: Callable = keep_target
    """``(state, reset) -> state`` after the old-network rule: ``keep_target`` or ``reset_target``."""

    @classmethod
    def of(cls, cfg: DQNConfig, tower: bool = False, game=None) -> Strategies:
        """The strategies of ``cfg`` on ``game`` (default: the default game); ``tower``: the network is a
        residual tower (Q = ``tanh_q``), else a CNET. The legal actions of s' are those that the game's kit
        reads from a board (``--collect games``), or those the transitions store (``--collect streams``)."""
        kit = games.kit_of(games.DEFAULT if game is None else game)
        mirror_avg = partial(mirror_avg_q, symmetry=kit.symmetries[0]) if kit.symmetries else None
        if tower:
            q = tanh_q
        else:
            q = mirror_avg if cfg.target_mirror_avg else q_values
        if cfg.collect == "streams":
            legal = None
        else:
            legal = all_columns if cfg.target_unmasked else kit.observation_legal
        td_target = partial(double_td_target if cfg.double else max_td_target,
                            net=online_network if cfg.target_online else target_network, q=q, legal=legal)
        return cls(
            behaviour_q=mirror_avg if cfg.selfplay_mirror_avg else q_values,
            epsilon_clock=update_clock if cfg.eps_per_update else episode_clock,
            td_target=td_target,
            error=partial(optax.huber_loss, delta=cfg.huber_delta) if cfg.loss == "huber" else squared_error,
            play=rollouts.mixed_rollout_no_draws if cfg.replace_draws else rollouts.mixed_rollout,
            backprop=backprop_lib.BACKPROP[cfg.reward_backprop],
            sync_target=reset_target if cfg.reset_target_on_old else keep_target,
        )


class DQN(Algorithm):
    """The :class:`~c4jax.learning.algorithm.Algorithm` for DQN on ``game`` (default: the default game);
    ``name`` is 'dqn' or 'dueling_dqn'. ``ValueError`` when ``cfg`` does not fit the game."""

    output = "q"
    default_mode = "det"

    def __init__(self, cfg: DQNConfig, freeze_conv: bool = True, game=None):
        self.cfg = cfg = config.settle(cfg)
        self.game = games.make(games.DEFAULT) if game is None else check_game(game)
        kit = games.kit_of(self.game)
        if cfg.collect == "games" and not whole_games_fit(self.game):
            raise ValueError(f"--collect games plays the thesis' whole games (CNET boards, random starts, a mirror), "
                             f"which {self.game.id}'s kit has not: use --collect streams")
        self.name = "dueling_dqn" if cfg.dueling else "dqn"
        self.tower = () if kit.cnet else (cfg.tower_blocks, cfg.tower_channels)
        if self.tower:
            self.heads = "two"
            self.net = towers.Tower(blocks=cfg.tower_blocks, channels=cfg.tower_channels,
                                    num_actions=self.game.num_actions, encoding=towers.encoding_for(self.game),
                                    dueling=cfg.dueling)
            base = adam_l2(cfg.learning_rate, cfg.weight_decay)
            self.network_meta = {"tower": list(self.tower)}
            # the raw network; name@N searches with it, with proven values (the project's PUCT search)
            self.agent_meta = {"search": {"simulations": 0, "solve": True}}
        else:
            self.heads = "dueling" if cfg.dueling else "one"
            self.net = CNet(width=cfg.width, heads=self.heads)
            base = make_optimizer(cfg.learning_rate, cfg.weight_decay, freeze_conv)
        self.tx = optax.chain(optax.clip_by_global_norm(cfg.max_grad_norm), base) if cfg.max_grad_norm > 0 else base
        self.strategies = Strategies.of(cfg, tower=bool(self.tower), game=self.game)
        self.collection = StreamCollection(cfg, self.game) if cfg.collect == "streams" else GameCollection(cfg, self.game)
        c = self.collection
        self.batch_fields, self.batch_sizes = c.batch_fields, c.batch_sizes
        self.update_step, self.eval_updates = c.update_step, c.eval_updates
        self.chunk = jax.jit(self._chunk)
        self.compile_key = None if cfg.opponent_agent is not None else (type(self), cfg, freeze_conv, self.game)

    def chunk_of(self, units: int):
        """The chunk of ``units`` (:meth:`short_block`)."""
        return jax.jit(partial(self._chunk, units=units))

    def block_end(self, updates: int) -> int:
        return self.collection.block_end(updates)

    def short_block(self, state, updates: int) -> int:
        return self.collection.short_block(state, updates)

    def init(self, key: Array, params):
        return self.collection.init(self.tx, key, params)

    def collect(self, state):
        return self.collection.collect(self, state)

    def fresh_params(self, key: Array):
        """A residual tower's initial parameters (``None`` for a CNET, which the loop makes)."""
        if not self.tower:
            return None
        return self.net.init(key, jnp.zeros((1,) + tuple(self.game.observation_shape), jnp.int8))["params"]

    def saved_params(self, params):
        """A dueling tower folded into the plain tower that agents play (:func:`c4jax.nets.tower.fold_dueling`)."""
        return towers.fold_dueling(params) if self.tower else params

    def agent_of(self, params, label: str, sampled: bool = False, symmetric: bool = False, *,
                 width: int | None = None):
        """A CNET's :class:`~c4jax.agents.network.NetworkAgent`; a tower plays through
        :class:`AlphaZeroAgent` without search (its own width; the run's ``width`` is unused)."""
        if not self.tower:
            return super().agent_of(params, label, sampled, symmetric, width=width)
        return AlphaZeroAgent(params=self.saved_params(params), label=label, tower=self.tower, num_simulations=0,
                              deterministic=not sampled, game=self.game)

    def sync_target(self, state, reset):
        """After the host loop's old-network rule: ``Strategies.sync_target`` (the target network
        reset where ``reset``, with ``reset_target_on_old``; else ``state`` unchanged)."""
        return self.strategies.sync_target(state, reset)

    def behaviour_epsilon(self, state) -> Array:
        """The self-play ε of ``state``: by episodes (the thesis) or by updates (``eps_per_update``)."""
        return epsilon(self.cfg, self.strategies.epsilon_clock(state).astype(jnp.float32))

    # --- jitted pieces ------------------------------------------------------------------

    def q_and_value(self, params, obs: Array) -> tuple[Array, Array | None]:
        """``(Q[..., A], V[...])`` of the network: a tower's ``tanh`` of its heads; a CNET's Q and ``None``."""
        out = self.net.apply({"params": params}, obs)
        if not self.tower:
            return out, None
        logits, value = out
        return jnp.tanh(logits), jnp.tanh(value)

    def loss(self, params, target_params, batch):
        """The TD loss of ``batch`` (``Strategies.error`` to ``Strategies.td_target``); a tower adds
        ``value_weight`` times its value head's squared error to ``max_{legal a} Q_target(s, a)``."""
        q, value = self.q_and_value(params, batch.obs)
        q_sa = jnp.take_along_axis(q, batch.action[:, None], axis=-1)[:, 0]
        y = self.strategies.td_target(self.net.apply, params, target_params, batch, self.cfg.gamma)
        err = self.strategies.error(q_sa, y).mean()
        aux = {"q": q_sa.mean(), "target": y.mean()}
        if value is None:
            return err, aux
        q_target_now, _ = self.q_and_value(target_params, batch.obs)
        v_target = jax.lax.stop_gradient(jnp.max(jnp.where(batch.legal, q_target_now, -1.0), axis=-1))
        value_loss = jnp.mean((value - v_target) ** 2)
        return err + self.cfg.value_weight * value_loss, {**aux, "td_loss": err, "value_loss": value_loss}

    def update(self, state, key: Array):
        """One update on a minibatch drawn with ``key``: the gradient step, then the target network's
        (a hard copy every ``target_update_every`` updates, or Polyak averaging with ``tau`` < 1)."""
        batch = rb.sample(state.buffer, key, self.cfg.batch_size)
        (loss, aux), grads = jax.value_and_grad(self.loss, has_aux=True)(state.params, state.target_net(), batch)
        params, opt_state = apply_gradients(self.tx, state.params, state.opt_state, grads)
        n = state.updates + 1
        if self.cfg.tau < 1.0:
            target = optax.incremental_update(params, state.target_net(), self.cfg.tau)
        else:
            copy = n % self.cfg.target_update_every == 0
            target = jax.tree.map(lambda p, t: jnp.where(copy, p, t), params, state.target_net())
        return state.with_target(target).replace(params=params, opt_state=opt_state, updates=n), {"loss": loss, **aux}

    def _chunk(self, state, units: int | None = None):
        return self.collection.chunk(self, state, units)
