"""Monte Carlo tree search on mctx with the jitted environment as the model (design.md §8).

One batched, jittable search, :func:`run`, is parameterised by an **evaluator**: a
function ``evaluate(params, keys[B], states[B]) -> (prior_logits[B, 7], value[B])`` that
scores the root and every newly expanded node (``value`` from the point of view of that
node's player to move):

- :func:`rollout_evaluator` (pure MCTS): uniform prior over the legal columns, value =
  the result of ONE uniformly random playout to the end of the game (+1 / 0 / -1);
- :func:`c4jax.agents.alphazero.evaluator` (AlphaZero): prior = the policy head's logits,
  value = the value head of ``CNet(heads="two")`` on the node's public board.

The model
---------
Tree nodes embed ``(EnvState, key)``: the real environment state (``c4jax.games.connect_four.env``)
and a per-node PRNG key. ``recurrent_fn`` steps the environment; the edge's reward is
the mover's result (+1 when the move wins, 0 otherwise; an illegal move, which the
masking prevents, would be -1), the discount is -1 on non-terminal moves (the child node
belongs to the opponent, so its value changes sign) and 0 when the game is over, and a
finished node's value is 0 (its result is already in the reward). Edges out of a finished
node have reward 0 and discount 0, so its value stays the result of the move into it.
Illegal columns get the prior logit ``finfo(float32).min`` (probability 0, never NaN) in
every node and are excluded at the root with ``invalid_actions = ~legal_mask``.

Selection (``rule``): ``"puct"`` is mctx's PUCT (``mctx.muzero_action_selection``, the
rule of ``mctx.muzero_policy``, Q-values normalised by the parent and siblings), the rule
for a network prior; ``"uct"`` tries every legal column once, then maximises
``Q + c * sqrt(ln N / n)``, the rule of pure MCTS (``MCTSAgent``'s default: with a
uniform prior, UCT with c = 0.4 was the strongest setting measured, see ``UCT_C``). No
Dirichlet noise at play time (``dirichlet_fraction`` > 0 adds it at the root, for
self-play). The backward pass is mctx's, rewritten for the batch (:func:`_backward`).

Randomness is per board and per node
------------------------------------
Every node's key is ``fold_in(parent_key, 1 + action)`` from the root key of its board;
the node's evaluation uses ``fold_in(key, 0)`` and the selection's tie-break noise
``fold_in(key, 2**16 + visits)``. mctx's own batch-wide keys are not used, so the
search of a board depends only on that board and its root key: a batch gives each
board exactly what a search of that board alone would give.

``MCTSAgent`` plays the search: ``act`` samples a column from the root visit counts
(``:sto``, the default) or takes the most visited one (``:det``; ties: higher Q, then
the lower column). ``scores`` are the root visit shares, from a search whose root key
is derived from the board itself (``fold_in`` of its four bitboard words into
``SCORES_SEED``), so a board always gets the same scores. ``agents.load("mcts<N>")``
builds it with N simulations per move.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import mctx
import numpy as np
from flax import struct
from jax import Array
from mctx._src import action_selection as _mctx_selection  # mctx.search's building blocks
from mctx._src import search as _mctx_search

from c4jax.agents.base import AgentBase
from c4jax.agents.policy import ILLEGAL_SCORE, masked_logits
from c4jax.games import base as games
from c4jax.games.connect_four import env
from c4jax.games.connect_four.game import GAME as CONNECT_FOUR
from c4jax.games.connect_four.board import check_boards, legal_mask


COLS = env.COLS
MAX_SIMULATIONS = 50_000  # the tree holds batch * (N + 1) nodes; more does not fit a CPU's memory usefully
SCORES_SEED = 0x5C0E  # root key of the searches behind ``scores`` (folded with the board)
# Pure MCTS settings, from one 100-game protocol match each between 200-simulation searches
# (sampled moves): PUCT with a uniform prior and c_1 = 3 scored 0.58 against mctx's default
# c_1 = 1.25, while c_1 = 2 / 4.5 / 8 scored 0.46 / 0.385 / 0.30 against c_1 = 3; UCT with
# c = 0.7 scored 0.655 against PUCT c_1 = 3; against UCT c = 0.7, c = 0.4 scored 0.57 and
# c = 1.0 0.43; c = 0.25 scored 0.46 against c = 0.4.
PB_C_INIT = 3.0  # PUCT c_1 for a uniform prior
PB_C_BASE = 19652.0  # PUCT c_2
UCT_C = 0.4  # UCT's c (Q in [-1, 1]): MCTSAgent's default rule
_NOISE_SALT = 2**16  # fold_in offset of the tie-break keys (children use 1 + action)

# evaluate(params, keys[B], states[B]) -> (prior_logits float32[B, 7], value float32[B])
Evaluator = Callable[[Any, Array, env.EnvState], tuple[Array, Array]]


# --------------------------------------------------------------------------- evaluators


def _pick_legal(x: Array, legal: Array) -> Array:
    """int32[]: the k-th legal column with k = ((x >> 16) * n_legal) >> 16 (uniform up to 2**-16)."""
    n_legal = legal.sum(dtype=jnp.uint32)
    k = ((x >> 16) * n_legal) >> 16
    return jnp.argmax(jnp.cumsum(legal, dtype=jnp.uint32) > k).astype(jnp.int32)


def random_playout(state: env.EnvState, key: Array) -> Array:
    """float32[]: result of one uniformly random game from ``state`` for its player to move.

    +1 win, 0 draw, -1 loss; 0 for a finished state (its result belongs to the move into it).
    One ``jax.random.bits`` draw gives the 42 uint32 words the moves need; the game is
    played with ``env.step`` in a ``lax.while_loop`` (vmap it for a batch).
    """
    bits = jax.random.bits(key, (env.MAX_MOVES,), jnp.uint32)

    def body(carry):
        s, i = carry
        return env.step(s, _pick_legal(bits[i], s.legal_mask)), i + 1

    final, _ = jax.lax.while_loop(lambda c: ~c[0].done, body, (state, jnp.int32(0)))
    sign = jnp.where(state.first_player_to_move, 1, -1)
    return jnp.where(state.done, 0, final.winner * sign).astype(jnp.float32)


def rollout_evaluator(params, keys: Array, states: env.EnvState) -> tuple[Array, Array]:
    """Pure MCTS: uniform prior logits (masked later) and one random playout per node."""
    del params
    value = jax.vmap(random_playout)(states, keys)
    return jnp.zeros(states.legal_mask.shape, jnp.float32), value


# --------------------------------------------------------------------------- the search


@struct.dataclass
class SearchOutput:
    """Root statistics of B searches (every array has a leading B axis)."""

    visit_counts: Array  # int32[B, 7]: root visits of each column (0 for illegal ones)
    visit_probs: Array  # float32[B, 7]: visit_counts / their sum (all 0 for a finished board)
    qvalues: Array  # float32[B, 7]: reward + discount * child value, for the player to move (0 if unvisited)
    root_value: Array  # float32[B]: the root's mean backed-up value, for the player to move
    tree: mctx.Tree  # the whole mctx tree (embeddings: (EnvState, key data))


def _wrap(key_data: Array) -> Array:
    return jax.random.wrap_key_data(key_data)


def _fold(keys: Array, data: Array) -> Array:
    """Per-board ``fold_in``: typed keys [B], uint32/int32 data [B]."""
    return jax.vmap(jax.random.fold_in)(keys, data)


def _node_key(tree: mctx.Tree, node_index) -> Array:
    """The tie-break key of a node (unbatched tree), fresh at every visit."""
    node_key = _wrap(tree.embeddings[1][node_index])
    return jax.random.fold_in(node_key, _NOISE_SALT + tree.node_visits[node_index])


def _selection(rule: str, c: float, pb_c_base: float):
    """PUCT (mctx's rule) or UCT, with tie-break noise keyed by the node (module docstring)."""

    def puct(rng_key, tree: mctx.Tree, node_index, depth):
        del rng_key
        return mctx.muzero_action_selection(_node_key(tree, node_index), tree, node_index, depth, pb_c_init=c,
                                            pb_c_base=pb_c_base)

    def uct(rng_key, tree: mctx.Tree, node_index, depth):
        """Unvisited legal columns first (random order), then max Q + c * sqrt(ln N / n)."""
        del rng_key
        visits = tree.children_visits[node_index]
        prior = jax.nn.softmax(tree.children_prior_logits[node_index])
        explore = c * jnp.sqrt(jnp.log(jnp.maximum(tree.node_visits[node_index], 1)) / jnp.maximum(visits, 1))
        noise = 1e-6 * jax.random.uniform(_node_key(tree, node_index), visits.shape)
        score = jnp.where(visits == 0, 1e9, tree.qvalues(node_index) + explore) + noise
        invalid = (prior <= 0.0) | (tree.root_invalid_actions * (depth == 0) > 0)
        return jnp.argmax(jnp.where(invalid, -jnp.inf, score)).astype(jnp.int32)

    return {"puct": puct, "uct": uct}[rule]


def _backward(tree: mctx.Tree, leaf_index: Array) -> mctx.Tree:
    """mctx's backward pass (the same updates in the same order) written for the batch.

    mctx runs a ``vmap``-ed ``while_loop`` over the tree; under ``vmap`` its batched stop
    condition makes every iteration select between the old and the new tree, a copy of the
    whole tree per step up the path. Here the loop runs over the batch with one stop
    condition (any path not yet at the root) and masked scatters.
    """
    batch = leaf_index.shape[0]
    rows = jnp.arange(batch)

    def body(carry):
        tree, value, index = carry
        active = index != mctx.Tree.ROOT_INDEX
        parent = jnp.where(active, tree.parents[rows, index], 0)
        action = jnp.where(active, tree.action_from_parent[rows, index], 0)
        count = tree.node_visits[rows, parent]
        value = jnp.where(active, tree.children_rewards[rows, parent, action]
                          + tree.children_discounts[rows, parent, action] * value, value)
        old = (tree.node_values[rows, parent], tree.children_values[rows, parent, action],
               tree.children_visits[rows, parent, action])
        tree = tree.replace(
            node_values=tree.node_values.at[rows, parent].set(
                jnp.where(active, (old[0] * count + value) / (count + 1.0), old[0])),
            node_visits=tree.node_visits.at[rows, parent].set(jnp.where(active, count + 1, count)),
            children_values=tree.children_values.at[rows, parent, action].set(
                jnp.where(active, tree.node_values[rows, index], old[1])),
            children_visits=tree.children_visits.at[rows, parent, action].set(
                jnp.where(active, old[2] + 1, old[2])),
        )
        return tree, value, jnp.where(active, parent, index)

    leaf_index = leaf_index.astype(jnp.int32)
    carry = (tree, tree.node_values[rows, leaf_index], leaf_index)
    tree, _, _ = jax.lax.while_loop(lambda c: jnp.any(c[2] != mctx.Tree.ROOT_INDEX), body, carry)
    return tree


def _search(params, root: mctx.RootFnOutput, recurrent_fn, select, num_simulations: int, invalid_actions: Array,
            backward: str = "batched") -> mctx.Tree:
    """``mctx.search`` (same simulate and expand steps) with :func:`_backward` (``"batched"``)
    or mctx's own (``"mctx"``); the two give identical trees."""
    batch = root.value.shape[0]
    rows = jnp.arange(batch)
    action_selection = mctx_switch(select)
    tree = _mctx_search.instantiate_tree_from_root(root, num_simulations, root_invalid_actions=invalid_actions,
                                                   extra_data=None)
    dummy_keys = jax.random.split(jax.random.key(0), batch)  # unused: selection uses the per-node keys
    back = _backward if backward == "batched" else _mctx_search.backward

    def body(sim, tree):
        parent_index, action = _mctx_search.simulate(dummy_keys, tree, action_selection, num_simulations)
        next_index = tree.children_index[rows, parent_index, action]
        next_index = jnp.where(next_index == mctx.Tree.UNVISITED, sim + 1, next_index)
        tree = _mctx_search.expand(params, jax.random.key(0), tree, recurrent_fn, parent_index, action, next_index)
        return back(tree, next_index)

    return jax.lax.fori_loop(0, num_simulations, body, tree)


def mctx_switch(select):
    """Root / interior selection with mctx's switch (invalid root actions masked at depth 0)."""
    return _mctx_selection.switching_action_selection_wrapper(
        root_action_selection_fn=lambda k, t, i: select(k, t, i, 0),
        interior_action_selection_fn=select)


def recurrent_fn(evaluate: Evaluator, game=CONNECT_FOUR):
    """mctx's ``recurrent_fn`` with the environment as the model and ``evaluate`` scoring each new
    node; embeddings are ``(EnvState[B], key data[B])`` (see the module docstring). AlphaZero's
    Gumbel and PUCT searches (:mod:`c4jax.agents.alphazero`) use it too."""

    def recurrent_fn(params, rng_key, action, embedding):
        del rng_key  # per-node keys instead (see the module docstring)
        state, key_data = embedding
        child_keys = _fold(_wrap(key_data), action + 1)
        new = jax.vmap(game.step)(state, action)
        reward = games.mover_reward(state, new)  # +1 the mover won, -1 it lost
        discount = games.discount(state, new)  # -1 when the player to move changes, 0 at the end
        logits, value = evaluate(params, _fold(child_keys, jnp.zeros_like(action)), new)
        out = mctx.RecurrentFnOutput(
            reward=reward,
            discount=discount,
            prior_logits=masked_logits(logits, new.legal_action_mask),
            value=jnp.where(games.done(new), 0.0, value).astype(jnp.float32),
        )
        return out, (new, jax.random.key_data(child_keys))

    return recurrent_fn


def _dirichlet_logits(keys: Array, logits: Array, legal: Array, fraction: float, alpha: float) -> Array:
    """Root prior mixed with Dirichlet(alpha) noise over the legal columns, as logits."""
    noise = jax.vmap(lambda k: jax.random.dirichlet(k, jnp.full((COLS,), alpha)))(keys)
    noise = jnp.where(legal, noise, 0.0)
    noise = noise / jnp.maximum(noise.sum(-1, keepdims=True), 1e-30)
    probs = jax.nn.softmax(masked_logits(logits, legal), axis=-1)
    mixed = (1.0 - fraction) * probs + fraction * noise
    return jnp.log(jnp.maximum(mixed, jnp.finfo(jnp.float32).tiny))


def run(evaluate: Evaluator, params, states: env.EnvState, keys: Array, num_simulations: int, *,
        rule: str = "puct", pb_c_init: float = PB_C_INIT, pb_c_base: float = PB_C_BASE, uct_c: float = UCT_C,
        dirichlet_fraction: float = 0.0, dirichlet_alpha: float = 0.3, backward: str = "batched") -> SearchOutput:
    """``num_simulations`` MCTS simulations from each of B states (pure; jit it).

    Args:
      evaluate: the root and leaf evaluator (:func:`rollout_evaluator`, ``alphazero.evaluator``).
      params: passed to ``evaluate`` (network parameters; ``None`` for pure MCTS).
      states: EnvState [B], the roots (finished states give all-zero visits).
      keys: typed PRNG keys [B], one per root; the search of board b depends only on
        ``states[b]`` and ``keys[b]``.
      num_simulations: simulations per root (a static int >= 1).
      rule: ``"puct"`` (mctx's rule, the prior matters) or ``"uct"`` (prior only masks).
      pb_c_init, pb_c_base: PUCT constants; uct_c: the UCT constant (Q in [-1, 1]).
      dirichlet_fraction, dirichlet_alpha: root noise (0: none, the play-time setting).
      backward: ``"batched"`` (:func:`_backward`) or ``"mctx"`` (mctx's own; identical trees).
    """
    if rule not in ("puct", "uct") or backward not in ("batched", "mctx"):
        raise ValueError(f"rule must be 'puct' or 'uct' and backward 'batched' or 'mctx', got {rule!r}, {backward!r}")
    if not isinstance(num_simulations, (int, np.integer)) or not 1 <= num_simulations <= MAX_SIMULATIONS:
        raise ValueError(f"num_simulations must be an int in 1..{MAX_SIMULATIONS}, got {num_simulations!r}")
    legal = states.legal_mask
    logits, value = evaluate(params, _fold(keys, jnp.zeros(keys.shape, jnp.uint32)), states)
    if dirichlet_fraction > 0.0:
        noise_keys = _fold(keys, jnp.full(keys.shape, _NOISE_SALT - 1, jnp.uint32))
        logits = _dirichlet_logits(noise_keys, logits, legal, dirichlet_fraction, dirichlet_alpha)
    root = mctx.RootFnOutput(
        prior_logits=masked_logits(logits, legal),
        value=jnp.where(states.done, 0.0, value).astype(jnp.float32),
        embedding=(states, jax.random.key_data(keys)),
    )
    select = _selection(rule, pb_c_init if rule == "puct" else uct_c, pb_c_base)
    tree = _search(params, root, recurrent_fn(evaluate), select, int(num_simulations), ~legal, backward)
    root_index = jnp.zeros(legal.shape[0], jnp.int32)
    counts = jnp.where(legal, tree.children_visits[:, 0], 0)
    total = counts.sum(-1, keepdims=True)
    probs = jnp.where(total > 0, counts / jnp.maximum(total, 1), 0.0).astype(jnp.float32)
    qvalues = jax.vmap(lambda t, i: t.qvalues(i))(tree, root_index)
    return SearchOutput(visit_counts=counts.astype(jnp.int32), visit_probs=probs,
                        qvalues=jnp.where(counts > 0, qvalues, 0.0), root_value=tree.node_values[:, 0], tree=tree)


def best_column(out: SearchOutput, legal: Array) -> Array:
    """int32[B]: the most visited legal column; ties: the higher Q, then the lower column."""
    counts = jnp.where(legal, out.visit_counts, -1)
    top = counts == counts.max(-1, keepdims=True)
    return jnp.argmax(jnp.where(top & legal, out.qvalues, -jnp.inf), axis=-1).astype(jnp.int32)


def board_keys(states: env.EnvState, seed: int = SCORES_SEED) -> Array:
    """Typed keys [B], each a function of its board only (its four bitboard words)."""

    def one(s):
        k = jax.random.key(seed)
        for word in (s.cur.lo, s.cur.hi, s.opp.lo, s.opp.hi):
            k = jax.random.fold_in(k, word)
        return k

    return jax.vmap(one)(states)


def select_action(out: SearchOutput, keys: Array, legal: Array, temperature: float = 1.0) -> Array:
    """int32[B]: a column from the root visits: sampled with ``visits ** (1 / temperature)``
    (key ``fold_in(keys[b], ...)``), or :func:`best_column` for ``temperature == 0`` and for
    finished boards (no visits)."""
    best = best_column(out, legal)
    if temperature == 0:
        return best
    pick_keys = _fold(keys, jnp.full(keys.shape, _NOISE_SALT - 2, jnp.uint32))
    logits = jnp.where(out.visit_counts > 0, jnp.log(jnp.maximum(out.visit_counts, 1).astype(jnp.float32)), -jnp.inf)
    logits = jnp.where(legal.any(-1, keepdims=True), logits / temperature, 0.0)
    sampled = jax.vmap(jax.random.categorical)(pick_keys, logits)
    return jnp.where(out.visit_counts.sum(-1) > 0, sampled, best).astype(jnp.int32)


# --------------------------------------------------------------------------- the agents


class _SearchAgent(AgentBase):
    """``act`` and ``scores`` of an agent that plays its search (``search(states, keys)``)."""

    def _check_simulations(self):
        n = self.num_simulations
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_SIMULATIONS:
            raise ValueError(f"MCTS needs 1..{MAX_SIMULATIONS} simulations per move, got {n!r}")

    @property
    def stochastic(self) -> bool:
        return not self.deterministic

    def _scores(self, boards: Array) -> Array:
        states = jax.vmap(env.from_board)(boards)
        out = self.search(states, board_keys(states))
        return jnp.where(legal_mask(boards), out.visit_probs, ILLEGAL_SCORE)

    def _act(self, boards: Array, key: Array) -> Array:
        states = jax.vmap(env.from_board)(boards)
        keys = jax.random.split(key, boards.shape[0])
        out = self.search(states, keys)
        return select_action(out, keys, states.legal_mask, 0.0 if self.deterministic else 1.0)

    def search_stats(self, boards) -> tuple[Array, Array]:
        """``(shares, values)``, float32[B, 7] each, of the search behind ``scores`` (the same
        board-keyed search, so ``shares == scores(boards)``): the root visit shares (full
        columns ``-inf``) and each column's root Q-value for the player to move (-1 .. 1;
        0 where a legal column was not visited; full columns NaN). Jitted; validated as ``scores``;
        both modes share one compiled program (the search behind ``scores`` ignores the mode)."""
        boards = boards if isinstance(boards, jax.core.Tracer) else check_boards(boards, batched=True,
                                                                                  allow_finished=False)
        return _jit_search_stats(self.replace(deterministic=False), boards)


@jax.jit
def _jit_search_stats(agent: _SearchAgent, boards: Array) -> tuple[Array, Array]:
    states = jax.vmap(env.from_board)(boards)
    out, legal = agent.search(states, board_keys(states)), legal_mask(boards)
    return jnp.where(legal, out.visit_probs, ILLEGAL_SCORE), jnp.where(legal, out.qvalues, jnp.nan)


@struct.dataclass
class MCTSAgent(_SearchAgent):
    """Pure MCTS (uniform prior, random-playout values, UCT with c = ``UCT_C`` by default)
    with ``num_simulations`` per move.

    ``act``: a column sampled from the root visit counts (``deterministic=False``,
    ``:sto``) or the most visited one (``:det``). ``scores``: the root visit shares,
    full columns ``-inf``, from a search keyed by the board (see the module docstring).
    """

    num_simulations: int = struct.field(pytree_node=False, default=1000)
    deterministic: bool = struct.field(pytree_node=False, default=False)
    rule: str = struct.field(pytree_node=False, default="uct")
    pb_c_init: float = struct.field(pytree_node=False, default=PB_C_INIT)
    uct_c: float = struct.field(pytree_node=False, default=UCT_C)

    def __post_init__(self):
        self._check_simulations()

    @property
    def name(self) -> str:
        return f"mcts{self.num_simulations}:{'det' if self.deterministic else 'sto'}"

    def search(self, states: env.EnvState, keys: Array) -> SearchOutput:
        """The agent's search from states [B] with root keys [B]."""
        return run(rollout_evaluator, None, states, keys, self.num_simulations, rule=self.rule,
                   pb_c_init=self.pb_c_init, uct_c=self.uct_c)
