"""Batched Monte Carlo tree search for any game of the protocol, with the game itself as the model
(design.md §8).

The whole search is ours: :func:`run` grows B trees (one per root state) in fixed-size arrays
(:class:`c4jax.agents.search_tree.Tree`), and each simulation walks down every tree to an
unexpanded edge (selection), steps the game along it and evaluates the new node (expansion),
then backs the value up the path (:func:`c4jax.agents.search_tree.backward`). mctx's public API
is used only by AlphaZero's Gumbel and PUCT policies (:mod:`c4jax.agents.network_search`), which
share this module's model, :func:`recurrent_fn`.

One search is parameterised by a **game** (:class:`c4jax.games.base.Game`) and an **evaluator**: a function ``evaluate(params, keys[B], states[B]) ->
(prior_logits[B, A], value[B])`` that scores the root and every newly expanded node
(``value`` from the point of view of that node's player to move; A = ``game.num_actions``):

- :class:`RolloutEvaluator` (pure MCTS, ``RolloutEvaluator(game)``): uniform prior
  over the legal actions, value = the result of ONE uniformly random playout to the end of the
  game (+1 / 0 / -1 for Connect Four, the sum of the player's rewards in general);
- :func:`c4jax.agents.network_search.evaluator` (AlphaZero on Connect Four): prior = the policy head's
  logits, value = the value head of ``CNet(heads="two")`` on the node's public board;
- :class:`c4jax.agents.guided.GuidedEvaluator` (any trained network at play time, ``ppo@200``):
  prior = the network's policy (a Q network's ``softmax(Q / tau)``), value = one random playout.

The model
---------
Tree nodes embed ``(state, key)``: the real game state and a per-node PRNG key.
``recurrent_fn`` steps the game (``game.step``); the edge's reward is the mover's reward for that
step (:func:`c4jax.games.base.mover_reward`: +1 when the move wins, -1 when it loses, 0 otherwise
in Connect Four), its discount is :func:`c4jax.games.base.discount`: -1 when the player to move
changes (the child node belongs to the opponent, so its value changes sign), +1 when the same
player moves again (a multi-step turn, read from ``current_player``, never assumed to alternate)
and 0 when the game is over. A finished node's value is 0 (its result is already in the
reward). Edges out of a finished node have reward 0 and discount 0, so its value stays the
result of the move into it. Illegal actions get the prior logit ``finfo(float32).min``
(probability 0, never NaN) in every node and are excluded at the root (``root_invalid_actions``).

Selection (``rule``): ``"puct"`` is the MuZero PUCT rule (the rule of ``mctx.muzero_policy``:
``Q`` normalised to [0, 1] by the parent's value and its children's Q, plus ``c(N) * P *
sqrt(N) / (1 + n)``), the rule for a network prior; ``"uct"`` tries every legal action once,
then maximises ``Q + c * sqrt(ln N / n)``, the rule of pure MCTS (``MCTSAgent``'s default, with
c = ``default_uct_c(game)``: the game kit's ``uct_c``, else 0.4). A simulation descends until it
picks an edge that has no node yet; the tree of N simulations has N + 1 nodes (node i + 1 is
created by simulation i), so no depth cap is needed.
No Dirichlet noise at play time (``dirichlet_fraction`` > 0 adds it at the root, for self-play).

Proven values (``solve=True``, MCTS-Solver, Winands, Björnsson and Saito 2008)
------------------------------------------------------------------------------
Each node also carries a proven value (``Tree.proven``) for its player to move: +1 a proven
win, -1 a proven loss, 0 not proven (draws are never proven: a move that ends the game in a draw
has the exact Q 0 anyway). An edge's proven value for the mover (:func:`edge_proven`) is the
sign of its reward when its step ends the game, else ``discount * proven`` of its child (the
game's rewards come with its final step only, as in Connect Four and Checkers, so an unfinished
step adds nothing). A node is a proven win when one of its legal edges is proven +1, a proven
loss when all of them are expanded and proven -1; :func:`~c4jax.agents.search_tree.backward` recomputes this for every
node on the path, bottom-up, and from a proven node upwards backs up its exact value instead of
the playout's. Selection plays a proven-winning edge, and a proven-losing one only when every
legal edge is lost; the root's outputs do the same (:func:`solved_counts`): its visit shares and
its most visited action are taken over the proven wins when there are any, else over the edges
not proven lost when there are any, and its Q-values are the exact values of its proven edges.
With ``solve=False`` (the default of :func:`run`) ``proven`` stays 0 and the search is the plain one.

Randomness is per board and per node
------------------------------------
Every node's key is ``fold_in(parent_key, 1 + action)`` from the root key of its board;
the node's evaluation uses ``fold_in(key, 0)``, the step into it (the chance of a game that has
any) ``fold_in(key, 2**16 - 3)`` and the selection's tie-break noise
``fold_in(key, 2**16 + visits)``. No batch-wide key is used, so the search of a board depends
only on that board and its root key: a batch gives each board exactly what a search of that
board alone would give. Every entry point takes typed keys (``jax.random.key``) or legacy
``uint32[..., 2]`` ones (``jax.random.PRNGKey``), which are the same keys (threefry) wrapped.

``c4jax.agents.search_agent.MCTSAgent`` plays the search: ``act`` / ``act_states`` sample an action from the root visit
counts (``:sto``, the default) or take the most visited one (``:det``; ties: higher Q, then the
lower action). ``scores`` / ``scores_states`` are the root visit shares, from a search whose
root key is derived from the position itself (:func:`board_keys`: for Connect Four a
``fold_in`` of its four bitboard words into ``SCORES_SEED``), so a position always gets the same
scores. ``agents.load("mcts<N>")`` builds the Connect Four agent with N simulations per move,
proven values on (``SOLVE``); ``mcts<N>nosolve`` is the same search without them.
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
                                      new_tree, selection, wrap_key)
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

    Over more than ``2 * _PICK_ROW`` actions (Checkers' 256) the k-th is found in two levels: the
    row of ``_PICK_ROW`` actions that holds it, from the rows' counts, then its place in that row.
    XLA:CPU runs a cumsum as an unfused loop whose cost grows like the square of its length, so
    one over 256 actions was most of a random playout's time; two of 16 give the same action."""
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
    """float32[]: the result of one uniformly random game from ``state`` for its player to move.

    The result is the sum of that player's rewards (``rewards[current_player]`` of ``state``)
    over the steps played, so +1 win, 0 draw, -1 loss in Connect Four, whoever moves in between
    (a player may move several times in a row); 0 for a finished state (its result belongs to
    the move into it). One ``jax.random.bits`` draw gives ``game.max_steps`` uint32 words, the
    i-th picks the i-th move among the legal actions (:func:`_pick_legal`); the step's own key
    (for a game with chance) is ``fold_in(fold_in(key, 2**16 - 3), i)``. The game is played with
    ``game.step`` in a ``lax.while_loop`` of at most ``game.max_steps`` steps (vmap it for a batch).
    """
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
    embedding) -> (mctx.RecurrentFnOutput, embedding)``: ``game.step`` along the edge, reward
    :func:`c4jax.games.base.mover_reward`, discount :func:`c4jax.games.base.discount`, and
    ``evaluate`` scoring the new node. Embeddings are ``(states[B], key data[B])`` and
    ``rng_key`` is ignored (per-node keys, see the module docstring). :func:`run` and
    AlphaZero's Gumbel and PUCT searches (:mod:`c4jax.agents.network_search`) use it."""

    def model(params, rng_key, action, embedding):
        del rng_key  # per-node keys instead (see the module docstring)
        state, key_data = embedding
        child_keys = _fold(wrap_key(key_data), action + 1)
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
      evaluate: the root and leaf evaluator (:class:`RolloutEvaluator` of the same game,
        ``network_search.evaluator`` for Connect Four).
      params: passed to ``evaluate`` (network parameters; ``None`` for pure MCTS).
      states: the roots, states [B] of ``game`` (finished states give all-zero visits).
      keys: PRNG keys [B], typed or legacy, one per root; the search of board b depends only on
        ``states[b]`` and ``keys[b]``.
      num_simulations: simulations per root (a static int >= 1); the root's visits are
        ``num_simulations + 1`` and its children's sum to ``num_simulations``.
      game: the game (:class:`c4jax.games.base.Game`, static).
      rule: ``"puct"`` (MuZero's rule, the prior matters) or ``"uct"`` (prior only masks).
      pb_c_init, pb_c_base: PUCT constants; uct_c: the UCT constant (Q in [-1, 1]).
      dirichlet_fraction, dirichlet_alpha: root noise (0: none, the play-time setting).
      solve: back up proven wins and losses (MCTS-Solver, module docstring; static).
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
    """int32[B, A]: the root visit counts that the visit shares are taken from: the counts of
    the actions a move may take (:func:`_solved_candidates`), 0 elsewhere; when those were never
    visited (a proven loss found before the other actions were tried), 1 for each of them. With
    no proven edge, the legal counts themselves."""
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
    """Typed keys [B], each a function of its position only: a ``fold_in`` into ``key(seed)`` of the
    words its kit says identify a position (``GameKit.position_words``; Connect Four: its four
    bitboard words), else of every uint32 word of ``game.observe(state)`` (what the player to move
    sees), in order."""
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
    """int32[B]: an action from the root visits: sampled with ``visits ** (1 / temperature)``
    over the actions of the visit shares (``visit_probs`` > 0: with proven values, the proven
    wins, else the actions not proven lost; key ``fold_in(keys[b], ...)``; typed or legacy
    keys), or :func:`best_column` for ``temperature == 0`` and for finished states (no visits)."""
    best = best_column(out, legal)
    if temperature == 0:
        return best
    pick_keys = _fold(typed_keys(keys), jnp.uint32(NOISE_SALT - 2))
    weight = jnp.where(out.visit_probs > 0, jnp.maximum(out.visit_counts, 1), 0)
    logits = jnp.where(weight > 0, jnp.log(weight.astype(jnp.float32)), -jnp.inf)
    logits = jnp.where(legal.any(-1, keepdims=True), logits / temperature, 0.0)
    sampled = jax.vmap(jax.random.categorical)(pick_keys, logits)
    return jnp.where(out.visit_counts.sum(-1) > 0, sampled, best).astype(jnp.int32)
