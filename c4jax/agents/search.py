"""Batched Monte Carlo tree search for any game of the protocol, with the game itself as the model
(design.md §8).

:func:`run` grows B trees (:class:`c4jax.agents.search_tree.Tree`) of one simulation per node. An
**evaluator** ``evaluate(params, keys[B], states[B]) -> (prior_logits float32[B, A], value float32[B])``
scores the root and every new node, ``value`` for that node's player to move: pure MCTS's
:class:`RolloutEvaluator`, AlphaZero's :func:`c4jax.agents.network_search.evaluator` or
:class:`c4jax.agents.guided.GuidedEvaluator`. The model (:func:`recurrent_fn`) steps the game: an
edge's reward is :func:`c4jax.games.base.mover_reward`, its discount :func:`c4jax.games.base.discount`;
a finished node is worth 0; illegal actions get the prior logit ``finfo(float32).min``.

With ``solve=True`` (MCTS-Solver) each node carries a proven value for its player to move (+1 win,
-1 loss, 0 not proven; draws are never proven), backed up exactly; selection and the root's
outputs prefer proven wins and avoid proven losses.

Every node's key is ``fold_in(parent_key, 1 + action)`` from its board's root key, so the search of
a board depends only on that board and its root key, whatever the batch. Every entry point takes
typed keys (``jax.random.key``) or legacy ``uint32[..., 2]`` ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable

import jax
import jax.numpy as jnp
import mctx
import numpy as np
from flax import struct
from jax import Array

from c4jax import games as game_registry
from c4jax.agents.policy import masked_logits
from c4jax.agents.search_tree import (NOISE_SALT, PB_C_BASE, PB_C_INIT, ROOT, STEP_SALT, Tree, edge_proven, grow,
                                      new_tree, selection)
from c4jax.games import base as games

# The most simulations per move of every search (pure MCTS and AlphaZero's network-guided one): the
# tree holds batch * (N + 1) nodes; more does not fit a CPU's memory usefully.
MAX_SIMULATIONS = 50_000
SCORES_SEED = 0x5C0E  # root key of the searches behind ``scores`` (folded with the board)
# Pure MCTS's rule and constants, each chosen by protocol matches (docs/results/openspiel_mcts.md).
UCT_C = 0.4  # UCT's c (Q in [-1, 1]) of pure MCTS on a game whose kit sets none (GameKit.uct_c)
SOLVE = True  # MCTSAgent's default: proven values (MCTS-Solver)


def default_uct_c(game) -> float:
    """Pure MCTS's UCT constant on ``game``: its kit's ``GameKit.uct_c``, else ``UCT_C``."""
    measured = game_registry.kit_of(game).uct_c
    return UCT_C if measured is None else measured


# a search's leaf evaluator (not the training's evaluation, c4jax.learning.training_eval):
# evaluate(params, keys[B], states[B]) -> (prior_logits float32[B, A], value float32[B])
LeafEvaluator = Callable[[Any, Array, Any], tuple[Array, Array]]


# --------------------------------------------------------------------------- keys


def typed_keys(keys) -> Array:
    """``keys`` as typed PRNG keys: typed keys unchanged, legacy raw keys (``jax.random.PRNGKey``,
    ``uint32[..., 2]`` with the default threefry implementation, or ``split`` of one) wrapped as
    the same keys of the default implementation."""
    dtype = getattr(keys, "dtype", None)
    if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
        return keys
    data = jnp.asarray(keys)
    if data.dtype != jnp.uint32 or data.ndim < 1:
        raise TypeError(f"expected typed PRNG keys (jax.random.key) or legacy uint32 key data "
                        f"(jax.random.PRNGKey), got {data.dtype}{list(data.shape)}")
    return jax.random.wrap_key_data(data)


def _fold(keys: Array, data) -> Array:
    """Per-board ``fold_in``: typed keys [B], uint32/int32 data [B] (or one value for all)."""
    data = jnp.broadcast_to(jnp.asarray(data), keys.shape)
    return jax.vmap(jax.random.fold_in)(keys, data)


# --------------------------------------------------------------------------- evaluators


_PICK_ROW = 16  # actions per row of the two-level pick


def _pick_legal(x: Array, legal: Array) -> Array:
    """int32[]: the k-th legal action with k = ((x >> 16) * n_legal) >> 16 (uniform up to 2**-16).

    Over more than ``2 * _PICK_ROW`` actions it is found in two levels (row, then place in the row):
    XLA:CPU's cumsum costs the square of its length."""
    n_legal = legal.sum(dtype=jnp.uint32)
    k = ((x >> 16) * n_legal) >> 16
    n = legal.shape[-1]
    if n <= 2 * _PICK_ROW:
        return jnp.argmax(jnp.cumsum(legal, dtype=jnp.uint32) > k).astype(jnp.int32)
    rows = -(-n // _PICK_ROW)
    grid = jnp.pad(legal.astype(jnp.uint32), (0, rows * _PICK_ROW - n)).reshape(rows, _PICK_ROW)
    count = grid.sum(-1)
    before = jnp.cumsum(count) - count  # legal actions in the rows above each row
    row = jnp.argmax(before + count > k)
    return (row * _PICK_ROW + jnp.argmax(jnp.cumsum(grid[row]) > k - before[row])).astype(jnp.int32)


def random_playout(game, state, key: Array) -> Array:
    """float32[]: the sum of the rewards of ``state``'s player to move over one uniformly random
    game from ``state`` (+1 / 0 / -1 in Connect Four); 0 for a finished state. One state and key;
    vmap it for a batch."""
    key = typed_keys(key)
    bits = jax.random.bits(key, (game.max_steps,), jnp.uint32)
    chance = jax.random.fold_in(key, STEP_SALT)
    player = state.current_player

    def body(carry):
        s, i, total = carry
        s = game.step(s, _pick_legal(bits[i], s.legal_action_mask), jax.random.fold_in(chance, i))
        return s, i + 1, total + s.rewards[player]

    def going(carry):
        s, i, _ = carry
        return ~games.done(s) & (i < game.max_steps)

    _, _, total = jax.lax.while_loop(going, body, (state, jnp.int32(0), jnp.float32(0.0)))
    return jnp.where(games.done(state), 0.0, total).astype(jnp.float32)


@dataclass(frozen=True)
class RolloutEvaluator:
    """Pure MCTS's evaluator for ``game``: uniform prior logits (masked later) and one
    :func:`random_playout` per node. Hashable, so it can be a static argument of ``jit``."""

    game: Any

    def __call__(self, params, keys: Array, states) -> tuple[Array, Array]:
        del params
        value = jax.vmap(partial(random_playout, self.game))(states, keys)
        return jnp.zeros(states.legal_action_mask.shape, jnp.float32), value


# --------------------------------------------------------------------------- the model


def recurrent_fn(evaluate: LeafEvaluator, game):
    """The game as a search model, in mctx's ``recurrent_fn`` form ``(params, rng_key, action[B],
    embedding) -> (mctx.RecurrentFnOutput, embedding)``; embeddings are ``(states[B], key data[B])``
    and ``rng_key`` is ignored (per-node keys)."""

    def model(params, rng_key, action, embedding):
        del rng_key  # per-node keys instead (see the module docstring)
        state, key_data = embedding
        child_keys = _fold(jax.random.wrap_key_data(key_data), action + 1)
        new = jax.vmap(game.step)(state, action, _fold(child_keys, STEP_SALT))
        logits, value = evaluate(params, _fold(child_keys, jnp.zeros_like(action)), new)
        reward = games.mover_reward(state, new)  # -0.0 for a player whose reward is a negated 0 ...
        out = mctx.RecurrentFnOutput(
            reward=jnp.where(reward == 0.0, 0.0, reward),  # ... as +0.0: PUCT's min / max see one zero
            discount=games.discount(state, new),
            prior_logits=masked_logits(logits, new.legal_action_mask),
            value=jnp.where(games.done(new), 0.0, value).astype(jnp.float32),
        )
        return out, (new, jax.random.key_data(child_keys))

    return model


# --------------------------------------------------------------------------- the search


@struct.dataclass
class SearchOutput:
    """Root statistics of B searches (every array has a leading B axis; A = actions)."""

    visit_counts: Array  # int32[B, A]: root visits of each action (0 for illegal ones)
    visit_probs: Array  # float32[B, A]: visit_counts / their sum (all 0 for a finished state)
    qvalues: Array  # float32[B, A]: reward + discount * child value, for the player to move (0 if unvisited)
    root_value: Array  # float32[B]: the root's mean backed-up value (its proven value if proven), for the player to move
    tree: Tree  # the whole tree (embeddings: (states, key data))
    proven: Array  # float32[B, A]: the root edges' proven values (edge_proven; all 0 without solve)


def _dirichlet_logits(keys: Array, logits: Array, legal: Array, fraction: float, alpha: float) -> Array:
    """Root prior mixed with Dirichlet(alpha) noise over the legal actions, as logits."""
    noise = jax.vmap(lambda k: jax.random.dirichlet(k, jnp.full((legal.shape[-1],), alpha)))(keys)
    noise = jnp.where(legal, noise, 0.0)
    noise = noise / jnp.maximum(noise.sum(-1, keepdims=True), 1e-30)
    probs = jax.nn.softmax(masked_logits(logits, legal), axis=-1)
    mixed = (1.0 - fraction) * probs + fraction * noise
    return jnp.log(jnp.maximum(mixed, jnp.finfo(jnp.float32).tiny))


def run(evaluate: LeafEvaluator, params, states, keys: Array, num_simulations: int, *, game,
        rule: str = "puct", pb_c_init: float = PB_C_INIT, pb_c_base: float = PB_C_BASE, uct_c: float = UCT_C,
        dirichlet_fraction: float = 0.0, dirichlet_alpha: float = 0.3, solve: bool = False) -> SearchOutput:
    """``num_simulations`` MCTS simulations from each of B states of ``game`` (pure; jit it).

    Args:
      evaluate, params: the evaluator and its parameters (``None`` for pure MCTS).
      states, keys: the roots [B] of ``game`` (static) and their keys; finished states get no visits.
      num_simulations: simulations per root (a static int); the children's visits sum to it.
      rule: ``"puct"`` (mctx's MuZero rule) or ``"uct"`` (every legal action once, then
        ``Q + c * sqrt(ln N / n)``; the prior only masks).
      pb_c_init, pb_c_base: PUCT constants; uct_c: the UCT constant (Q in [-1, 1]).
      dirichlet_fraction, dirichlet_alpha: root noise (0: none, the play-time setting).
      solve: back up proven wins and losses (static).

    Raises ValueError for an unknown ``rule`` or ``num_simulations`` outside 1..MAX_SIMULATIONS.
    """
    if rule not in ("puct", "uct"):
        raise ValueError(f"rule must be 'puct' or 'uct', got {rule!r}")
    if isinstance(num_simulations, bool) or not isinstance(num_simulations, (int, np.integer)) \
            or not 1 <= num_simulations <= MAX_SIMULATIONS:
        raise ValueError(f"num_simulations must be an int in 1..{MAX_SIMULATIONS}, got {num_simulations!r}")
    games.check_game(game)
    keys = typed_keys(keys)
    legal = states.legal_action_mask
    logits, value = evaluate(params, _fold(keys, jnp.uint32(0)), states)
    if dirichlet_fraction > 0.0:
        noise_keys = _fold(keys, jnp.uint32(NOISE_SALT - 1))
        logits = _dirichlet_logits(noise_keys, logits, legal, dirichlet_fraction, dirichlet_alpha)
    tree = new_tree(masked_logits(logits, legal), jnp.where(games.done(states), 0.0, value).astype(jnp.float32),
                     (states, jax.random.key_data(keys)), int(num_simulations), ~legal)
    solve = bool(solve)
    select = selection(rule, pb_c_init if rule == "puct" else uct_c, pb_c_base, solve)
    tree = grow(params, tree, recurrent_fn(evaluate, game), select, int(num_simulations), solve)
    counts = jnp.where(legal, tree.children_visits[:, ROOT], 0)
    roots = jnp.full(legal.shape[:1], ROOT, jnp.int32)
    proven = jnp.where(legal, edge_proven(tree, roots), 0.0) if solve else jnp.zeros(legal.shape, jnp.float32)
    shares = solved_counts(counts, proven, legal)
    total = shares.sum(-1, keepdims=True)
    probs = jnp.where(total > 0, shares / jnp.maximum(total, 1), 0.0).astype(jnp.float32)
    qvalues = jnp.where(proven != 0.0, proven, tree.qvalues(roots))
    root_value = jnp.where(tree.proven[:, ROOT] != 0.0, tree.proven[:, ROOT], tree.node_values[:, ROOT])
    return SearchOutput(visit_counts=counts.astype(jnp.int32), visit_probs=probs,
                        qvalues=jnp.where(counts > 0, qvalues, 0.0), root_value=root_value, tree=tree,
                        proven=proven)


def _solved_candidates(proven: Array, legal: Array) -> Array:
    """bool[B, A]: the root actions a move may take: the proven wins if any, else the legal
    actions not proven lost if any, else every legal action."""
    win = legal & (proven > 0.0)
    alive = legal & ~(proven < 0.0)
    return jnp.where(win.any(-1, keepdims=True), win, jnp.where(alive.any(-1, keepdims=True), alive, legal))


def solved_counts(counts: Array, proven: Array, legal: Array) -> Array:
    """int32[B, A]: the root visit counts of the actions a move may take (:func:`_solved_candidates`),
    0 elsewhere (1 each when none of them was visited); with no proven edge, the legal counts."""
    take = _solved_candidates(proven, legal)
    kept = jnp.where(take, counts, 0).astype(jnp.int32)
    unvisited = (take & (counts.sum(-1, keepdims=True) > 0)).astype(jnp.int32)
    return jnp.where(kept.sum(-1, keepdims=True) > 0, kept, unvisited)


def best_column(out: SearchOutput, legal: Array) -> Array:
    """int32[B]: the most visited legal action; ties: the higher Q, then the lower action. A
    proven win is taken, and a proven loss only when every legal action is proven lost (the
    most visited among the proven wins, else among the actions not proven lost)."""
    take = _solved_candidates(out.proven, legal)
    counts = jnp.where(take, out.visit_counts, -1)
    top = counts == counts.max(-1, keepdims=True)
    return jnp.argmax(jnp.where(top & take, out.qvalues, -jnp.inf), axis=-1).astype(jnp.int32)


best_action = best_column  # the name for games whose actions are not columns


def _observation_words(obs: Array) -> Array:
    """uint32[n]: the bits of an observation (bool and integer entries as int32, floats as float32)."""
    obs = jnp.ravel(obs)
    if jnp.issubdtype(obs.dtype, jnp.floating):
        return jax.lax.bitcast_convert_type(obs.astype(jnp.float32), jnp.uint32)
    return jax.lax.bitcast_convert_type(obs.astype(jnp.int32), jnp.uint32)


def board_keys(states, seed: int = SCORES_SEED, *, game) -> Array:
    """Typed keys [B], each a function of its position only: ``key(seed)`` folded with the kit's
    ``GameKit.position_words``, else with every uint32 word of ``game.observe(state)``."""
    words_of = game_registry.kit_of(game).position_words
    if words_of is not None:
        def one(s):
            k = jax.random.key(seed)
            for word in words_of(s):
                k = jax.random.fold_in(k, word)
            return k
    else:
        def one(s):
            words = _observation_words(game.observe(s))
            return jax.lax.fori_loop(0, words.shape[0], lambda i, k: jax.random.fold_in(k, words[i]),
                                     jax.random.key(seed))

    return jax.vmap(one)(states)


def select_action(out: SearchOutput, keys: Array, legal: Array, temperature: float = 1.0) -> Array:
    """int32[B]: an action sampled with ``visits ** (1 / temperature)`` over the actions with
    ``visit_probs`` > 0, or :func:`best_column` for ``temperature == 0`` and finished states."""
    best = best_column(out, legal)
    if temperature == 0:
        return best
    pick_keys = _fold(typed_keys(keys), jnp.uint32(NOISE_SALT - 2))
    weight = jnp.where(out.visit_probs > 0, jnp.maximum(out.visit_counts, 1), 0)
    logits = jnp.where(weight > 0, jnp.log(weight.astype(jnp.float32)), -jnp.inf)
    logits = jnp.where(legal.any(-1, keepdims=True), logits / temperature, 0.0)
    sampled = jax.vmap(jax.random.categorical)(pick_keys, logits)
    return jnp.where(out.visit_counts.sum(-1) > 0, sampled, best).astype(jnp.int32)
