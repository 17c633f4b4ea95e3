"""MCTS with the jitted Connect Four environment as the model (c4jax.agents.search).

Hand-made boards (an immediate win, a block, a draw-ending move), the signs of rewards,
discounts and values in the tree, the root's visit count, per-board independence of a batch,
seeds, typed and legacy keys, jit vs no-jit, the search against mctx's public search and PUCT
rule, a protocol match against Random, the network evaluator, and the ``mcts<N>`` names.
(Other games: tests/agents/test_search_games.py.)
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest

from c4jax import agents, games
from c4jax.agents import network_search, search, search_agent, search_tree
from c4jax.agents.baselines import RandomAgent
from c4jax.agents.policy import masked_logits
from c4jax.evaluation import match
from c4jax.games.connect_four import env
from c4jax.games.connect_four.game import GAME
from c4jax.nets import cnet
from scripts import run_script

C4 = games.make(games.DEFAULT)

ROLLOUT = search.RolloutEvaluator(GAME)  # pure MCTS on Connect Four

# Variants of a test whose default-run case already exercises the same code path with another
# rule or setting; each compiles a search of its own, so they run with `pytest -m slow`.
SLOW_VARIANT = pytest.mark.slow

def parse(rows: list[str]) -> np.ndarray:
    """'x' = player to move (1), 'o' = opponent (-1), '.' = empty; row 0 on top."""
    return np.array([[{"x": 1, "o": -1, ".": 0}[ch] for ch in row] for row in rows], np.int8)


# x to move, wins at column 3 (bottom row x x x .).
WIN = parse([
    ".......",
    ".......",
    ".......",
    ".......",
    "oo.....",
    "xxx...o",
])
# x to move, must block o's bottom-row three at column 3.
BLOCK = parse([
    ".......",
    ".......",
    ".......",
    ".......",
    "xx.....",
    "ooo...x",
])
# A full board with no four in a row (21 stones each), less x's stone at the top of column 2:
# 41 stones, x to move, the only move (column 2) ends the game in a draw.
DRAW = parse([
    "oo.oxxx",
    "xoxooox",
    "xxooxxo",
    "oxxxoox",
    "oxoooxo",
    "xoxxxoo",
])
# The same board less the top stones of columns 3 (o) and 4 (x): a short endgame, x to move.
ENDGAME = DRAW.copy()
ENDGAME[0, [3, 4]] = 0


_from_boards = jax.jit(jax.vmap(env.from_board))  # one compile a batch size; eager: one an operation


def states_of(*boards) -> env.EnvState:
    return _from_boards(jnp.asarray(np.stack(boards)))


def keys(n: int, seed: int = 0):
    return jax.random.split(jax.random.key(seed), n)


_run = jax.jit(functools.partial(search.run, game=GAME), static_argnums=(0, 4))


def pure(states, ks, n):
    return _run(ROLLOUT, None, states, ks, n)


# --------------------------------------------------------------------------- hand-made boards


@pytest.mark.parametrize("board,col", [(WIN, 3), (BLOCK, 3)], ids=["win", "block"])
def test_takes_the_win_and_blocks_the_loss(board, col):
    agent = search_agent.MCTSAgent(num_simulations=200, deterministic=True, game=C4)
    for seed in range(3):
        assert int(agent.act(board[None], jax.random.key(seed))[0]) == col
    scores = np.asarray(agent.scores(board[None]))[0]
    assert int(np.argmax(scores)) == col and scores[col] > 0.5
    assert np.isclose(scores.sum(), 1.0)


def test_winning_move_reward_and_terminal_values():
    out = pure(states_of(WIN), keys(1), 200)
    tree = out.tree
    assert float(tree.children_rewards[0, 0, 3]) == 1.0  # the mover's win
    assert float(tree.children_discounts[0, 0, 3]) == 0.0  # game over: nothing flows back
    child = int(tree.children_index[0, 0, 3])
    assert float(tree.raw_values[0, child]) == 0.0  # a finished node's own value is 0
    assert float(out.qvalues[0, 3]) == 1.0
    # Non-terminal moves: reward 0, discount -1 (the child is the opponent's node).
    for a in (0, 1, 2, 4, 5, 6):
        if int(out.visit_counts[0, a]) > 0:
            assert float(tree.children_rewards[0, 0, a]) == 0.0
            assert float(tree.children_discounts[0, 0, a]) == -1.0
    assert 0.5 < float(out.root_value[0]) <= 1.0


def test_opponent_wins_are_negative_for_the_root_player():
    """In BLOCK every move but column 3 lets o win at once: wherever the search tried o's reply
    at column 3 below one of those moves, that edge's reward is +1 for o, and the root's Q of
    column 3 is the best."""
    out = pure(states_of(BLOCK), keys(1), 200)
    tree, q = out.tree, np.asarray(out.qvalues[0])
    found = 0
    for a in (0, 1, 2, 4, 5, 6):
        child = int(tree.children_index[0, 0, a])
        if child >= 0 and int(tree.children_index[0, child, 3]) >= 0:
            assert float(tree.children_rewards[0, child, 3]) == 1.0  # o, the mover there, wins
            assert float(tree.children_discounts[0, child, 3]) == 0.0
            assert float(tree.children_values[0, child, 3]) == 0.0
            found += 1
    assert found >= 3
    assert q[3] == q.max() and int(np.argmax(out.visit_counts[0])) == 3


def test_draw_ending_move_has_zero_reward():
    out = pure(states_of(DRAW), keys(1), 20)
    assert out.visit_counts[0].tolist() == [0, 0, 20, 0, 0, 0, 0]
    tree = out.tree
    assert float(tree.children_rewards[0, 0, 2]) == 0.0
    assert float(tree.children_discounts[0, 0, 2]) == 0.0
    assert float(out.qvalues[0, 2]) == 0.0 and float(out.root_value[0]) == 0.0


def test_random_playout_values():
    playout = jax.jit(search.random_playout, static_argnums=0)  # one compile for the six playouts below
    s = env.from_board(DRAW)
    for k in range(5):  # the one move left draws
        assert float(playout(GAME, s, jax.random.key(k))) == 0.0
    finished = env.step(env.from_board(WIN), 3)
    assert float(playout(GAME, finished, jax.random.key(0))) == 0.0
    # From ENDGAME, the playout's result is the exact result of the game it plays.
    vals = jax.jit(jax.vmap(search.random_playout, in_axes=(None, None, 0)), static_argnums=0)(
        GAME, env.from_board(ENDGAME), keys(64))
    assert set(np.unique(np.asarray(vals)).tolist()) <= {-1.0, 0.0, 1.0}


@pytest.mark.parametrize("actions", [7, 32, 33, 100, 256])
def test_pick_legal_is_the_kth_legal_action(actions):
    """The playouts' pick (one level up to 32 actions, two levels above) against numpy's k-th set
    index, on random masks of every density, a single legal action at either end, and all legal."""
    rng = np.random.default_rng(actions)
    density = rng.uniform(0.0, 1.0, (2000, 1))
    masks = rng.uniform(size=(2000, actions)) < density
    masks[:, rng.integers(actions)] = True
    masks[0], masks[1], masks[2] = False, False, True
    masks[0, 0], masks[1, -1] = True, True
    bits = rng.integers(0, 2**32, size=2000, dtype=np.uint32)
    bits[3], bits[4] = 0, 2**32 - 1
    got = np.asarray(jax.jit(jax.vmap(search._pick_legal))(jnp.asarray(bits), jnp.asarray(masks)))
    for x, mask, action in zip(bits, masks, got):
        legal = np.flatnonzero(mask)
        assert action == legal[((int(x) >> 16) * len(legal)) >> 16]


def test_finished_board_gives_zero_visits():
    finished = env.step(env.from_board(WIN), 3)
    out = pure(jax.tree.map(lambda x: x[None], finished), keys(1), 20)
    assert int(out.visit_counts.sum()) == 0 and float(out.visit_probs.sum()) == 0.0


# --------------------------------------------------------------------------- proven values (solve)

# x to move, every move loses: o's open three on the bottom row threatens columns 0 and 4.
LOST = parse([
    ".......",
    ".......",
    ".......",
    ".......",
    "......x",
    ".ooo.xx",
])
# x to move wins in three plies: column 1 or 4 makes an open three (two threats, o blocks one).
MATE_IN_TWO = parse([
    ".......",
    ".......",
    ".......",
    ".......",
    "..oo...",
    "..xx...",
])

_run_solve = jax.jit(functools.partial(search.run, game=GAME), static_argnums=(0, 4), static_argnames=("rule", "solve"))


def solved(states, ks, n, solve=True, rule="uct"):
    return _run_solve(ROLLOUT, None, states, ks, n, rule=rule, solve=solve)


def test_solver_proves_and_plays_a_win_in_one_at_eight_simulations():
    """N = 8 tries each column about once: the winning column is not more visited than the
    others, so plain MCTS's most visited column is often another one; the proven win is played."""
    states = states_of(*[WIN] * 5)
    ks = keys(5)
    on, off = solved(states, ks, 8), solved(states, ks, 8, solve=False)
    legal = states.legal_action_mask
    assert search.best_column(on, legal).tolist() == [3] * 5
    assert search.best_column(off, legal).tolist() != [3] * 5
    assert on.proven[:, 3].tolist() == [1.0] * 5 and on.root_value.tolist() == [1.0] * 5
    np.testing.assert_allclose(np.asarray(on.visit_probs[:, 3]), 1.0)
    assert on.qvalues[:, 3].tolist() == [1.0] * 5
    assert float(jnp.abs(off.proven).sum()) == 0.0  # no proven values without solve
    assert float(jnp.abs(off.tree.proven).sum()) == 0.0
    agent = agents.load("mcts8solve:det")
    assert agent.solve
    for seed in range(5):
        assert int(agent.act(WIN[None], jax.random.key(seed))[0]) == 3
    sampled = agents.load("mcts8solve:sto")  # sampling from the visit shares: only the proven win
    for seed in range(5):
        assert int(sampled.act(WIN[None], jax.random.key(seed))[0]) == 3
    assert np.isclose(np.asarray(agent.scores(WIN[None]))[0, 3], 1.0)


def test_solver_proves_a_lost_root():
    """Against two open threats every move loses: each child is a proven win for o (its winning
    reply is a finished edge), so the root is a proven loss; a move and visit shares still come."""
    states = states_of(*[LOST] * 4)
    out = solved(states, keys(4, seed=1), 200)
    assert out.tree.proven[:, 0].tolist() == [-1.0] * 4 and out.root_value.tolist() == [-1.0] * 4
    assert (np.asarray(out.proven) == -1.0).all() and (np.asarray(out.qvalues) == -1.0).all()
    assert out.visit_counts.sum(-1).tolist() == [200] * 4
    np.testing.assert_allclose(np.asarray(out.visit_probs.sum(-1)), 1.0, rtol=1e-6)
    assert (np.asarray(out.visit_probs) > 0).all()  # every move is as lost: all keep their shares
    best = np.asarray(search.best_column(out, states.legal_action_mask))
    assert ((best >= 0) & (best < 7)).all()


@pytest.mark.parametrize("rule", ["uct", pytest.param("puct", marks=SLOW_VARIANT)])
def test_solver_finds_the_win_in_three_plies(rule):
    """Columns 1 and 4 win by force: the root is proven won through an o node whose every reply
    is proven lost; the move and all the visit shares go to a proven win."""
    ks = keys(4)
    states = states_of(*[MATE_IN_TWO] * 4)
    out = solved(states, ks, 600, rule=rule)
    assert out.tree.proven[:, 0].tolist() == [1.0] * 4
    best = np.asarray(search.best_column(out, states.legal_action_mask))
    assert set(best.tolist()) <= {1, 4}
    for i, b in enumerate(best):
        assert float(out.proven[i, b]) == 1.0 and np.isclose(float(out.visit_probs[i, b]), 1.0)
        assert set(np.flatnonzero(np.asarray(out.proven[i]) > 0).tolist()) <= {1, 4}


def test_solver_never_plays_a_proven_loss():
    """BLOCK: every column but 3 lets o win at once; those proven lost get no visit share and are
    never sampled, the block keeps the most visits."""
    states = states_of(*[BLOCK] * 4)
    out = solved(states, keys(4, seed=2), 200)
    proven = np.asarray(out.proven)
    assert (proven[:, 3] == 0).all() and (proven < 0).any()
    assert (np.asarray(out.visit_probs)[proven < 0] == 0).all()
    for k in range(5):
        picks = search.select_action(out, keys(4, seed=10 + k), states.legal_action_mask)
        assert not (proven[np.arange(4), np.asarray(picks)] < 0).any()
    assert search.best_column(out, states.legal_action_mask).tolist() == [3] * 4


def test_solver_batch_equals_each_board_alone():
    boards = [WIN, BLOCK, LOST, MATE_IN_TWO, ENDGAME, np.zeros((6, 7), np.int8)]
    ks = keys(len(boards), seed=4)
    batched = solved(states_of(*boards), ks, 300)
    for i, b in enumerate(boards):
        alone = solved(states_of(b), ks[i:i + 1], 300)
        for field in ("visit_counts", "proven", "visit_probs", "qvalues", "root_value"):
            np.testing.assert_array_equal(np.asarray(getattr(alone, field)[0]), np.asarray(getattr(batched, field)[i]))
        np.testing.assert_array_equal(np.asarray(alone.tree.proven[0]), np.asarray(batched.tree.proven[i]))


# --------------------------------------------------------------------------- batching, seeds, jit


def test_batch_equals_each_board_alone():
    boards = [WIN, BLOCK, ENDGAME, np.zeros((6, 7), np.int8)]
    ks = keys(len(boards), seed=3)
    batched = pure(states_of(*boards), ks, 200)
    for i, b in enumerate(boards):
        alone = pure(states_of(b), ks[i:i + 1], 200)
        np.testing.assert_array_equal(np.asarray(alone.visit_counts[0]), np.asarray(batched.visit_counts[i]))
        np.testing.assert_allclose(np.asarray(alone.qvalues[0]), np.asarray(batched.qvalues[i]), atol=1e-6)
    agent = search_agent.MCTSAgent(num_simulations=200, deterministic=True, game=C4)  # scores: keys from the boards
    many = np.asarray(agent.scores(np.stack(boards)))
    for i, b in enumerate(boards):
        np.testing.assert_array_equal(np.asarray(agent.scores(b[None]))[0], many[i])


def test_same_key_same_move_and_scores_are_deterministic():
    agent = agents.load("mcts32")  # sampled from the visit counts
    boards = np.stack([np.zeros((6, 7), np.int8), ENDGAME, BLOCK, WIN])
    a1 = np.asarray(agent.act(boards, jax.random.key(5)))
    np.testing.assert_array_equal(a1, np.asarray(agent.act(boards, jax.random.key(5))))
    moves = {tuple(np.asarray(agent.act(boards, jax.random.key(k))).tolist()) for k in range(8)}
    assert len(moves) > 1  # the sampled mode does depend on the key
    np.testing.assert_array_equal(np.asarray(agent.scores(boards)), np.asarray(agent.scores(boards)))
    s = np.asarray(agent.scores(boards))
    assert np.isneginf(s[1, [0, 1, 5, 6]]).all() and np.isclose(s[1, [2, 3, 4]].sum(), 1.0)


def test_jit_and_no_jit_agree():
    """The search called as is (mctx's loops still compile their bodies) and under an outer jit."""
    states, ks = states_of(ENDGAME), keys(1, seed=9)
    jitted = pure(states, ks, 200)
    plain = search.run(ROLLOUT, None, states, ks, 200, game=GAME)
    np.testing.assert_array_equal(np.asarray(jitted.visit_counts), np.asarray(plain.visit_counts))
    np.testing.assert_allclose(np.asarray(jitted.qvalues), np.asarray(plain.qvalues), atol=1e-6)


def _random_evaluator(params, ks, states):
    """Prior logits and values drawn from each node's key: no exact ties between actions."""
    del params
    logits = jax.vmap(lambda k: jax.random.normal(k, (7,)))(ks)
    return logits, jax.vmap(lambda k: jax.random.uniform(jax.random.fold_in(k, 1), (), minval=-1, maxval=1))(ks)


@pytest.mark.parametrize("rule", ["uct", pytest.param("puct", marks=SLOW_VARIANT)])
def test_the_search_builds_mctx_public_search_tree(rule):
    """The search (tree, walk, expansion, batched backup) builds exactly the tree of mctx's public
    ``mctx.search`` given the same model and selection rule."""
    states, ks = states_of(BLOCK, ENDGAME, np.zeros((6, 7), np.int8)), keys(3, seed=4)
    ours = jax.jit(functools.partial(search.run, game=GAME), static_argnums=(0, 4), static_argnames=("rule",))(
        ROLLOUT, None, states, ks, 60, rule=rule).tree
    logits, value = ROLLOUT(None, jax.vmap(jax.random.fold_in)(ks, jnp.zeros(3, jnp.uint32)), states)
    root = mctx.RootFnOutput(prior_logits=masked_logits(logits, states.legal_mask), value=value,
                             embedding=(states, jax.random.key_data(ks)))
    select = search_tree.selection(rule, search.PB_C_INIT if rule == "puct" else search.UCT_C, search.PB_C_BASE)
    theirs = jax.jit(lambda r: mctx.search(
        None, jax.random.key(0), root=r, recurrent_fn=search.recurrent_fn(ROLLOUT, GAME),
        root_action_selection_fn=lambda k, t, i: select(t, i, 0),
        interior_action_selection_fn=lambda k, t, i, d: select(t, i, d),
        num_simulations=60, invalid_actions=~states.legal_mask))(root)
    for field in ("node_visits", "raw_values", "node_values", "parents", "action_from_parent", "children_index",
                  "children_prior_logits", "children_visits", "children_rewards", "children_discounts",
                  "children_values", "root_invalid_actions"):
        np.testing.assert_array_equal(np.asarray(getattr(ours, field)), np.asarray(getattr(theirs, field)), field)
    jax.tree.map(np.testing.assert_array_equal, ours.embeddings, theirs.embeddings)


def test_puct_is_mctx_muzero_action_selection():
    """Our PUCT rule picks what ``mctx.muzero_action_selection`` (public) picks with the same
    tie-break key, at every node of a tree grown with a tie-free random prior."""
    states, ks = states_of(BLOCK, ENDGAME, np.zeros((6, 7), np.int8)), keys(3, seed=6)
    tree = search.run(_random_evaluator, None, states, ks, 40, game=GAME, rule="puct", pb_c_init=1.7).tree
    fields = [f.name for f in dataclasses.fields(mctx.Tree) if f.name != "extra_data"]  # ours adds ``proven``
    as_mctx = mctx.Tree(**{f: getattr(tree, f) for f in fields}, extra_data=None)
    select = search_tree.selection("puct", 1.7, search.PB_C_BASE)

    def both(t, node, depth):
        theirs = mctx.muzero_action_selection(search_tree.node_key(t, node), t, node, depth, pb_c_init=1.7,
                                              pb_c_base=search.PB_C_BASE)
        return select(t, node, depth), theirs

    nodes = jnp.arange(41)
    for depth in (0, 1):
        ours, theirs = jax.vmap(lambda t: jax.vmap(lambda i: both(t, i, depth))(nodes))(as_mctx)
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


@pytest.mark.parametrize("rule, solve", [("uct", True), pytest.param("uct", False, marks=SLOW_VARIANT),
                                         pytest.param("puct", True, marks=SLOW_VARIANT),
                                         pytest.param("puct", False, marks=SLOW_VARIANT)])
def test_root_visits_equal_the_number_of_simulations(rule, solve):
    finished = env.step(env.from_board(WIN), 3)
    states = jax.tree.map(lambda a, b: jnp.concatenate([a, b[None]]), states_of(WIN, BLOCK, ENDGAME, DRAW), finished)
    run = jax.jit(functools.partial(search.run, game=GAME), static_argnums=(0, 4), static_argnames=("rule", "solve"))
    for n in (1, 40):  # one simulation, and enough to reach depth > 1
        out = run(ROLLOUT, None, states, keys(5), n, rule=rule, solve=solve)
        assert out.visit_counts.sum(-1).tolist() == [n, n, n, n, 0]  # a finished root: no legal action
        assert out.tree.children_visits[:, 0].sum(-1).tolist() == [n] * 5  # ... but every simulation passes
        assert out.tree.node_visits[:, 0].tolist() == [n + 1] * 5  # the root's own evaluation + n
        assert int((out.tree.parents[:, 1:] >= 0).sum()) == 5 * n  # one new node per simulation


@pytest.mark.parametrize("method", [m if m == "gumbel" else pytest.param(m, marks=SLOW_VARIANT)
                                    for m in network_search.METHODS])
def test_alphazero_root_visits_equal_the_number_of_simulations(method):
    """mctx's public policies on our model: every simulation reaches the tree (a changed mctx that
    dropped one would fail here)."""
    params = cnet.init_params(jax.random.key(0), width=8, heads="two")
    out = jax.jit(lambda s, k: network_search.search(params, s, k, num_simulations=8, width=8, method=method, game=GAME))(
        states_of(WIN, BLOCK, ENDGAME), jax.random.key(1))
    assert out.search_tree.children_visits[:, 0].sum(-1).tolist() == [8] * 3
    assert out.search_tree.node_visits[:, 0].tolist() == [9] * 3


def test_typed_and_legacy_keys_give_the_same_searches():
    """Every entry point takes legacy uint32[2] keys (jax.random.PRNGKey) as the same keys."""
    # the boards, agent and simulation counts of the tests above: the typed-key programs are theirs
    boards = np.stack([np.zeros((6, 7), np.int8), ENDGAME, BLOCK, WIN])
    states = states_of(*boards)
    agent = agents.load("mcts32")  # sampled moves: the key matters
    typed = np.asarray(agent.act(boards, jax.random.key(3)))
    np.testing.assert_array_equal(np.asarray(agent.act(boards, jax.random.PRNGKey(3))), typed)
    np.testing.assert_array_equal(np.asarray(agent.act_states(states, jax.random.PRNGKey(3))), typed)
    legacy_out = pure(states, jax.random.split(jax.random.PRNGKey(2), 4), 200)
    typed_out = pure(states, jax.random.split(jax.random.key(2), 4), 200)
    jax.tree.map(np.testing.assert_array_equal, legacy_out, typed_out)
    pick = [np.asarray(search.select_action(typed_out, jax.random.split(k, 4), states.legal_mask))
            for k in (jax.random.PRNGKey(4), jax.random.key(4))]
    np.testing.assert_array_equal(*pick)
    s = env.from_board(ENDGAME)
    assert float(search.random_playout(GAME, s, jax.random.PRNGKey(5))) == float(
        search.random_playout(GAME, s, jax.random.key(5)))
    params = cnet.init_params(jax.random.key(0), width=8, heads="two")
    az = network_search.AlphaZeroAgent(params=params, width=8, num_simulations=4, deterministic=False, game=C4)
    np.testing.assert_array_equal(np.asarray(az.act(boards, jax.random.PRNGKey(1))),
                                  np.asarray(az.act(boards, jax.random.key(1))))
    with pytest.raises(TypeError, match="PRNG"):
        search.typed_keys(jnp.zeros(2, jnp.int32))


def test_uct_rule_takes_the_win():
    agent = search_agent.MCTSAgent(num_simulations=200, deterministic=True, rule="uct", game=C4)
    assert agent.act(WIN[None], jax.random.key(0)).tolist() == [3]
    assert agent.act(BLOCK[None], jax.random.key(0)).tolist() == [3]


def test_agent_inside_a_user_jit():
    agent = search_agent.MCTSAgent(num_simulations=200, deterministic=True, game=C4)
    boards = jnp.asarray(BLOCK[None])
    inside = jax.jit(lambda a, b, k: a.act(b, k))(agent, boards, jax.random.key(0))
    np.testing.assert_array_equal(np.asarray(inside), np.asarray(agent.act(boards, jax.random.key(0))))


@pytest.mark.slow
def test_beats_random():
    result = match(agents.load("mcts100:det"), RandomAgent(game=C4), jax.random.key(0))
    assert result.win_rate >= 0.95, result.to_dict(games=False)


# --------------------------------------------------------------------------- network evaluator


@pytest.mark.slow
def test_network_evaluator_guides_the_search():
    params = cnet.init_params(jax.random.key(0), width=16, heads="two")
    evaluate = network_search.evaluator(16, (), GAME)  # the AlphaZero network as run()'s evaluator
    states = states_of(WIN, np.zeros((6, 7), np.int8))
    logits, value = evaluate(params, keys(2), states)
    assert logits.shape == (2, 7) and value.shape == (2,)
    run = jax.jit(functools.partial(search.run, game=GAME), static_argnums=(0, 4))
    out = run(evaluate, params, states, keys(2), 48)
    assert out.visit_counts.sum(-1).tolist() == [48, 48]
    assert int(jnp.argmax(out.visit_counts[0])) == 3  # the exact win reward outweighs an untrained value
    # A prior that puts all its mass on column 0 pulls the visits there on the empty board.
    biased = jax.tree.map(jnp.copy, params)
    biased["head"]["out"]["bias"] = biased["head"]["out"]["bias"].at[0].add(20.0)
    out_b = run(evaluate, biased, states, keys(2), 48)
    assert int(out_b.visit_counts[1, 0]) > int(out.visit_counts[1, 0])
    noisy = jax.jit(lambda s, k: search.run(evaluate, params, s, k, 48, game=GAME, dirichlet_fraction=0.25).visit_counts)
    assert noisy(states, keys(2)).sum(-1).tolist() == [48, 48]


def test_select_action_temperature():
    out = pure(states_of(BLOCK), keys(1), 200)
    legal = states_of(BLOCK).legal_mask
    best = search.select_action(out, keys(1), legal, 0.0)
    assert best.tolist() == [int(np.argmax(np.asarray(out.visit_counts[0])))]
    cold = {int(search.select_action(out, keys(1, seed=k), legal, 0.05)[0]) for k in range(10)}
    assert cold == {int(best[0])}  # a low temperature concentrates on the most visited column


# --------------------------------------------------------------------------- names


def test_registry_names():
    # a bare name plays the most visited move; :sto draws it from the visit counts
    for name, n, det in (("mcts50", 50, True), ("MCTS1000:det", 1000, True), ("mcts7:sto", 7, False)):
        agent = agents.load(name)
        assert isinstance(agent, search_agent.MCTSAgent)
        assert (agent.num_simulations, agent.deterministic) == (n, det)
        assert agent.name == f"mcts{n}:{'det' if det else 'sto'}" and agent.stochastic == (not det)
    assert "mcts1000" in agents.known_names()
    for name, solve in (("mcts50solve", True), ("mcts50NoSolve:det", False), ("mcts50", search.SOLVE)):
        agent = agents.load(name)
        assert agent.solve == solve and agent.num_simulations == 50
        assert agents.load(agent.name).solve == solve  # the name gives the agent back
    assert agents.load("checkers/mcts20solve").solve


def test_the_uct_constant_is_the_games_unless_named():
    assert agents.load("mcts50").c == games.kit_of("connect_four").uct_c == 1.0
    assert agents.load("checkers/mcts50").c == search.UCT_C  # a game without a measured constant of its own
    for name, c, solve in (("mcts50-c0.4:det", 0.4, True), ("mcts50nosolve-c.25", 0.25, False),
                           ("checkers/mcts50-c1", 1.0, True), ("mcts50-c1", 1.0, True)):
        agent = agents.load(name)
        assert (agent.c, agent.solve) == (c, solve)
        again = agents.load(agent.name)  # the name gives the agent back, a Checkers one too (with its prefix)
        assert (again.c, again.solve, again.name, again.game.id) == (agent.c, agent.solve, agent.name, agent.game.id)
    assert agents.load("mcts50-c1").name == "mcts50:det"  # Connect Four's own constant is not named
    assert agents.load("mcts50-c0.4").name == "mcts50-c0.4:det"
    # the constant reaches the search: another constant, another search
    empty = np.zeros((6, 7), np.int8)
    states, k = states_of(empty, empty), keys(2)
    visits = [np.asarray(agents.load(n).search(states, k).visit_counts) for n in ("mcts24:det", "mcts24-c0.1:det")]
    assert not np.array_equal(*visits)
    with pytest.raises(ValueError, match="UCT constant"):
        search_agent.MCTSAgent(num_simulations=8, uct_c=0.0, game=C4)


@pytest.mark.parametrize("name", ["mcts0", "mcts99999999", "mctsx", "mcts", "mcts-5", "mcts1.5", "mcts²",
                                  "mcts10-c0", "mcts10-c", "mcts10c1", "mcts10-c-1", "mcts10-cx"])
def test_registry_rejects_bad_simulation_counts(name):
    with pytest.raises(ValueError, match="number of simulations"):
        agents.load(name)


def test_bad_arguments():
    with pytest.raises(ValueError, match="simulations"):
        search_agent.MCTSAgent(num_simulations=0, game=C4)
    with pytest.raises(ValueError, match="num_simulations"):
        search.run(ROLLOUT, None, states_of(WIN), keys(1), 0, game=GAME)
    with pytest.raises(ValueError, match="rule"):
        search.run(ROLLOUT, None, states_of(WIN), keys(1), 4, game=GAME, rule="ucb")
    with pytest.raises(TypeError, match="not a game"):
        search_agent.MCTSAgent(num_simulations=4, game=object())
    with pytest.raises(ValueError, match=":sto' or ':det'"):
        agents.load("mcts10:greedy")


# --------------------------------------------------------------------------- the benchmark script


@pytest.mark.slow
def test_bench_search_script(tmp_path):
    out = tmp_path / "bench.md"
    r = run_script("bench_search.py", "--batch-sizes", "1", "3", "--simulations", "4", "--repeats", "1",
                   "--az-simulations", "2", "--out", out)
    assert r.returncode == 0, r.stderr
    for b in (1, 3):
        assert f"c4jax batch {b}: " in r.stdout and f"AlphaZero self-play batch {b}: " in r.stdout
    table = out.read_text()
    assert "| 1 | " in table and "| 3 | " in table and "--simulations 4" in table
    assert "AlphaZero self-play" in table and "self-play moves/s" in table
    try:
        import pyspiel  # noqa: F401
        assert "OpenSpiel MCTSBot: " in r.stdout and "x |" in table
    except ImportError:
        assert "open_spiel is not installed" in r.stdout and "n/a" in table
    bad = run_script("bench_search.py", "--simulations", "0", "--out", "")
    assert bad.returncode == 2 and "error:" in bad.stderr
