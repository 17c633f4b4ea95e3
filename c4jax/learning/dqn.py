"""Vanilla, Dueling and Double DQN for two-player self-play (design.md §7, the Double DQN article).

One network plays both sides with ε-greedy (ε = 0.05 + 0.75·exp(−episodes/500))
from design.md §3 random start boards. Each finished game's transitions, with design.md §2
back-propagated rewards, go into a replay buffer together with their mirror
images. The turn-based zero-sum target is ``y = r − γ·max_{legal a'} Q_target(s', a')``
(``y = r`` at the end): s' is the opponent's board, so its value is subtracted.
Optionally (``opponent``, Löhr et al.) a fixed agent such as 2StepLA plays one side
of a fraction of the games instead; all their moves go into the buffer.

Batched and jitted: an *iteration* plays ``episodes_per_iteration`` games at
once (one ``lax.while_loop`` over plies for all of them), adds them to the pure
pytree buffer, then, once the buffer holds ``learning_starts`` transitions,
runs ``updates_per_episode`` updates per game in one ``lax.scan``. A *chunk*
(what the host loop calls between evaluations) is a ``lax.while_loop`` of
iterations up to the next multiple of ``eval_every`` updates.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, ClassVar

import jax
import jax.numpy as jnp
import optax
from flax import struct
from jax import Array

from c4jax.learning import buffer as rb
from c4jax.learning import losses, ranges
from c4jax.agents import arena
from c4jax.agents.base import AgentBase
from c4jax.nets.cnet import CNet
from c4jax.agents.policy import all_columns, epsilon_greedy
from c4jax.games.connect_four.board import legal_mask, mirror_boards
from c4jax.games.connect_four.game import GAME as CONNECT_FOUR
from c4jax.learning.algorithm import Algorithm
from c4jax.learning.config import SelfPlayConfig
from c4jax.learning.optim import apply_gradients, make_optimizer
from c4jax.learning.train_state import TrainState, where_seeds
from c4jax.learning import rollouts
from c4jax.learning import rewards as rewards_lib


@dataclass(frozen=True)
class DQNConfig(SelfPlayConfig):
    """DQN hyperparameters (defaults: the thesis, design.md §7). With --opponent, the opponent's moves are stored
    and learned from too (Q-learning is off-policy)."""

    dueling: bool = False
    """Dueling head: Q = V + A - mean(A) (two heads)."""
    double: bool = False
    """Double DQN: the online network picks a', the target network values it."""
    loss: str = "mse"
    """'mse' (thesis) or 'huber' (the Double DQN article)."""
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
    """Self-play games played in parallel per iteration (each followed by its updates)."""
    target_update_every: int = 400
    """Hard target copy period in updates (used when tau == 1)."""
    tau: float = 1.0
    """Soft target update rate per update; 1.0 = hard copies every target_update_every."""
    eps_start: float = 0.8
    """ε at episode 0 (0.05 + 0.75)."""
    eps_end: float = 0.05
    """ε floor."""
    eps_decay: float = 500.0
    """ε decay constant in episodes."""
    eval_every: int = 1000
    """Updates between evaluations (and checkpoints)."""
    target_online: bool = False
    """Compute the TD target with the online network (the target copy is still refreshed but never read),
    as the published code does (design.md §7a)."""
    target_mirror_avg: bool = False
    """Average Q(s') with the mirrored board's Q (mirrored back) before the max of the TD target (the
    published code, design.md §7a)."""
    target_unmasked: bool = False
    """Take the TD target's max over all 7 columns of s', full ones included (the published code,
    design.md §7a)."""
    eps_per_update: bool = False
    """Decay ε with the updates done so far instead of the episodes (the published code, design.md §7a):
    the warm-up before --learning-starts is played at ε = --eps-start."""
    selfplay_mirror_avg: bool = False
    """Self-play acts on the mirror-averaged Q-values (then masks full columns), as the published code
    does (design.md §7a)."""
    reset_target_on_old: bool = False
    """Reset the target network to the weights the old-network rule leaves in place, on a new best and on a
    revert (the published code, design.md §7a)."""

    RANGES: ClassVar[dict] = {
        "learning_rate": ranges.POSITIVE, "weight_decay": ranges.NON_NEGATIVE, "batch_size": ranges.ONE_OR_MORE,
        "buffer_size": ranges.ONE_OR_MORE, "learning_starts": ranges.NON_NEGATIVE,
        "updates_per_episode": ranges.ONE_OR_MORE, "episodes_per_iteration": ranges.ONE_OR_MORE,
        "target_update_every": ranges.ONE_OR_MORE, "tau": ranges.Range(0, 1, low_open=True),
        "eps_start": ranges.UNIT, "eps_end": ranges.UNIT, "eps_decay": ranges.POSITIVE, "eval_every": ranges.ONE_OR_MORE,
    }

    SMOKE: ClassVar[dict] = {"width": 16, "buffer_size": 2000, "learning_starts": 200, "updates_per_episode": 2,
                             "episodes_per_iteration": 2, "eval_every": 8, "total_updates": 8}

    def __post_init__(self):
        super().__post_init__()
        if not ranges.checking():
            return
        if self.loss not in ("mse", "huber"):
            raise ValueError(f"--loss must be 'mse' or 'huber', got {self.loss!r}")
        if self.learning_starts > self.buffer_size:
            raise ValueError(f"--learning-starts ({self.learning_starts}) cannot exceed --buffer-size ({self.buffer_size})")
        if self.eval_every % self.iteration_updates:
            raise ValueError(f"--eval-every must be a multiple of the {self.iteration_updates} updates of one iteration "
                             f"(--updates-per-episode x --episodes-per-iteration), got {self.eval_every}")

    @property
    def iteration_updates(self) -> int:
        """The updates of one iteration once the buffer holds --learning-starts transitions."""
        return self.updates_per_episode * self.episodes_per_iteration


def epsilon(cfg: DQNConfig, episodes: Array) -> Array:
    """ε after ``episodes`` self-play games (or updates, with ``eps_per_update``):
    eps_end + (eps_start - eps_end)·exp(−episodes/decay)."""
    return cfg.eps_end + (cfg.eps_start - cfg.eps_end) * jnp.exp(-episodes / cfg.eps_decay)


def mirror_average(q: Array, q_mirrored: Array) -> Array:
    """float32[..., 7]: ``q`` averaged with the mirrored board's ``q_mirrored``, mirrored back."""
    return 0.5 * (q + q_mirrored[..., ::-1])


@struct.dataclass
class Transition:
    board: Array  # int8[6, 7]: s, mover to play
    action: Array  # int32[]
    reward: Array  # float32[]: back-propagated design.md §2 reward
    next_board: Array  # int8[6, 7]: s', the opponent to play (zeros when done)
    done: Array  # bool[]


@struct.dataclass
class DQNState(TrainState):
    target_params: Any  # the target network's parameters
    buffer: rb.Buffer  # replay buffer of Transitions


# --- strategies: what the switches of design.md §7a choose, as functions --------------------------


def q_values(apply, params, boards: Array) -> Array:
    """float32[..., 7]: Q(s) of the network ``apply`` (the thesis)."""
    return apply({"params": params}, boards)


def mirror_avg_q(apply, params, boards: Array) -> Array:
    """float32[..., 7]: Q(s) averaged with the mirrored board's, mirrored back (the published code)."""
    return mirror_average(apply({"params": params}, boards), apply({"params": params}, mirror_boards(boards)))


def target_network(params, target_params):
    """The weights that value s' in the TD target: the target network's (the thesis)."""
    del params
    return target_params


def online_network(params, target_params):
    """The weights that value s' in the TD target: the online network's, not differentiated (the
    published code; the target copy is still refreshed but never read)."""
    del target_params
    return jax.lax.stop_gradient(params)


def max_td_target(apply, params, target_params, batch: Transition, gamma, *, net=target_network, q=q_values,
                  legal=legal_mask) -> Array:
    """float32[N]: ``y = r - gamma max_{a'} Q(s', a')`` (``y = r`` at the end), Q(s') = ``q`` of the
    weights ``net`` chooses, the max over the columns ``legal(s')``."""
    q_next = q(apply, net(params, target_params), batch.next_board)
    return jax.vmap(losses.td_target, in_axes=(0, 0, 0, 0, None))(
        batch.reward, batch.done, q_next, legal(batch.next_board), gamma)


def double_td_target(apply, params, target_params, batch: Transition, gamma, *, net=target_network, q=q_values,
                     legal=legal_mask) -> Array:
    """float32[N]: Double DQN's ``y = r - gamma Q_net(s', argmax_{a'} Q_online(s', a'))``, both Q by ``q``,
    the argmax over the columns ``legal(s')``."""
    q_next_target = q(apply, net(params, target_params), batch.next_board)
    legal_next = legal(batch.next_board)
    q_next_online = q(apply, params, batch.next_board)
    return jax.vmap(losses.double_td_target, in_axes=(0, 0, 0, 0, 0, None))(
        batch.reward, batch.done, q_next_online, q_next_target, legal_next, gamma)


def squared_error(q: Array, y: Array) -> Array:
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
    (:meth:`of`); the defaults are the thesis (design.md §7), the alternatives the published code
    (design.md §7a) and the Double DQN article."""

    behaviour_q: Callable = q_values
    """``(apply, params, boards) -> Q`` that ε-greedy self-play acts on: ``q_values`` or ``mirror_avg_q``."""
    epsilon_clock: Callable = episode_clock
    """``state -> count`` that ε decays with: ``episode_clock`` or ``update_clock``."""
    td_target: Callable = max_td_target
    """``(apply, params, target_params, batch, gamma) -> y``: ``max_td_target`` or ``double_td_target``
    with its ``net``, ``q`` and ``legal`` bound."""
    error: Callable = squared_error
    """``(q, y) -> loss`` per transition: ``squared_error`` or ``optax.huber_loss``."""
    play: Callable = rollouts.mixed_rollout
    """The games: ``rollouts.mixed_rollout`` or ``rollouts.mixed_rollout_no_draws`` (draws replaced)."""
    backprop: Callable = rewards_lib.backprop_per_player
    """``(traj, n) -> rewards [B, 42]``: a value of ``rewards_lib.BACKPROP``."""
    sync_target: Callable = keep_target
    """``(state, reset) -> state`` after the old-network rule: ``keep_target`` or ``reset_target``."""

    @classmethod
    def of(cls, cfg: DQNConfig) -> Strategies:
        td_target = partial(double_td_target if cfg.double else max_td_target,
                            net=online_network if cfg.target_online else target_network,
                            q=mirror_avg_q if cfg.target_mirror_avg else q_values,
                            legal=all_columns if cfg.target_unmasked else legal_mask)
        return cls(
            behaviour_q=mirror_avg_q if cfg.selfplay_mirror_avg else q_values,
            epsilon_clock=update_clock if cfg.eps_per_update else episode_clock,
            td_target=td_target,
            error=optax.huber_loss if cfg.loss == "huber" else squared_error,
            play=rollouts.mixed_rollout_no_draws if cfg.replace_draws else rollouts.mixed_rollout,
            backprop=rewards_lib.BACKPROP[cfg.reward_backprop],
            sync_target=reset_target if cfg.reset_target_on_old else keep_target,
        )


@struct.dataclass
class EpsilonGreedy(AgentBase):
    """The self-play behaviour policy (not for evaluation): ε-greedy on ``q`` (a ``Strategies.behaviour_q``)."""

    params: Any
    epsilon: Array  # float32[]
    net: CNet = struct.field(pytree_node=False)
    name: str = struct.field(pytree_node=False, default="eps-greedy")
    stochastic: bool = struct.field(pytree_node=False, default=True)
    q: Callable = struct.field(pytree_node=False, default=q_values)

    def _act(self, boards, key):
        return epsilon_greedy(key, self.q(self.net.apply, self.params, boards), legal_mask(boards), self.epsilon)


def transitions(traj: arena.Trajectory, n: float, backprop=rewards_lib.backprop_per_player) -> tuple[Transition, Array]:
    """Flat transitions [2·B·42] of the recorded games and their mirrors, with a valid mask
    (``backprop``: the reward back-propagation, a value of ``rewards_lib.BACKPROP``)."""
    rewards = backprop(traj, n)
    nxt = jnp.concatenate([traj.observations[:, 1:], jnp.zeros_like(traj.observations[:, :1])], axis=1)
    nxt = jnp.where(traj.done[..., None, None], 0, nxt)
    t = Transition(board=traj.observations, action=traj.actions, reward=rewards, next_board=nxt, done=traj.done)
    m = t.replace(board=mirror_boards(t.board), action=6 - t.action, next_board=mirror_boards(t.next_board))
    both = jax.tree.map(lambda a, b: jnp.concatenate([a, b]).reshape((-1,) + a.shape[2:]), t, m)
    valid = jnp.concatenate([traj.valid, traj.valid]).reshape(-1)
    return both, valid


class DQN(Algorithm):
    """The :class:`~c4jax.learning.algorithm.Algorithm` for DQN; ``name`` is 'dqn' or 'dueling_dqn'."""

    game = CONNECT_FOUR  # the thesis' boards and shaped reward
    output = "q"
    default_mode = "det"
    batch_fields = tuple(f"buffer.{f}" for f in rb.BATCH_FIELDS)  # the replay storage, split over devices

    def __init__(self, cfg: DQNConfig, freeze_conv: bool = True):
        self.cfg = cfg
        self.strategies = Strategies.of(cfg)
        self.batch_sizes = {"--episodes-per-iteration": cfg.episodes_per_iteration, "--batch-size": cfg.batch_size,
                            "--buffer-size": cfg.buffer_size}
        self.heads = "dueling" if cfg.dueling else "one"
        self.name = "dueling_dqn" if cfg.dueling else "dqn"
        self.net = CNet(width=cfg.width, heads=self.heads)
        self.tx = make_optimizer(cfg.learning_rate, cfg.weight_decay, freeze_conv)
        self.chunk = jax.jit(self._chunk)
        self.compile_key = None if cfg.opponent_agent is not None else (type(self), cfg, freeze_conv)
        self.update_step, self.eval_updates = cfg.iteration_updates, cfg.eval_every
        self.update_step_name = "iteration (--updates-per-episode x --episodes-per-iteration)"

    def chunk_of(self, units: int):
        """The chunk that makes ``units`` updates (past the iterations that only fill the buffer)."""
        return jax.jit(partial(self._chunk, units=units))

    def block_end(self, updates: int) -> int:
        """A full chunk ends at the next multiple of ``eval_every``."""
        return (updates // self.cfg.eval_every + 1) * self.cfg.eval_every

    def short_block(self, state, updates: int) -> int:
        del state
        return updates

    def init(self, key: Array, params) -> DQNState:
        example = Transition(board=jnp.zeros((6, 7), jnp.int8), action=jnp.int32(0), reward=jnp.float32(0),
                             next_board=jnp.zeros((6, 7), jnp.int8), done=jnp.bool_(False))
        return DQNState.create(params, self.tx, key, target_params=params,
                               buffer=rb.init(example, self.cfg.buffer_size))

    def sync_target(self, state: DQNState, reset) -> DQNState:
        """After the host loop's old-network rule: ``Strategies.sync_target`` (the target network
        reset where ``reset``, with ``reset_target_on_old``; else ``state`` unchanged)."""
        return self.strategies.sync_target(state, reset)

    def behaviour_epsilon(self, state) -> Array:
        """The self-play ε of ``state``: by episodes (the thesis) or by updates (``eps_per_update``)."""
        return epsilon(self.cfg, self.strategies.epsilon_clock(state).astype(jnp.float32))

    # --- jitted pieces ------------------------------------------------------------------

    def loss(self, params, target_params, batch: Transition):
        q = self.net.apply({"params": params}, batch.board)
        q_sa = jnp.take_along_axis(q, batch.action[:, None], axis=-1)[:, 0]
        y = self.strategies.td_target(self.net.apply, params, target_params, batch, self.cfg.gamma)
        err = self.strategies.error(q_sa, y)
        return err.mean(), {"q": q_sa.mean(), "target": y.mean()}

    def _update(self, state: DQNState, _):
        key, sample_key = jax.random.split(state.key)
        batch = rb.sample(state.buffer, sample_key, self.cfg.batch_size)
        (loss, aux), grads = jax.value_and_grad(self.loss, has_aux=True)(state.params, state.target_params, batch)
        params, opt_state = apply_gradients(self.tx, state.params, state.opt_state, grads)
        n = state.updates + 1
        if self.cfg.tau < 1.0:
            target = optax.incremental_update(params, state.target_params, self.cfg.tau)
        else:
            copy = n % self.cfg.target_update_every == 0
            target = jax.tree.map(lambda p, t: jnp.where(copy, p, t), params, state.target_params)
        new = state.replace(params=params, target_params=target, opt_state=opt_state, key=key, updates=n)
        return new, {"loss": loss, **aux}

    def _iteration(self, state: DQNState):
        """Play a batch of ε-greedy self-play games, store them, and update if the buffer is ready."""
        cfg = self.cfg
        key, start_key, play_key = jax.random.split(state.key, 3)
        games = cfg.episodes_per_iteration
        starts = arena.random_initial_states(start_key, games)
        behaviour = EpsilonGreedy(params=state.params, epsilon=self.behaviour_epsilon(state), net=self.net,
                                  q=self.strategies.behaviour_q)
        traj, _ = self.strategies.play(behaviour, cfg.opponent_agent, starts, cfg.opponent_games(games), play_key)
        items, valid = transitions(traj, cfg.reward_backprop_n, self.strategies.backprop)
        state = state.replace(buffer=rb.add(state.buffer, items, valid), key=key,
                               episodes=state.episodes + games)
        n_updates = cfg.updates_per_episode * games
        ready = state.buffer.size >= cfg.learning_starts
        # A loop of 0 or n_updates steps rather than lax.cond(ready, ...): under vmap (--vmap-seeds)
        # a cond with a per-seed predicate runs both branches, i.e. every update even while the
        # buffers are still filling; a while loop runs only while some seed is ready.
        todo = jnp.where(ready, n_updates, 0)

        def learn(i, carry):
            s, sums = carry
            s, m = self._update(s, None)
            return s, jax.tree.map(jnp.add, sums, m)

        zero = {"loss": jnp.float32(0), "q": jnp.float32(0), "target": jnp.float32(0)}
        state, sums = jax.lax.fori_loop(0, todo, learn, (state, zero))
        stats = {**sums, "n": todo.astype(jnp.float32),
                 "length": traj.length.sum().astype(jnp.float32), "games": jnp.float32(games)}
        return state, stats

    def _chunk(self, state: DQNState, units: int | None = None):
        """Iterate until the next multiple of ``eval_every`` updates (``units``: until ``units`` more
        updates); return averaged metrics."""
        if units is None:
            stop = (state.updates // self.cfg.eval_every + 1) * self.cfg.eval_every
        else:
            stop = state.updates + units
        zero = {k: jnp.float32(0) for k in ("loss", "q", "target", "n", "length", "games")}

        def cond(c):
            return c[0].updates < stop

        def body(c):
            s, acc = c
            s, stats = self._iteration(s)
            return s, jax.tree.map(jnp.add, acc, stats)

        state, acc = jax.lax.while_loop(cond, body, (state, zero))
        n = jnp.maximum(acc["n"], 1.0)
        metrics = {
            "train/loss": acc["loss"] / n,
            "train/q": acc["q"] / n,
            "train/target": acc["target"] / n,
            "selfplay/length": acc["length"] / jnp.maximum(acc["games"], 1.0),
            "selfplay/epsilon": self.behaviour_epsilon(state),
            "selfplay/episodes": state.episodes.astype(jnp.float32),
            "buffer/size": state.buffer.size.astype(jnp.float32),
        }
        return state, metrics
