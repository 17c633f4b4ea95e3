"""The search tree of :mod:`c4jax.agents.search` and one simulation on it: the arrays of B trees
(:class:`Tree`), the selection rules (PUCT and UCT, with proven values), and the walk down, the
expansion and the backup of every simulation (:func:`grow` runs them). A node's tie-break key is
``fold_in(node key, NOISE_SALT + visits)``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import struct
from jax import Array

PB_C_INIT = 3.0  # PUCT c_1 for a uniform prior (pure MCTS's rule and constants: docs/results/openspiel_mcts.md)
PB_C_BASE = 19652.0  # PUCT c_2
NOISE_SALT = 2**16  # fold_in offset of the tie-break keys (children use 1 + action)
STEP_SALT = NOISE_SALT - 3  # fold_in of a node's key: the key of the game step into it
ROOT = 0  # index of the root node in every tree
UNVISITED = -1  # children_index of an edge without a node; parents / action_from_parent of the root


@struct.dataclass
class Tree:
    """B search trees of N + 1 nodes in arrays, in the layout of ``mctx.Tree``; A = actions. A node's
    value is the mean of its evaluation and every value backed up through it, for its player to move.
    """

    node_visits: Array  # int32[B, N]: visits of each node (1 when created)
    raw_values: Array  # float32[B, N]: the evaluator's value of each node
    node_values: Array  # float32[B, N]: mean backed-up value
    parents: Array  # int32[B, N]: parent node (UNVISITED for the root and unused nodes)
    action_from_parent: Array  # int32[B, N]: the action that leads from the parent to the node
    children_index: Array  # int32[B, N, A]: the child node of each action (UNVISITED: none yet)
    children_prior_logits: Array  # float32[B, N, A]: the node's prior logits (illegal: finfo.min)
    children_visits: Array  # int32[B, N, A]: visits of each edge
    children_rewards: Array  # float32[B, N, A]: the mover's reward of each edge
    children_discounts: Array  # float32[B, N, A]: -1 (player changes), +1 (same player), 0 (game over)
    children_values: Array  # float32[B, N, A]: node_values of each child
    embeddings: Any  # (game states [B, N], key data [B, N, ...]): each node's state and key
    root_invalid_actions: Array  # bool[B, A]: actions the root may not take
    proven: Array  # float32[B, N]: +1 proven win, -1 proven loss, 0 not proven (player to move)

    def qvalues(self, index) -> Array:
        """Q of each action of node ``index`` (int32[B] for B trees, or a scalar on one tree):
        ``reward + discount * child value`` for the node's player to move (0 where unvisited)."""
        if self.node_values.ndim == 1:  # one tree (inside a vmap)
            return self.children_rewards[index] + self.children_discounts[index] * self.children_values[index]
        rows = jnp.arange(self.node_values.shape[0])
        return (self.children_rewards[rows, index]
                + self.children_discounts[rows, index] * self.children_values[rows, index])


def new_tree(prior_logits: Array, value: Array, embedding, num_simulations: int, invalid: Array) -> Tree:
    """Empty trees of ``num_simulations + 1`` nodes with the evaluated roots at node 0."""
    batch, actions = prior_logits.shape
    nodes = num_simulations + 1

    def per_node(root, fill=0):  # [B, ...] -> [B, nodes, ...], the root's entry at node 0
        shape = (batch, nodes) + root.shape[1:]
        return jnp.full(shape, fill, root.dtype).at[:, ROOT].set(root)

    edges = (batch, nodes, actions)
    return Tree(
        node_visits=per_node(jnp.ones(batch, jnp.int32)),
        raw_values=per_node(value),
        node_values=per_node(value),
        parents=jnp.full((batch, nodes), UNVISITED, jnp.int32),
        action_from_parent=jnp.full((batch, nodes), UNVISITED, jnp.int32),
        children_index=jnp.full(edges, UNVISITED, jnp.int32),
        children_prior_logits=per_node(prior_logits),
        children_visits=jnp.zeros(edges, jnp.int32),
        children_rewards=jnp.zeros(edges, value.dtype),
        children_discounts=jnp.zeros(edges, value.dtype),
        children_values=jnp.zeros(edges, value.dtype),
        embeddings=jax.tree.map(per_node, embedding),
        root_invalid_actions=invalid,
        proven=jnp.zeros((batch, nodes), value.dtype),
    )


def edge_proven(tree: Tree, node_index) -> Array:
    """float32[A] (one tree) or [B, A] (``node_index`` int32[B]): each edge's proven value for the
    mover: the sign of its reward when its step ends the game, else ``discount * proven`` of its
    child; 0 without a child."""
    if tree.node_values.ndim == 1:
        child, reward, disc = (tree.children_index[node_index], tree.children_rewards[node_index],
                               tree.children_discounts[node_index])
        child_proven = tree.proven[jnp.maximum(child, 0)]
    else:
        rows = jnp.arange(tree.node_values.shape[0])
        child, reward, disc = (tree.children_index[rows, node_index], tree.children_rewards[rows, node_index],
                               tree.children_discounts[rows, node_index])
        child_proven = jnp.take_along_axis(tree.proven, jnp.maximum(child, 0), axis=-1)
    exact = jnp.where(disc == 0.0, jnp.sign(reward), disc * child_proven)
    return jnp.where((child == UNVISITED) | (exact == 0.0), 0.0, exact)  # one zero, +0.0


def node_proven(edges: Array, legal: Array) -> Array:
    """float32[...]: +1 when a legal edge (``edges`` [..., A]) is proven won, -1 when there are legal
    edges and all are proven lost, else 0."""
    win = jnp.any(legal & (edges > 0.0), axis=-1)
    loss = jnp.any(legal, axis=-1) & jnp.all(~legal | (edges < 0.0), axis=-1)
    return jnp.where(win, 1.0, jnp.where(loss, -1.0, 0.0)).astype(edges.dtype)


# --------------------------------------------------------------------------- selection


def node_key(tree: Tree, node_index) -> Array:
    """The tie-break key of a node (one tree), fresh at every visit."""
    node_key = jax.random.wrap_key_data(tree.embeddings[1][node_index])
    return jax.random.fold_in(node_key, NOISE_SALT + tree.node_visits[node_index])


def puct_scores(tree: Tree, node_index, c_init: float = PB_C_INIT, c_base: float = PB_C_BASE) -> Array:
    """float32[A]: MuZero's PUCT score of each action of node ``node_index`` of one tree, without
    noise: Q rescaled to [0, 1] over the node's value and its visited children's Q (unvisited: the
    smallest), plus ``c(N) * prior * sqrt(N) / (1 + n)``, ``c(N) = c_init + log((N + c_base + 1) / c_base)``."""
    visits = tree.children_visits[node_index]
    n = tree.node_visits[node_index]
    c = c_init + jnp.log((n + c_base + 1.0) / c_base)
    prior = jax.nn.softmax(tree.children_prior_logits[node_index])
    explore = jnp.sqrt(n) * c * prior / (visits + 1)
    q, v = tree.qvalues(node_index), tree.node_values[node_index]
    seen = visits > 0
    lo = jnp.minimum(v, jnp.min(jnp.where(seen, q, v)))
    hi = jnp.maximum(v, jnp.max(jnp.where(seen, q, v)))
    value = (jnp.where(seen, q, lo) - lo) / jnp.maximum(hi - lo, 1e-8)
    return value + explore


_PROVEN_WIN_SCORE = 2e9  # above every other score, an unvisited UCT edge's 1e9 included
# Subtracted from a proven-losing edge's score: below every score of an edge not proven lost (UCT
# and PUCT scores of visited edges stay within a few units), while the lost edges keep their own
# order (float32 resolves 1e-4 at 1e3), so a proven-lost root spreads its visits as before.
_PROVEN_LOSS_OFFSET = 1e3


def solved_scores(tree: Tree, node_index, score: Array, solve: bool) -> Array:
    """``score`` with proven-winning edges first and proven-losing ones last (``solve``)."""
    if not solve:
        return score
    proven = edge_proven(tree, node_index)
    return jnp.where(proven > 0.0, _PROVEN_WIN_SCORE, jnp.where(proven < 0.0, score - _PROVEN_LOSS_OFFSET, score))


def selection(rule: str, c: float, pb_c_base: float, solve: bool = False):
    """``select(tree, node_index, depth) -> action`` on one tree: PUCT or UCT with tie-break noise;
    the root skips its invalid actions. With ``solve``, a proven win is always selected and a proven
    loss only when every legal edge is lost."""

    def puct(tree: Tree, node_index, depth):
        score = puct_scores(tree, node_index, c, pb_c_base)
        score = score + 1e-7 * jax.random.uniform(node_key(tree, node_index), score.shape)
        score = solved_scores(tree, node_index, score, solve)
        invalid = tree.root_invalid_actions * (depth == 0)
        return jnp.argmax(jnp.where(invalid, -jnp.inf, score)).astype(jnp.int32)

    def uct(tree: Tree, node_index, depth):
        """Unvisited legal actions first (random order), then max Q + c * sqrt(ln N / n)."""
        visits = tree.children_visits[node_index]
        prior = jax.nn.softmax(tree.children_prior_logits[node_index])
        explore = c * jnp.sqrt(jnp.log(jnp.maximum(tree.node_visits[node_index], 1)) / jnp.maximum(visits, 1))
        noise = 1e-6 * jax.random.uniform(node_key(tree, node_index), visits.shape)
        score = jnp.where(visits == 0, 1e9, tree.qvalues(node_index) + explore) + noise
        score = solved_scores(tree, node_index, score, solve)
        invalid = (prior <= 0.0) | (tree.root_invalid_actions * (depth == 0) > 0)
        return jnp.argmax(jnp.where(invalid, -jnp.inf, score)).astype(jnp.int32)

    return {"puct": puct, "uct": uct}[rule]


# --------------------------------------------------------------------------- one simulation


def simulate(tree: Tree, select) -> tuple[Array, Array]:
    """``(node, action)`` int32[B]: walk each tree from the root until the selected edge has no child.

    The root's selection comes first, outside the loop. PUCT's 1e-7 noise is below half an ulp of
    scores above 1, so exact ties depend on how XLA compiles the scores: this structure (a float32
    depth included) gives the bits of mctx's own search loop (``tests/agents/test_search.py``).
    """

    def walk(tree):  # one board's tree
        def body(carry):
            node, _, child, depth, _ = carry
            node = child
            action = select(tree, node, depth)
            child = tree.children_index[node, action]
            return node, action, child, depth + 1, child != UNVISITED

        root_action = select(tree, jnp.int32(ROOT), 0)
        child = tree.children_index[ROOT, root_action]
        start = (jnp.int32(ROOT), root_action, child, jnp.float32(1.0), child != UNVISITED)
        node, action, _, _, _ = jax.lax.while_loop(lambda c: c[4], body, start)
        return node, action

    return jax.vmap(walk)(tree)


def expand(tree: Tree, params, model, parent: Array, action: Array, index: Array) -> Tree:
    """Step each board's game along edge ``(parent, action)`` with ``model`` (a ``recurrent_fn``)
    and store the new node, evaluated, at ``index``."""
    rows = jnp.arange(parent.shape[0])
    out, embedding = model(params, None, action, jax.tree.map(lambda x: x[rows, parent], tree.embeddings))
    at_node = lambda x, v: x.at[rows, index].set(v)  # noqa: E731
    at_edge = lambda x, v: x.at[rows, parent, action].set(v)  # noqa: E731
    return tree.replace(
        node_visits=at_node(tree.node_visits, 1),
        raw_values=at_node(tree.raw_values, out.value),
        node_values=at_node(tree.node_values, out.value),
        parents=at_node(tree.parents, parent),
        action_from_parent=at_node(tree.action_from_parent, action),
        children_prior_logits=at_node(tree.children_prior_logits, out.prior_logits),
        embeddings=jax.tree.map(at_node, tree.embeddings, embedding),
        children_index=at_edge(tree.children_index, index),
        children_rewards=at_edge(tree.children_rewards, out.reward),
        children_discounts=at_edge(tree.children_discounts, out.discount),
    )


def backward(tree: Tree, leaf_index: Array, solve: bool = False) -> Tree:
    """Back the value of each new leaf up its path, for the whole batch at once.

    At every step up the value becomes ``reward + discount * value``, the parent's value the running
    mean, and the edge gets the child's value and a visit; with ``solve``, a proven node passes up its
    proven value and the parent's is recomputed. One batched loop with masked scatters (a ``vmap``-ed
    loop would select between whole trees at every step).
    """
    batch = leaf_index.shape[0]
    rows = jnp.arange(batch)

    def body(carry):
        tree, value, index = carry
        active = index != ROOT
        if solve:  # from a proven node up, the exact result replaces the playouts' mean
            proven_here = tree.proven[rows, index]
            value = jnp.where(proven_here != 0.0, proven_here, value)
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
        if solve:
            # The parents' states first, then their masks: a game may store the mask packed
            # (as bits of a word), and unpacking every node's would cost the whole tree per step up.
            legal = jax.tree.map(lambda x: x[rows, parent], tree.embeddings[0]).legal_action_mask
            proven = node_proven(edge_proven(tree, parent), legal)
            tree = tree.replace(proven=tree.proven.at[rows, parent].set(
                jnp.where(active, proven, tree.proven[rows, parent])))
        return tree, value, jnp.where(active, parent, index)

    leaf_index = leaf_index.astype(jnp.int32)
    carry = (tree, tree.node_values[rows, leaf_index], leaf_index)
    tree, _, _ = jax.lax.while_loop(lambda c: jnp.any(c[2] != ROOT), body, carry)
    return tree


def grow(params, tree: Tree, model, select, num_simulations: int, solve: bool = False) -> Tree:
    """``num_simulations`` rounds of select, expand and back up; simulation i creates node i + 1."""
    batch = tree.node_values.shape[0]

    def body(sim, tree):
        parent, action = simulate(tree, select)
        index = jnp.full((batch,), sim + 1, jnp.int32)
        tree = expand(tree, params, model, parent, action, index)
        return backward(tree, index, solve)

    return jax.lax.fori_loop(0, num_simulations, body, tree)
