"""The search on games other than Connect Four (c4jax.agents.search with ``game=``).

Two tiny games written here against the game protocol (c4jax.games.base):

- ``BonusNim``: take 1, 2 or 3 stones; taking the last stone wins; a move that leaves a
  positive multiple of 4 stones gives its player another move. The same player moving twice
  is what the discount must get right (+1, not -1), checked against exact values computed
  here by exhaustive recursion;
- ``TicTacToe``: for the generic random playout, the state-level agent entry points and the
  observation-keyed ``board_keys``.

The search's own machinery (tree, walk, expansion, backup) is compared with mctx's public
``mctx.search`` run with the same model and selection rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest
from flax import struct

from c4jax.agents import search, search_agent, search_tree
from c4jax.agents.policy import masked_logits
from c4jax.games import base as games


# --------------------------------------------------------------------------- the games


@struct.dataclass
class NimState:
    pile: jax.Array  # int32[]: stones left
    current_player: jax.Array  # int32[]
    legal_action_mask: jax.Array  # bool[3]: take 1, 2, 3
    rewards: jax.Array  # float32[2]
    terminated: jax.Array  # bool[]
    truncated: jax.Array  # bool[]


BONUS = 4  # leaving a positive multiple of BONUS stones gives the mover another move


@dataclass(frozen=True)
class BonusNim:
    pile: int = 10
    id: str = "bonus_nim"
    num_actions: int = 3
    num_players: int = 2

    @property
    def observation_shape(self):
        return (self.pile + 1,)

    @property
    def max_steps(self):
        return self.pile  # every move takes at least one stone

    def state(self, pile, player=0) -> NimState:
        pile = jnp.asarray(pile, jnp.int32)
        return NimState(pile=pile, current_player=jnp.asarray(player, jnp.int32),
                        legal_action_mask=jnp.arange(3) < pile, rewards=jnp.zeros(2, jnp.float32),
                        terminated=pile == 0, truncated=jnp.bool_(False))

    def init(self, key=None) -> NimState:
        return self.state(self.pile)

    def step(self, state: NimState, action, key=None) -> NimState:
        del key
        action = jnp.asarray(action, jnp.int32)
        player = state.current_player
        legal = state.legal_action_mask[jnp.clip(action, 0, 2)] & (action >= 0) & (action < 3)
        pile = jnp.where(legal, state.pile - action - 1, state.pile)
        over = ~legal | (pile == 0)
        mover = jnp.where(legal, 1.0, -1.0)  # the last stone wins; an illegal move loses
        rewards = jnp.where(over, jnp.where(jnp.arange(2) == player, mover, -mover), 0.0).astype(jnp.float32)
        again = legal & (pile > 0) & (pile % BONUS == 0)
        new = NimState(pile=pile, current_player=jnp.where(again | over, player, 1 - player),
                       legal_action_mask=(jnp.arange(3) < pile) & ~over, rewards=rewards, terminated=over,
                       truncated=jnp.bool_(False))
        return jax.tree.map(lambda old, n: jnp.where(state.terminated, old, n), state, new)  # absorbing

    def observe(self, state: NimState):
        return jax.nn.one_hot(state.pile, self.pile + 1)


_LINES = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]])


@struct.dataclass
class TTTState:
    board: jax.Array  # int32[9]: 0 empty, 1 player 0's mark, -1 player 1's
    current_player: jax.Array
    legal_action_mask: jax.Array  # bool[9]
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array


@dataclass(frozen=True)
class TicTacToe:
    id: str = "tic_tac_toe"
    num_actions: int = 9
    num_players: int = 2
    observation_shape: tuple = (3, 3, 2)
    max_steps: int = 9

    def state(self, rows: list[str]) -> TTTState:
        """'x' = player 0, 'o' = player 1; the player to move follows from the counts."""
        board = np.array([{"x": 1, "o": -1, ".": 0}[c] for c in "".join(rows)], np.int32)
        player = int((board != 0).sum() % 2)
        return TTTState(board=jnp.asarray(board), current_player=jnp.int32(player),
                        legal_action_mask=jnp.asarray(board == 0), rewards=jnp.zeros(2, jnp.float32),
                        terminated=jnp.bool_(False), truncated=jnp.bool_(False))

    def init(self, key=None) -> TTTState:
        return self.state(["...", "...", "..."])

    def step(self, state: TTTState, action, key=None) -> TTTState:
        del key
        player = state.current_player
        legal = state.legal_action_mask[action]
        board = jnp.where(legal, state.board.at[action].set(jnp.where(player == 0, 1, -1)), state.board)
        won = legal & (board[_LINES].sum(-1) == jnp.where(player == 0, 3, -3)).any()
        over = won | ~legal | (board != 0).all()
        mover = jnp.where(won, 1.0, jnp.where(legal, 0.0, -1.0))
        rewards = jnp.where(jnp.arange(2) == player, mover, -mover).astype(jnp.float32)
        new = TTTState(board=board, current_player=1 - player, legal_action_mask=(board == 0) & ~over,
                       rewards=rewards, terminated=over, truncated=jnp.bool_(False))
        return jax.tree.map(lambda old, n: jnp.where(state.terminated, old, n), state, new)

    def observe(self, state: TTTState):
        mine = jnp.where(state.current_player == 0, 1, -1)
        b = state.board.reshape(3, 3)
        return jnp.stack([b == mine, b == -mine], axis=-1)


NIM, TTT = BonusNim(), TicTacToe()


def stack(*states):
    return jax.tree.map(lambda *x: jnp.stack(x), *states)


# --------------------------------------------------------------------------- exact values


def _moves(p):
    return [a for a in range(3) if a + 1 <= p]


@lru_cache(None)
def nim_value(p: int, alternate: bool = False) -> int:
    """Minimax value for the player to move with p stones (``alternate``: the wrong model in
    which the player always changes)."""
    return max(nim_q(p, a, alternate) for a in _moves(p))


def nim_q(p: int, a: int, alternate: bool = False) -> int:
    left = p - a - 1
    if left == 0:
        return 1
    again = not alternate and left % BONUS == 0
    return nim_value(left, alternate) if again else -nim_value(left, alternate)


@lru_cache(None)
def nim_random_value(p: int, alternate: bool = False) -> float:
    """Expected result of uniformly random play from p stones, for the player to move."""
    total = 0.0
    for a in _moves(p):
        left = p - a - 1
        if left == 0:
            total += 1.0
        else:
            again = not alternate and left % BONUS == 0
            total += nim_random_value(left, alternate) * (1 if again else -1)
    return total / len(_moves(p))


def test_the_exact_values_need_the_bonus_moves():
    """The reference itself: with the bonus moves the best moves differ from the alternating
    model's, so a search that flips the sign on every move cannot pass the tests below."""
    assert [nim_value(p) for p in (4, 5, 6, 7, 8, 9)] == [-1, -1, 1, 1, 1, 1]
    assert [nim_value(p, True) for p in (5, 8)] == [1, -1]
    for p in (6, 7, 8):
        best = [a for a in _moves(p) if nim_q(p, a) == 1]
        assert len(best) == 1 and nim_q(p, best[0], True) == -1


# --------------------------------------------------------------------------- the model


def test_discount_is_plus_one_when_the_same_player_moves_again():
    assert games.check_game(NIM) is NIM and games.check_game(TTT) is TTT  # both follow the protocol
    model = search.recurrent_fn(search.RolloutEvaluator(NIM), NIM)
    states = stack(NIM.state(6), NIM.state(6), NIM.state(2), NIM.state(3, player=1))
    keys = jax.random.key_data(jax.random.split(jax.random.key(0), 4))
    out, (new, _) = model(None, None, jnp.array([1, 0, 1, 0]), (states, keys))
    # 6 - 2 = 4 left: a bonus move (+1); 6 - 1 = 5: the opponent's turn (-1); 2 - 2: the last
    # stone wins (+1 reward, discount 0); 3 - 1 = 2 by player 1: -1.
    assert out.discount.tolist() == [1.0, -1.0, 0.0, -1.0]
    assert out.reward.tolist() == [0.0, 0.0, 1.0, 0.0]
    assert new.current_player.tolist() == [0, 1, 0, 0]
    assert float(out.value[2]) == 0.0  # a finished node is worth 0


def _exact_evaluator(params, keys, states):
    """The exact minimax value of every Nim position (an oracle), uniform prior."""
    del params, keys
    table = jnp.asarray([0.0] + [float(nim_value(p)) for p in range(1, NIM.pile + 1)], jnp.float32)
    return jnp.zeros(states.legal_action_mask.shape, jnp.float32), table[states.pile]


def test_one_visit_per_action_gives_the_exact_q_values():
    """UCT tries every legal action once first: with the exact values as evaluator, each root
    Q is reward + discount * value of the child, the exact Q."""
    piles = (4, 5, 6, 7, 8, 9, 10)
    out = search.run(_exact_evaluator, None, stack(*(NIM.state(p) for p in piles)), jax.random.split(
        jax.random.key(0), len(piles)), 3, game=NIM, rule="uct")
    for i, p in enumerate(piles):
        assert out.visit_counts[i].tolist() == [1, 1, 1]
        assert out.qvalues[i].tolist() == [float(nim_q(p, a)) for a in range(3)], p


@pytest.mark.parametrize("rule", ["uct", "puct"])
def test_pure_mcts_finds_the_minimax_moves(rule):
    """Random playouts and enough simulations: the most visited root action is the unique
    winning move where there is one and has the highest Q (which tends to +1; averaging MCTS gets
    there slowly, > 0.4 at 1500 simulations), and losing roots have every Q negative."""
    piles = (5, 6, 7, 8, 9, 10)
    out = jax.jit(search.run, static_argnums=(0, 4), static_argnames=("game", "rule"))(
        search.RolloutEvaluator(NIM), None, stack(*(NIM.state(p) for p in piles)),
        jax.random.split(jax.random.key(1), len(piles)), 1500, game=NIM, rule=rule)
    for i, p in enumerate(piles):
        q, visits = np.asarray(out.qvalues[i]), np.asarray(out.visit_counts[i])
        if nim_value(p) == 1:
            best = [a for a in _moves(p) if nim_q(p, a) == 1]
            assert best == [int(np.argmax(visits))] == [int(np.argmax(q))] and q[best[0]] > 0.3, (p, visits, q)
        else:
            assert float(out.root_value[i]) < -0.5 and q.max() < -0.5, (p, visits, q)


@pytest.mark.parametrize("rule", ["uct", "puct"])
def test_the_solver_proves_the_exact_values_with_bonus_moves(rule):
    """With proven values, every Nim root of 4..10 stones is proven at its exact minimax value
    within 400 simulations, through bonus moves (discount +1: the child's proven value keeps its
    sign) and ordinary ones (-1); every proven root edge has its exact Q, and the move is a win."""
    piles = (4, 5, 6, 7, 8, 9, 10)
    states = stack(*(NIM.state(p) for p in piles))
    out = jax.jit(search.run, static_argnums=(0, 4), static_argnames=("game", "rule", "solve"))(
        search.RolloutEvaluator(NIM), None, states, jax.random.split(jax.random.key(2), len(piles)), 400,
        game=NIM, rule=rule, solve=True)
    best = np.asarray(search.best_action(out, states.legal_action_mask))
    for i, p in enumerate(piles):
        assert float(out.tree.proven[i, 0]) == nim_value(p) == float(out.root_value[i]), p
        for a in np.flatnonzero(np.asarray(out.proven[i])):
            assert float(out.proven[i, a]) == nim_q(p, a), (p, a)
        if nim_value(p) == 1:
            assert nim_q(p, int(best[i])) == 1, p
    assert out.visit_counts.sum(-1).tolist() == [400] * len(piles)


@pytest.mark.parametrize("rule", ["uct", "puct"])
def test_the_search_builds_mctx_public_search_tree(rule):
    """Our tree, walk, expansion and backup against ``mctx.search`` (public API) with the same
    model and the same selection rule: the same trees on Nim (bonus moves), every node, edge,
    visit count, reward and discount exactly, the backed-up mean values to float rounding (the two
    programs are compiled apart, and XLA may round their running means differently)."""
    piles = (6, 7, 10)
    states = stack(*(NIM.state(p) for p in piles))
    keys = jax.random.split(jax.random.key(3), len(piles))
    evaluate = search.RolloutEvaluator(NIM)
    ours = jax.jit(search.run, static_argnums=(0, 4), static_argnames=("game", "rule"))(
        evaluate, None, states, keys, 40, game=NIM, rule=rule).tree
    logits, value = evaluate(None, jax.vmap(jax.random.fold_in)(keys, jnp.zeros(3, jnp.uint32)), states)
    legal = states.legal_action_mask
    root = mctx.RootFnOutput(prior_logits=masked_logits(logits, legal), value=value,
                             embedding=(states, jax.random.key_data(keys)))
    select = search_tree.selection(rule, search.PB_C_INIT if rule == "puct" else search.UCT_C, search.PB_C_BASE)
    theirs = jax.jit(lambda r: mctx.search(
        None, jax.random.key(0), root=r, recurrent_fn=search.recurrent_fn(evaluate, NIM),
        root_action_selection_fn=lambda k, t, i: select(t, i, 0),
        interior_action_selection_fn=lambda k, t, i, d: select(t, i, d),
        num_simulations=40, invalid_actions=~legal))(root)
    for field in ("node_visits", "raw_values", "parents", "action_from_parent", "children_index",
                  "children_prior_logits", "children_visits", "children_rewards", "children_discounts",
                  "root_invalid_actions"):
        np.testing.assert_array_equal(np.asarray(getattr(ours, field)), np.asarray(getattr(theirs, field)), field)
    for field in ("node_values", "children_values"):  # running means: XLA may round them differently
        np.testing.assert_allclose(np.asarray(getattr(ours, field)), np.asarray(getattr(theirs, field)),
                                   rtol=0, atol=1e-6, err_msg=field)
    jax.tree.map(np.testing.assert_array_equal, ours.embeddings, theirs.embeddings)
    assert (np.asarray(ours.children_discounts) == 1.0).any()  # bonus moves were searched


# --------------------------------------------------------------------------- random playouts


def test_random_playout_scores_the_root_player_by_current_player():
    keys = jax.random.split(jax.random.key(2), 4000)
    playout = jax.jit(jax.vmap(lambda s, k: search.random_playout(NIM, s, k), in_axes=(None, 0)))
    for p in (5, 8):
        assert abs(nim_random_value(p) - nim_random_value(p, True)) > 0.15  # the model matters here
        for player in (0, 1):
            values = np.asarray(playout(NIM.state(p, player), keys))
            assert set(np.unique(values).tolist()) <= {-1.0, 1.0}
            assert abs(values.mean() - nim_random_value(p)) < 0.06, (p, player, values.mean())  # 3.8 sigma
    assert float(search.random_playout(NIM, NIM.state(1), jax.random.key(0))) == 1.0
    finished = NIM.step(NIM.state(1), 0)
    assert float(search.random_playout(NIM, finished, jax.random.key(0))) == 0.0


@lru_cache(None)
def ttt_random_value(board: tuple, player: int) -> float:
    """Expected result of uniformly random tic-tac-toe from ``board`` for ``player`` to move."""
    mark = 1 if player == 0 else -1
    empty = [i for i in range(9) if board[i] == 0]
    total = 0.0
    for i in empty:
        b = list(board)
        b[i] = mark
        if any(sum(b[j] for j in line) == 3 * mark for line in _LINES):
            total += 1.0
        elif all(b):
            total += 0.0
        else:
            total -= ttt_random_value(tuple(b), 1 - player)
    return total / len(empty)


def test_random_playout_on_tic_tac_toe():
    rows = ["xo.", ".x.", "o.."]
    state = TTT.state(rows)
    values = np.asarray(jax.jit(jax.vmap(lambda k: search.random_playout(TTT, state, k)))(
        jax.random.split(jax.random.key(4), 4000)))
    exact = ttt_random_value(tuple(np.asarray(state.board).tolist()), int(state.current_player))
    assert set(np.unique(values).tolist()) <= {-1.0, 0.0, 1.0}
    assert abs(values.mean() - exact) < 0.065, (values.mean(), exact)
    # x to move with one cell left: completing a diagonal (+1), filling the board (a draw, 0).
    assert float(search.random_playout(TTT, TTT.state(["xox", "oxo", "ox."]), jax.random.key(0))) == 1.0
    assert float(search.random_playout(TTT, TTT.state(["xox", "xoo", "ox."]), jax.random.key(0))) == 0.0


# --------------------------------------------------------------------------- agents on states


@pytest.mark.slow
def test_mcts_agent_plays_tic_tac_toe_states():
    win = TTT.state(["xx.", "oo.", "..."])  # x to move wins at 2
    block = TTT.state(["x..", "oo.", "x.."])  # x to move must block at 5
    states = stack(win, block)
    agent = search_agent.MCTSAgent(num_simulations=100, deterministic=True, game=TTT)
    assert agent.act_states(states, jax.random.key(0)).tolist() == [2, 5]
    assert agent.act_states(states, jax.random.PRNGKey(0)).tolist() == [2, 5]  # legacy keys too
    scores = np.asarray(agent.scores_states(states))
    np.testing.assert_array_equal(scores, np.asarray(agent.scores_states(states)))  # keyed by the position
    assert np.isneginf(scores[0, [0, 1, 3, 4]]).all() and np.isclose(scores[0, [2, 5, 6, 7, 8]].sum(), 1.0)
    assert int(np.argmax(scores[0])) == 2 and int(np.argmax(scores[1])) == 5
    inside = jax.jit(lambda a, s, k: a.act_states(s, k))(agent, states, jax.random.key(0))
    assert inside.tolist() == [2, 5]
    with pytest.raises(TypeError, match="act_states"):
        agent.act(np.zeros((1, 6, 7), np.int8), jax.random.key(0))


def test_board_keys_of_a_game_are_functions_of_the_observation():
    a, b = TTT.state(["x..", "...", "..."]), TTT.state(["...", ".x.", "..."])
    keys = jax.random.key_data(search.board_keys(stack(a, b, a), game=TTT))
    np.testing.assert_array_equal(keys[0], keys[2])
    assert not np.array_equal(keys[0], keys[1])
