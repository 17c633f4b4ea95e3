"""Merging repeated positions of a self-play batch (c4jax/learning/dedup.py): against a plain
Python group-by, by hand, and inside an AlphaZero iteration (--merge-repeats)."""

from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from c4jax.learning import alphazero as azl
from c4jax.learning.alphazero import Sample
from c4jax.learning.dedup import merge_repeats, observation_hashes
from c4jax.nets import cnet
from c4jax import games as c4games

C4 = c4games.make(c4games.DEFAULT)

_merge = jax.jit(merge_repeats)


def test_copies_average_their_targets_and_rows_without_a_policy_do_not_dilute_it():
    boards = jnp.array([[0, 1], [1, 0], [0, 1], [0, 1], [2, 2]], jnp.int8)
    policy = jnp.array([[1, 0], [0, 1], [0, 0], [0, 1], [1, 0]], jnp.float32)
    value = jnp.array([1.0, -1.0, 0.0, 0.5, 0.3])
    valid = jnp.array([True, True, True, True, False])  # the last row is not a position
    rows, keep = _merge(Sample(board=boards, policy=policy, value=value), valid)
    kept = {tuple(b): (tuple(p), v) for b, p, v, k in
            zip(np.asarray(rows.board).tolist(), np.asarray(rows.policy).tolist(), np.asarray(rows.value).tolist(),
                np.asarray(keep)) if k}
    assert kept == {(0, 1): ((0.5, 0.5), 0.5), (1, 0): ((0.0, 1.0), -1.0)}


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.booleans(), st.booleans()), min_size=1,
                max_size=24))
def test_matches_a_python_group_by(spec):
    # spec: (board id, policy column, has a policy target, valid) per row
    board_of = np.array([[i % 2, i // 2, 1] for i in range(4)], np.int8)
    boards = board_of[[s[0] for s in spec]]
    policy = np.zeros((len(spec), 3), np.float32)
    for i, (_, col, has, _) in enumerate(spec):
        policy[i, col] = float(has)
    value = np.linspace(-1, 1, len(spec)).astype(np.float32)
    valid = np.array([s[3] for s in spec])
    rows, keep = _merge(Sample(board=jnp.asarray(boards), policy=jnp.asarray(policy), value=jnp.asarray(value)),
                        jnp.asarray(valid))
    groups = collections.defaultdict(list)
    for i in np.flatnonzero(valid):
        groups[spec[i][0]].append(i)
    keep = np.asarray(keep)
    assert keep.sum() == len(groups)
    got = {tuple(np.asarray(rows.board)[i]): (np.asarray(rows.policy)[i], np.asarray(rows.value)[i])
           for i in np.flatnonzero(keep)}
    for b, idx in groups.items():
        p, v = got[tuple(board_of[b])]
        with_target = [i for i in idx if policy[i].sum() > 0]
        np.testing.assert_allclose(v, value[idx].mean(), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(p, policy[with_target].mean(axis=0) if with_target else np.zeros(3), atol=1e-6)


def test_hashes_tell_apart_positions_that_differ_in_one_cell():
    boards = jnp.zeros((43, 6, 7), jnp.int8).reshape(43, 42).at[jnp.arange(1, 43), jnp.arange(42)].set(1)
    h1, h2 = observation_hashes(boards.reshape(43, 6, 7))
    assert len({(int(a), int(b)) for a, b in zip(h1, h2)}) == 43


def test_an_iteration_stores_each_position_once():
    cfg = azl.AlphaZeroConfig(games=8, num_simulations=2, max_considered=2, updates_per_iteration=1,
                              iterations_per_eval=1, buffer_size=1000, batch_size=4, width=4, merge_repeats=True)
    algo = azl.AlphaZero(cfg, game=C4)
    state = algo.init(jax.random.key(1), cnet.init_params(jax.random.key(0), width=4, heads="two"))
    state, metrics = algo.chunk(state)
    size = int(state.buffer.size)
    boards = np.asarray(state.buffer.items.board[:size]).reshape(size, -1)
    assert len({b.tobytes() for b in boards}) == size  # every stored position is distinct
    assert 0.0 < float(metrics["selfplay/distinct_share"]) < 1.0  # the empty board alone repeats
