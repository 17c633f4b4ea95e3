"""DQN's whole-game collection (``--collect games``): the thesis' self-play (design.md §7) on a game whose
kit has CNET boards, random starts and a mirror.

An iteration plays ``episodes_per_iteration`` ε-greedy self-play games (some optionally against a fixed
opponent); their transitions, with back-propagated rewards, go into the replay buffer with their mirror
images; then ``updates_per_episode`` updates per game once it holds ``learning_starts``. A chunk ends
exactly at the next multiple of the evaluation interval.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
from flax import struct
from jax import Array

from c4jax import games
from c4jax.agents import arena
from c4jax.agents.base import AgentBase
from c4jax.agents.policy import epsilon_greedy
from c4jax.games.kit import Symmetry
from c4jax.learning import backprop as backprop_lib
from c4jax.learning import buffer as rb
from c4jax.learning.train_state import TrainState
from c4jax.nets.cnet import CNet


@struct.dataclass
class Transition:
    """One move of a whole game (``--collect games``), the next board seen by the opponent."""

    board: Array  # int8[*observation_shape]: s, mover to play
    action: Array  # int32[]
    reward: Array  # float32[]: the back-propagated shaped reward
    next_board: Array  # int8[*observation_shape]: s', the opponent to play (zeros when done)
    done: Array  # bool[]

    @property
    def obs(self) -> Array:
        return self.board

    @property
    def next_obs(self) -> Array:
        return self.next_board

    @property
    def sign(self) -> float:
        """The opponent always moves in s'."""
        return -1.0


@struct.dataclass
class DQNState(TrainState):
    target_params: Any  # the target network's parameters
    buffer: rb.Buffer  # replay buffer of Transitions

    def target_net(self):
        return self.target_params

    def with_target(self, target) -> DQNState:
        return self.replace(target_params=target)


def q_values(apply, params, boards: Array) -> Array:
    """float32[..., A]: Q(s) of the network ``apply``."""
    return apply({"params": params}, boards)


def mirror_avg_q(apply, params, boards: Array, *, symmetry: Symmetry) -> Array:
    """float32[..., A]: Q(s) averaged with its mirror image's under ``symmetry`` (the published code)."""
    q, q_mirrored = apply({"params": params}, boards), apply({"params": params}, symmetry.observation(boards))
    return 0.5 * (q + symmetry.policy(q_mirrored))


@struct.dataclass
class EpsilonGreedy(AgentBase):
    """The self-play behaviour policy: ε-greedy on ``q``."""

    params: Any
    epsilon: Array  # float32[]
    net: CNet = struct.field(pytree_node=False)
    legal: Callable = struct.field(pytree_node=False)  # boards -> bool[..., A]: the kit's ``observation_legal``
    name: str = struct.field(pytree_node=False, default="eps-greedy")
    stochastic: bool = struct.field(pytree_node=False, default=True)
    q: Callable = struct.field(pytree_node=False, default=q_values)
    game: Any = struct.field(pytree_node=False, kw_only=True)

    def _act(self, boards, key):
        return epsilon_greedy(key, self.q(self.net.apply, self.params, boards), self.legal(boards), self.epsilon)


def transitions(traj: arena.Trajectory, n: float, symmetry: Symmetry,
                backprop=backprop_lib.backprop_per_player) -> tuple[Transition, Array]:
    """``(transitions [2·B·T], valid bool[2·B·T])`` of the games and their images under ``symmetry``, rewards
    back-propagated by ``backprop``."""
    rewards = backprop(traj, n)
    nxt = jnp.concatenate([traj.observations[:, 1:], jnp.zeros_like(traj.observations[:, :1])], axis=1)
    nxt = jnp.where(arena.broadcast_mask(traj.done, nxt), 0, nxt)
    t = Transition(board=traj.observations, action=traj.actions, reward=rewards, next_board=nxt, done=traj.done)
    m = t.replace(board=symmetry.observation(t.board), action=symmetry.action(t.action),
                  next_board=symmetry.observation(t.next_board))
    both = jax.tree.map(lambda a, b: jnp.concatenate([a, b]).reshape((-1,) + a.shape[2:]), t, m)
    valid = jnp.concatenate([traj.valid, traj.valid]).reshape(-1)
    return both, valid


def whole_games_fit(game) -> bool:
    """Whether ``--collect games`` can play ``game``: its kit has CNET boards, random starts and a mirror."""
    kit = games.kit_of(game)
    return kit.cnet and kit.random_start is not None and bool(kit.symmetries)


class GameCollection:
    """How a DQN with ``--collect games`` fills its buffer and runs a chunk."""

    def __init__(self, cfg, game):
        self.cfg, self.game = cfg, game
        kit = games.kit_of(game)
        self.legal, self.symmetry = kit.observation_legal, kit.symmetries[0]
        self.batch_fields = tuple(f"buffer.{f}" for f in rb.BATCH_FIELDS)  # the replay storage, split over devices
        self.batch_sizes = {"--episodes-per-iteration": cfg.episodes_per_iteration, "--batch-size": cfg.batch_size,
                            "--buffer-size": cfg.buffer_size}
        self.update_step, self.eval_updates = cfg.iteration_updates, cfg.eval_updates

    def block_end(self, updates: int) -> int:
        """A full chunk ends at the next multiple of ``eval_updates``."""
        return (updates // self.eval_updates + 1) * self.eval_updates

    def short_block(self, state, updates: int) -> int:
        del state
        return updates

    def init(self, tx, key: Array, params) -> DQNState:
        board = jnp.zeros(tuple(self.game.observation_shape), jnp.int8)
        example = Transition(board=board, action=jnp.int32(0), reward=jnp.float32(0), next_board=board,
                             done=jnp.bool_(False))
        return DQNState.create(params, tx, key, target_params=params, buffer=rb.init(example, self.cfg.buffer_size))

    def _play(self, algo, state: DQNState, start_key: Array, play_key: Array):
        """``(state, trajectories)`` after a batch of ε-greedy games is stored in the buffer."""
        cfg, strategies = self.cfg, algo.strategies
        starts = arena.random_initial_states(start_key, cfg.episodes_per_iteration, self.game)
        behaviour = EpsilonGreedy(params=state.params, epsilon=algo.behaviour_epsilon(state), net=algo.net,
                                  legal=self.legal, q=strategies.behaviour_q, game=self.game)
        traj, _ = strategies.play(behaviour, cfg.opponent_agent, starts, cfg.opponent_games(cfg.episodes_per_iteration),
                                  play_key, game=self.game)
        items, valid = transitions(traj, cfg.reward_backprop_n, self.symmetry, strategies.backprop)
        return state.replace(buffer=rb.add(state.buffer, items, valid)), traj

    def collect(self, algo, state: DQNState) -> DQNState:
        """One batch of games into the buffer, no update."""
        key, start_key, play_key = jax.random.split(state.key, 3)
        return self._play(algo, state, start_key, play_key)[0].replace(key=key)

    def iteration(self, algo, state: DQNState, stop: Array):
        """A batch of games into the buffer, then updates once it is ready, until ``state.updates`` reaches ``stop``."""
        cfg = self.cfg
        key, start_key, play_key = jax.random.split(state.key, 3)
        games_ = cfg.episodes_per_iteration
        state, traj = self._play(algo, state, start_key, play_key)
        state = state.replace(key=key, episodes=state.episodes + games_)
        n_updates = cfg.updates_per_episode * games_
        ready = state.buffer.size >= cfg.learning_starts
        # A loop of 0 or n_updates steps rather than lax.cond(ready, ...): under vmap (--vmap-seeds)
        # a cond with a per-seed predicate runs both branches, i.e. every update even while the
        # buffers are still filling; a while loop runs only while some seed is ready.
        todo = jnp.where(ready, jnp.minimum(n_updates, stop - state.updates), 0)

        def learn(i, carry):
            s, sums = carry
            k, sample_key = jax.random.split(s.key)
            s, m = algo.update(s.replace(key=k), sample_key)
            return s, jax.tree.map(jnp.add, sums, {name: m[name] for name in sums})

        zero = {"loss": jnp.float32(0), "q": jnp.float32(0), "target": jnp.float32(0)}
        state, sums = jax.lax.fori_loop(0, todo, learn, (state, zero))
        stats = {**sums, "n": todo.astype(jnp.float32),
                 "length": traj.length.sum().astype(jnp.float32), "games": jnp.float32(games_)}
        return state, stats

    def chunk(self, algo, state: DQNState, units: int | None = None):
        """``(state, averaged metrics)`` after iterating to the next multiple of ``eval_updates`` (or ``units`` more)."""
        if units is None:
            stop = (state.updates // self.eval_updates + 1) * self.eval_updates
        else:
            stop = state.updates + units
        zero = {k: jnp.float32(0) for k in ("loss", "q", "target", "n", "length", "games")}

        def cond(c):
            return c[0].updates < stop

        def body(c):
            s, acc = c
            s, stats = self.iteration(algo, s, stop)
            return s, jax.tree.map(jnp.add, acc, stats)

        state, acc = jax.lax.while_loop(cond, body, (state, zero))
        n = jnp.maximum(acc["n"], 1.0)
        metrics = {
            "train/loss": acc["loss"] / n,
            "train/q": acc["q"] / n,
            "train/target": acc["target"] / n,
            "selfplay/length": acc["length"] / jnp.maximum(acc["games"], 1.0),
            "selfplay/epsilon": algo.behaviour_epsilon(state),
            "selfplay/episodes": state.episodes.astype(jnp.float32),
            "buffer/size": state.buffer.size.astype(jnp.float32),
        }
        return state, metrics


