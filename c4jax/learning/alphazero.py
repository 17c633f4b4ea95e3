"""AlphaZero on mctx for any game (design.md §8): one jitted chunk of search-guided self-play and updates.

An iteration plays ``games`` self-play games with a batched search guided by the current network,
stores every position (and its images under the kit's symmetries) with the search policy and the
outcome ``z`` for the player to move (mixed with the root value by ``value_q_weight``) in a replay
buffer, then makes ``updates_per_iteration`` Adam steps on it. A chunk is the iterations between
two evaluations of the host loop (:mod:`c4jax.learning.loop`).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct
from jax import Array

from c4jax.agents import arena
from c4jax.agents import search as mcts
from c4jax.agents.network_search import AlphaZeroAgent, evaluate, evaluator, search
from c4jax.games import Symmetry, kit_of
from c4jax.games import base as games
from c4jax.io.devices import shard_batch
from c4jax.learning import buffer as rb
from c4jax.learning import blocks, config, dedup
from c4jax.learning.algorithm import Algorithm
from c4jax.learning.settings.alphazero import AlphaZeroConfig as AlphaZeroConfig
from c4jax.learning.optim import apply_gradients, make_optimizer
from c4jax.learning.train_state import TrainState
from c4jax.nets import tower as towers


@struct.dataclass
class Sample:
    board: Array  # the observation (game.observation_shape), for its player to move
    policy: Array  # float32[num_actions]: the search's improved policy (0 on illegal actions)
    value: Array  # float32[]: the game's outcome for the player to move (+1 / 0 / -1)


@struct.dataclass
class ReplySample(Sample):
    """A :class:`Sample` with the reply head's target (``reply_weight`` > 0)."""

    reply: Array  # float32[num_actions]: the opponent's search policy at the next ply (all 0: none)


def reply_targets(policy: Array, live: Array, player: Array) -> Array:
    """float32[T, ..., A]: at each ply the next ply's policy target where that ply is live and the other
    player moves, else 0. ``policy[T, ..., A]``, ``live`` bool[T, ...], ``player[T, ...]`` are ply-major."""
    following = lambda x: jnp.concatenate([x[1:], jnp.zeros_like(x[:1])])  # noqa: E731  ply t -> t + 1
    has_reply = following(live) & (following(player) != player)
    return jnp.where(has_reply[..., None], following(policy), 0.0)


@struct.dataclass
class AlphaZeroState(TrainState):
    buffer: rb.Buffer  # replay buffer of Samples
    ema: Any = None  # the moving average of params (``ema_decay`` > 0), else None


def selfplay(params, key: Array, states, cfg: AlphaZeroConfig, game) -> tuple[Sample, Array, Any, Array]:
    """Play the [B] ``states`` of ``game`` to the end (at most T = ``game.max_steps`` plies) with search.

    Returns ``(samples [B, T]`` (a :class:`ReplySample` with ``reply_weight``), ``valid`` bool[B, T],
    the final states, each player's total reward float32[B, 2])``; a game unfinished after T plies is a
    draw. The loop stops once every game is over. A reply head in ``params`` is ignored.
    """
    params = towers.without_reply_head(params)
    plies = game.max_steps
    batch = states.terminated.shape[0]
    keys = jax.random.split(key, plies)
    obs = jax.vmap(game.observe)(states)
    record = (jnp.zeros((plies,) + obs.shape, obs.dtype), jnp.zeros((plies, batch, game.num_actions), jnp.float32),
              jnp.zeros((plies, batch), jnp.bool_), jnp.zeros((plies, batch), states.current_player.dtype),
              jnp.zeros((plies, batch), jnp.float32))

    def _cond(carry):
        ply, state, _, _ = carry
        return (ply < plies) & ~jnp.all(games.done(state))

    def _search(state, key, num_simulations):
        if cfg.solve:  # the project's own PUCT search, backing up proven wins and losses
            keys = jax.random.split(mcts.typed_keys(key), state.terminated.shape[0])
            out = mcts.run(evaluator(cfg.width, cfg.tower, game), params, state, keys, num_simulations, game=game,
                           rule="puct", dirichlet_fraction=cfg.dirichlet_fraction,
                           dirichlet_alpha=cfg.dirichlet_alpha, solve=True)
            return mcts.best_column(out, state.legal_action_mask), out.visit_probs, out.root_value
        out = search(params, state, key, num_simulations=num_simulations, width=cfg.width,
                     tower=cfg.tower, method=cfg.method, max_considered=cfg.max_considered,
                     dirichlet_alpha=cfg.dirichlet_alpha, dirichlet_fraction=cfg.dirichlet_fraction, game=game)
        tree = out.search_tree
        return out.action, out.action_weights, tree.node_values[:, tree.ROOT_INDEX]

    def _step(carry):
        ply, state, returns, record = carry
        search_key, pick_key = jax.random.split(keys[ply])
        if cfg.playout_cap:  # one draw per ply: a full search (policy target) or a cheap one (none)
            full = jax.random.uniform(jax.random.fold_in(keys[ply], 1)) < cfg.full_search_frac
            action, weights, root_value = jax.lax.cond(
                full, lambda: _search(state, search_key, cfg.num_simulations),
                lambda: _search(state, search_key, cfg.cheap_simulations))
            target = jnp.where(full, weights, 0.0)
        else:
            action, weights, root_value = _search(state, search_key, cfg.num_simulations)
            target = weights
        sampled = jax.random.categorical(pick_key, jnp.log(jnp.maximum(weights, 1e-30)))
        action = jnp.where(ply < cfg.temperature_moves, sampled, action)
        live = ~games.done(state)
        row = (jax.vmap(game.observe)(state), target, live, state.current_player, root_value)
        record = jax.tree.map(lambda r, x: r.at[ply].set(x), record, row)
        new = jax.vmap(game.step)(state, action.astype(jnp.int32))
        return ply + 1, new, returns + jnp.where(live[:, None], new.rewards, 0.0), record

    start = (jnp.int32(0), states, jnp.zeros((batch, 2), jnp.float32), record)
    _, final, returns, (boards, policies, valid, player, root_values) = jax.lax.while_loop(_cond, _step, start)
    # z: the outcome of the player to move at each ply
    z = jnp.take_along_axis(returns[None, :, :], player[..., None].astype(jnp.int32), axis=-1)[..., 0]
    value = z.astype(jnp.float32)
    if cfg.value_q_weight > 0:  # the search's root value (for the same player) mixed in
        value = (1.0 - cfg.value_q_weight) * value + cfg.value_q_weight * root_values
    samples = Sample(board=boards, policy=policies, value=value)
    if cfg.reply_head:
        samples = ReplySample(board=boards, policy=policies, value=value,
                              reply=reply_targets(policies, valid, player))
    swap = lambda x: jnp.swapaxes(x, 0, 1)  # noqa: E731  [T, B, ...] -> [B, T, ...]
    return jax.tree.map(swap, samples), swap(valid), final, returns


def with_symmetries(samples: Sample, valid: Array, symmetries: tuple[Symmetry, ...]) -> tuple[Sample, Array]:
    """Flat rows ``[(1 + S) N]``: the samples ``[B, T]``, then their images under each of the S
    ``symmetries`` (a game kit's: boards, policies and reply targets mapped)."""
    flat = jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), samples)
    if not symmetries:
        return flat, valid.reshape(-1)
    images = []
    for sym in symmetries:
        image = flat.replace(board=sym.observation(flat.board), policy=sym.policy(flat.policy))
        if isinstance(flat, ReplySample):
            image = image.replace(reply=sym.policy(flat.reply))
        images.append(image)
    rows = jax.tree.map(lambda *xs: jnp.concatenate(xs), flat, *images)
    return rows, jnp.concatenate([valid.reshape(-1)] * (1 + len(symmetries)))


def target_rows_cross_entropy(logits: Array, target: Array) -> Array:
    """The cross-entropy of ``logits`` to ``target`` (both [N, A]), the mean over the rows whose target
    is not all zero (0 when none is)."""
    cross_entropy = -jnp.sum(target * jax.nn.log_softmax(logits, axis=-1), axis=-1)
    return cross_entropy.sum() / jnp.maximum((target.sum(axis=-1) > 0).sum(), 1)


def loss_fn(params, batch: Sample, *, width: int, value_weight: float,
            game, tower: tuple[int, ...] = (), policy_rows: bool = False,
            reply_weight: float = 0.0) -> tuple[Array, dict]:
    """``(loss, metrics)``: cross-entropy to the search policy + ``value_weight`` × (tanh(value) − z)²,
    plus ``reply_weight`` × the reply head's cross-entropy (``batch`` a :class:`ReplySample`).
    ``policy_rows``: the policy term averages only the rows with a policy target (playout cap)."""
    outputs = evaluate(params, batch.board, width, tower, game=game, reply_head=reply_weight > 0)
    logits, value = outputs[:2]
    if policy_rows:
        policy_loss = target_rows_cross_entropy(logits, batch.policy)
    else:
        policy_loss = -jnp.sum(batch.policy * jax.nn.log_softmax(logits, axis=-1), axis=-1).mean()
    value_loss = jnp.mean((value - batch.value) ** 2)
    loss, metrics = policy_loss + value_weight * value_loss, {"train/policy_loss": policy_loss,
                                                              "train/value_loss": value_loss}
    if reply_weight > 0:
        reply_loss = target_rows_cross_entropy(outputs[2], batch.reply)
        loss, metrics = loss + reply_weight * reply_loss, {**metrics, "train/reply_loss": reply_loss}
    return loss, metrics


class AlphaZero(Algorithm):
    """AlphaZero as an :class:`~c4jax.learning.algorithm.Algorithm` (a CNET, or with ``tower`` a residual tower)."""

    name = "alphazero"
    heads = "two"
    output = "policy"
    default_mode = "det"

    batch_fields = tuple(f"buffer.{f}" for f in rb.BATCH_FIELDS)  # the replay storage, split over devices

    def __init__(self, cfg: AlphaZeroConfig, game, freeze_conv: bool = False):
        cfg = config.settle(cfg)
        games.check_game(game)
        cfg.check_game(game)
        self.cfg, self.game = cfg, game
        self.batch_sizes = {"--games": cfg.games, "--batch-size": cfg.batch_size, "--buffer-size": cfg.buffer_size}
        self.tx = make_optimizer(cfg.learning_rate_schedule, cfg.weight_decay, freeze_conv)
        self.chunk = jax.jit(self._chunk)
        self.compile_key = (type(self), cfg, freeze_conv, game)
        self.update_step = cfg.updates_per_iteration
        self.eval_updates = cfg.eval_updates
        self.agent_meta = {"search": {"simulations": cfg.play_simulations, "solve": cfg.play_solve}}
        if cfg.tower:
            if freeze_conv:
                raise ValueError("--freeze-conv freezes a CNET's convolutions: the residual tower has none")
            self.network_meta = {"tower": list(cfg.tower)}  # saved with the network's width and heads

    def fresh_params(self, key: Array):
        """The residual tower's initial parameters, or ``None`` for a CNET (the loop makes it)."""
        return towers.init_params(key, tower=self.cfg.tower, game=self.game) if self.cfg.tower else None

    def agent_of(self, params, label: str, sampled: bool = False, symmetric: bool = False, *,
                 width: int | None = None) -> AlphaZeroAgent:
        """The evaluated and saved agent: search with ``eval_simulations``."""
        del symmetric, width  # the search plays the position as it is
        return AlphaZeroAgent(params=towers.without_reply_head(params), label=label, width=self.cfg.width,
                              tower=self.cfg.tower, num_simulations=self.cfg.eval_simulations,
                              deterministic=not sampled, game=self.game)

    def init(self, key: Array, params) -> AlphaZeroState:
        """The training state from ``params``; with ``reply_weight`` a fresh reply head (from ``key``) is added."""
        obs = self.game.observe(self.game.init(jax.random.key(0)))
        example = Sample(board=jnp.zeros(obs.shape, obs.dtype), policy=jnp.zeros(self.game.num_actions, jnp.float32),
                         value=jnp.float32(0))
        if self.cfg.reply_head:
            example = ReplySample(board=example.board, policy=example.policy, value=example.value,
                                  reply=example.policy)
            params = self._with_reply_head(params, jax.random.fold_in(key, 1))
        ema = params if self.cfg.ema_decay > 0 else None
        return AlphaZeroState.create(params, self.tx, key, buffer=rb.init(example, self.cfg.buffer_size), ema=ema)

    def _with_reply_head(self, params, key: Array):
        fresh = towers.init_params(key, self.game, self.cfg.width, self.cfg.tower, reply_head=True)
        return {**params, towers.REPLY: fresh[towers.REPLY]}

    def playing_params(self, state: AlphaZeroState):
        """The moving average of the weights with ``ema_decay``, else the trained weights."""
        return state.params if state.ema is None else state.ema

    def saved_params(self, params):
        """``params`` without the reply head."""
        return towers.without_reply_head(params)

    def _starts(self, key: Array):
        cfg = self.cfg
        random_start = kit_of(self.game).random_start
        if random_start is None:  # the game's own start positions (pgx: who moves first is drawn)
            return shard_batch(jax.vmap(self.game.init)(jax.random.split(key, cfg.games)))
        pick_key, start_key = jax.random.split(key)
        random = jax.vmap(random_start)(jax.random.split(start_key, cfg.games))
        empty = arena.initial_states(cfg.games, self.game)
        use_random = jax.random.uniform(pick_key, (cfg.games,)) < cfg.random_start_frac
        return shard_batch(jax.tree.map(lambda r, e: jnp.where(use_random.reshape((-1,) + (1,) * (r.ndim - 1)), r, e),
                                        random, empty))

    def _update(self, state: AlphaZeroState, key: Array):
        cfg = self.cfg
        batch = rb.sample(state.buffer, key, cfg.batch_size)
        (loss, aux), grads = jax.value_and_grad(loss_fn, has_aux=True)(
            state.params, batch, width=cfg.width, value_weight=cfg.value_weight, tower=cfg.tower, game=self.game,
            policy_rows=cfg.playout_cap, reply_weight=cfg.reply_weight)
        params, opt_state = apply_gradients(self.tx, state.params, state.opt_state, grads)
        state = state.replace(params=params, opt_state=opt_state, updates=state.updates + 1)
        if state.ema is not None:
            d = cfg.ema_decay
            state = state.replace(ema=jax.tree.map(lambda e, p: d * e + (1.0 - d) * p, state.ema, params))
        return state, {"train/loss": loss, **aux}

    def collect(self, state: AlphaZeroState) -> AlphaZeroState:
        """One iteration's self-play games (mirrors included) into the buffer, no update."""
        key, start_key, play_key = jax.random.split(state.key, 3)
        samples, valid, _, _ = selfplay(state.params, play_key, self._starts(start_key), self.cfg, self.game)
        rows, row_valid = with_symmetries(samples, valid, kit_of(self.game).symmetries)
        return state.replace(buffer=rb.add(state.buffer, rows, row_valid), key=key)

    def _iteration(self, state: AlphaZeroState, _, updates: int | None = None):
        """One self-play batch into the buffer, then ``updates`` Adam steps (default ``updates_per_iteration``)."""
        cfg = self.cfg
        key, start_key, play_key, update_key = jax.random.split(state.key, 4)
        samples, valid, _, returns = selfplay(state.params, play_key, self._starts(start_key), cfg, self.game)
        rows, row_valid = with_symmetries(samples, valid, kit_of(self.game).symmetries)
        if cfg.merge_repeats:
            copies = row_valid.sum(dtype=jnp.float32)
            rows, row_valid = dedup.merge_repeats(rows, row_valid)
            distinct_share = row_valid.sum(dtype=jnp.float32) / jnp.maximum(copies, 1.0)
        state = state.replace(buffer=rb.add(state.buffer, rows, row_valid), key=key,
                              episodes=state.episodes + cfg.games)
        state, m = jax.lax.scan(self._update, state, jax.random.split(update_key, updates or cfg.updates_per_iteration))
        lengths = valid.sum(axis=1).astype(jnp.float32)
        metrics = {k: v.mean() for k, v in m.items()}
        metrics.update({
            "selfplay/length": lengths.mean(),
            "selfplay/first_player_wins": (returns[:, 0] > 0).mean(dtype=jnp.float32),  # player 0
            "selfplay/draws": (returns[:, 0] == 0).mean(dtype=jnp.float32),
        })
        if cfg.merge_repeats:  # the share of the iteration's rows that were distinct positions
            metrics["selfplay/distinct_share"] = distinct_share
        return state, metrics

    def chunk_of(self, units: int):
        return jax.jit(partial(self._chunk, units=units))

    def _chunk(self, state: AlphaZeroState, units: int | None = None):
        """``eval_updates`` (or ``units``) updates: whole iterations, then a shortened one."""
        whole, rest = divmod(self.eval_updates if units is None else units, self.cfg.updates_per_iteration)
        last = partial(self._iteration, updates=rest) if rest else None
        state, metrics = blocks.run(state, whole, self._iteration, last)
        metrics = {k: v.mean() for k, v in metrics.items()}
        metrics["buffer/size"] = state.buffer.size.astype(jnp.float32)
        metrics["selfplay/episodes"] = state.episodes.astype(jnp.float32)
        return state, metrics
