"""DQN's per-ply collection (``--collect streams``) for any game, on the game's own rewards.

``envs`` games run side by side, each restarting when it ends; an iteration plays ``steps`` ε-greedy
plies of all of them into the replay buffer, then makes ``updates_per_iteration`` updates once it holds
``learning_starts`` transitions. A transition keeps the legal actions of s and s' and the ``sign`` of s'
for the mover (+1 when the same player moves again, else -1).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct
from jax import Array

from c4jax.learning import blocks
from c4jax.learning import buffer as rb
from c4jax.learning.streams import finished_games, play_ply
from c4jax.learning.train_state import TrainState

# the update step's metrics and the names a stream chunk reports them under
METRICS = {"loss": "train/loss", "td_loss": "train/td_loss", "value_loss": "train/value_loss", "q": "train/q_taken"}


@struct.dataclass
class StreamTransition:
    obs: Array  # the observation of the player to move
    legal: Array  # bool[A]: its legal actions
    action: Array  # int32
    reward: Array  # float32: the mover's reward
    done: Array  # bool: the move ended the game
    sign: Array  # float32: +1 when the same player moves next, -1 when the opponent does
    next_obs: Array  # the observation after the move (meaningless when done)
    next_legal: Array  # bool[A]: the legal actions after the move


@struct.dataclass
class StreamDQNState(TrainState):
    target: Any  # the target network's parameters
    buffer: rb.Buffer
    envs: Any  # game states [E], mid-game
    plies: Array  # int32[E]: plies played in each running game

    def target_net(self):
        return self.target

    def with_target(self, target) -> StreamDQNState:
        return self.replace(target=target)


class StreamCollection:
    """How a DQN with ``--collect streams`` fills its buffer and runs a chunk (``algo``: the DQN)."""

    def __init__(self, cfg, game):
        self.cfg, self.game = cfg, game
        self.update_step = cfg.updates_per_iteration
        self.eval_updates = cfg.eval_updates
        self.batch_fields, self.batch_sizes = (), {}

    def block_end(self, updates: int) -> int:
        return updates + self.eval_updates

    def short_block(self, state, updates: int) -> tuple[int, int]:
        """``(iterations, rest)`` that make ``updates`` updates, iterations only filling the buffer included."""
        # an iteration adds envs x steps transitions, then learns once the buffer holds --learning-starts
        missing = self.cfg.learning_starts - int(state.buffer.size)
        only_fill = max(0, -(-missing // (self.cfg.envs * self.cfg.steps)) - 1)
        return only_fill + updates // self.update_step, updates % self.update_step

    def init(self, tx, key: Array, params) -> StreamDQNState:
        env_key, key = jax.random.split(key)
        game, e = self.game, self.cfg.envs
        envs, plies = jax.vmap(game.init)(jax.random.split(env_key, e)), jnp.zeros(e, jnp.int32)
        obs = game.observe(game.init(jax.random.key(0)))
        a = game.num_actions
        example = StreamTransition(obs=jnp.zeros(obs.shape, obs.dtype), legal=jnp.zeros(a, jnp.bool_),
                                   action=jnp.int32(0), reward=jnp.float32(0), done=jnp.bool_(False),
                                   sign=jnp.float32(0), next_obs=jnp.zeros(obs.shape, obs.dtype),
                                   next_legal=jnp.zeros(a, jnp.bool_))
        return StreamDQNState.create(params, tx, key, target=params, buffer=rb.init(example, self.cfg.buffer_size),
                                     envs=envs, plies=plies)

    def play(self, algo, state: StreamDQNState, key: Array):
        """``steps`` ε-greedy plies of every game: ``(flat transitions, games, plies, finished, total length)``."""
        game, eps = self.game, algo.behaviour_epsilon(state)

        def ply(carry, k):
            envs, plies, finished, lengths = carry
            explore_key, random_key, reset_key = jax.random.split(k, 3)
            obs = jax.vmap(game.observe)(envs)
            legal = envs.legal_action_mask
            q, _ = algo.q_and_value(state.params, obs)
            greedy = jnp.argmax(jnp.where(legal, q, -jnp.inf), axis=-1)
            uniform = jax.random.categorical(random_key, jnp.where(legal, 0.0, -jnp.inf))
            explore = jax.random.uniform(explore_key, greedy.shape) < eps
            action = jnp.where(explore, uniform, greedy).astype(jnp.int32)
            ply_, envs, next_plies = play_ply(game, envs, action, plies, reset_key)
            row = StreamTransition(obs=obs, legal=legal, action=action, reward=ply_.reward, done=ply_.done,
                                   sign=ply_.sign, next_obs=jax.vmap(game.observe)(ply_.after),
                                   next_legal=ply_.after.legal_action_mask)
            ended, total = finished_games(ply_, plies)
            return (envs, next_plies, finished + ended, lengths + total), row

        start = (state.envs, state.plies, jnp.int32(0), jnp.int32(0))
        (envs, plies, finished, lengths), rows = jax.lax.scan(ply, start, jax.random.split(key, self.cfg.steps))
        flat = jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), rows)
        return flat, envs, plies, finished, lengths

    def collect(self, algo, state: StreamDQNState) -> StreamDQNState:
        """``steps`` plies of every running game into the buffer, no update."""
        key, play_key = jax.random.split(state.key)
        rows, envs, plies, _, _ = self.play(algo, state, play_key)
        return state.replace(key=key, envs=envs, plies=plies,
                             buffer=rb.add(state.buffer, rows, jnp.ones(rows.action.shape, jnp.bool_)))

    def iteration(self, algo, state: StreamDQNState, _, updates: int | None = None):
        """``steps`` plies into the buffer, then ``updates`` updates once it holds ``learning_starts``."""
        cfg = self.cfg
        updates = updates or cfg.updates_per_iteration
        key, play_key, update_key = jax.random.split(state.key, 3)
        rows, envs, plies, finished, lengths = self.play(algo, state, play_key)
        state = state.replace(key=key, envs=envs, plies=plies, episodes=state.episodes + finished,
                              buffer=rb.add(state.buffer, rows, jnp.ones(rows.action.shape, jnp.bool_)))
        ready = state.buffer.size >= cfg.learning_starts
        names = {k: v for k, v in METRICS.items() if k != "td_loss" and k != "value_loss" or algo.tower}

        def step(s, k):
            s, m = algo.update(s, k)
            return s, {names[k]: v for k, v in m.items() if k in names}

        def learn(s):
            return jax.lax.scan(step, s, jax.random.split(update_key, updates))

        def wait(s):
            return s, {k: jnp.zeros(updates) for k in names.values()}

        state, m = jax.lax.cond(ready, learn, wait, state)
        metrics = {k: v.mean() for k, v in m.items()}
        metrics.update({"selfplay/finished": finished.astype(jnp.float32),
                        "selfplay/length_sum": lengths.astype(jnp.float32), "train/learning": ready.astype(jnp.float32)})
        return state, metrics

    def chunk(self, algo, state: StreamDQNState, units: tuple[int, int] | None = None):
        """The iterations of ``eval_updates`` updates, or ``units = (iterations, rest)``."""
        whole, rest = divmod(self.eval_updates, self.update_step) if units is None else units
        last = partial(self.iteration, algo, updates=rest) if rest else None
        state, m = blocks.run(state, whole, partial(self.iteration, algo), last)
        finished, length_sum = m.pop("selfplay/finished").sum(), m.pop("selfplay/length_sum").sum()
        learning = m.pop("train/learning")
        metrics = {k: (v * learning).sum() / jnp.maximum(learning.sum(), 1.0) for k, v in m.items()}
        # the mean length of the games that ended in this chunk; NaN when none did (long games, a short chunk)
        metrics["selfplay/length"] = jnp.where(finished > 0, length_sum / jnp.maximum(finished, 1.0), jnp.nan)
        metrics["selfplay/episodes"] = state.episodes.astype(jnp.float32)
        metrics["selfplay/epsilon"] = algo.behaviour_epsilon(state)
        metrics["buffer/size"] = state.buffer.size.astype(jnp.float32)
        return state, metrics
