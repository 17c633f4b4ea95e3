"""On-policy building blocks: self-play collection with mirrors, the PPO buffer, PPO and
REINFORCE updates with a frozen conv block, and the supervised -> two-head transfer."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from c4jax.learning import losses
from c4jax.nets import cnet
from c4jax.agents import arena
from c4jax.nets.cnet import CNet
from c4jax.learning import onpolicy
from c4jax.learning.optim import make_optimizer

GAMES = 6
ROWS = 2 * GAMES * 42
# Jitted (eager initialisation and eager random start states would dominate the runtime).
random_initial_states = jax.jit(arena.random_initial_states, static_argnums=1)


init_params = jax.jit(cnet.init_params, static_argnames=("width", "heads"))


@pytest.fixture(scope="module")
def params():
    return init_params(jax.random.key(0), heads="two")


@pytest.fixture(scope="module")
def batch(params):
    states = random_initial_states(jax.random.key(1), GAMES)
    return jax.device_get(onpolicy.collect(params, jax.random.key(2), states, gamma=0.95))


def _np_log_softmax_masked(logits, legal):
    z = np.where(legal, logits, -np.inf).astype(np.float64)
    return z - (np.log(np.exp(z - z.max(-1, keepdims=True)).sum(-1, keepdims=True)) + z.max(-1, keepdims=True))


def _bits(tree):
    return [np.asarray(x).view(np.uint32) for x in jax.tree.leaves(tree)]


def _same_bits(a, b):
    return all(np.array_equal(x, y) for x, y in zip(_bits(a), _bits(b)))


def test_batch_shapes_and_layout(batch):
    assert batch.boards.shape == (ROWS, 6, 7) and batch.boards.dtype == np.int8
    for name in ("actions", "rewards", "returns", "old_logp", "old_value", "advantages", "done", "valid", "mirrored"):
        assert getattr(batch, name).shape == (ROWS,), name
    ep = jax.tree.map(lambda x: x.reshape((GAMES, 2, 42) + x.shape[1:]), batch)
    assert not ep.mirrored[:, 0].any() and ep.mirrored[:, 1].all()
    lengths = ep.valid[:, 0].sum(-1)
    assert (lengths >= 1).all()
    np.testing.assert_array_equal(ep.valid[:, 0], np.arange(42)[None] < lengths[:, None])  # a prefix
    np.testing.assert_array_equal(ep.done[:, 0].argmax(-1), lengths - 1)  # the last valid move ends the game
    # Sampled moves are legal on their boards.
    b, a = ep.boards[:, 0][ep.valid[:, 0]], ep.actions[:, 0][ep.valid[:, 0]]
    assert (b[np.arange(len(a)), 0, a] == 0).all()


def test_mirrored_rows_are_mirrors(batch):
    ep = jax.tree.map(lambda x: x.reshape((GAMES, 2, 42) + x.shape[1:]), batch)
    orig, mir = jax.tree.map(lambda x: x[:, 0], ep), jax.tree.map(lambda x: x[:, 1], ep)
    v = orig.valid
    np.testing.assert_array_equal(mir.valid, v)
    np.testing.assert_array_equal(mir.boards[v], orig.boards[v][..., ::-1])
    np.testing.assert_array_equal(mir.actions[v], 6 - orig.actions[v])
    for name in ("rewards", "returns", "done"):
        np.testing.assert_array_equal(getattr(mir, name), getattr(orig, name), err_msg=name)


def test_log_probs_and_values_recomputed_directly(params, batch):
    """old_logp (originals and mirrors) = log pi of the recorded action on the recorded board."""
    v = batch.valid
    boards, actions = batch.boards[v], batch.actions[v]
    logits, values = CNet(heads="two").apply({"params": params}, jnp.asarray(boards))
    logp = _np_log_softmax_masked(np.asarray(logits), boards[:, 0, :] == 0)[np.arange(len(actions)), actions]
    np.testing.assert_allclose(batch.old_logp[v], logp, atol=1e-4)
    np.testing.assert_allclose(batch.old_value[v], values, atol=1e-5)
    # A mirrored row's log-prob is the mirrored action on the mirrored board, not a copy of the
    # original's (an untrained network is not mirror-symmetric).
    ep = jax.tree.map(lambda x: x.reshape((GAMES, 2, 42) + x.shape[1:]), batch)
    w = ep.valid[:, 0]
    assert not np.allclose(ep.old_logp[:, 1][w], ep.old_logp[:, 0][w])


def test_returns_advantages_and_backprop_rewards(batch):
    ep = jax.tree.map(lambda x: x.reshape((GAMES * 2, 42) + x.shape[1:]), batch)
    g = jax.vmap(losses.turn_based_returns, in_axes=(0, 0, None))(ep.rewards, ep.valid, 0.95)
    np.testing.assert_allclose(ep.returns, g, rtol=1e-6, atol=1e-6)
    # Default lambda 1: the thesis advantage G - V_old.
    np.testing.assert_allclose(ep.advantages, np.where(ep.valid, ep.returns - ep.old_value, 0.0), atol=1e-4)
    # design.md §2: the last move's reward is +1 for a win (back-propagated rewards keep it); padding is 0.
    assert (ep.rewards[~ep.valid] == 0).all() and (ep.returns[~ep.valid] == 0).all()


def test_take_first_keeps_order_and_exactly_n(batch):
    n = 50
    buf = jax.device_get(onpolicy.take_first(batch, n))
    assert buf.valid.shape == (n,) and buf.valid.all()
    idx = np.flatnonzero(batch.valid)[:n]
    np.testing.assert_array_equal(buf.boards, batch.boards[idx])
    np.testing.assert_array_equal(buf.actions, batch.actions[idx])
    np.testing.assert_array_equal(buf.old_logp, batch.old_logp[idx])
    # More rows asked than available (even than the batch has): the rest is marked invalid.
    count = int(batch.valid.sum())
    big = jax.device_get(onpolicy.take_first(batch, ROWS + 10))
    assert big.valid.shape == (ROWS + 10,) and big.valid.sum() == count
    assert big.valid[:count].all() and not big.valid[count:].any()
    np.testing.assert_array_equal(big.actions[:count], batch.actions[batch.valid])


def test_make_optimizer_freezes_conv(params):
    tx = make_optimizer(1e-2, 1e-1)
    grads = jax.tree.map(jnp.ones_like, params)
    updates, _ = jax.jit(tx.update)(grads, tx.init(params), params)
    assert all((np.asarray(u) == 0).all() for u in jax.tree.leaves(updates["conv"]))
    assert all((np.asarray(u) != 0).any() for u in jax.tree.leaves(updates["dense"]))


@pytest.fixture(scope="module")
def ppo_result(params, batch):
    tx = make_optimizer(1e-3, 5e-5)
    buf = onpolicy.take_first(batch, 40)
    out = onpolicy.ppo_update(params, tx.init(params), buf, jax.random.key(3), tx=tx, epochs=2,
                              minibatch_size=16)
    return tx, buf, out


def test_ppo_update_frozen_conv(params, ppo_result):
    _, buf, (new, _, metrics) = ppo_result
    assert _same_bits(params["conv"], new["conv"])
    for name in ("dense", "head", "value"):
        assert not _same_bits(params[name], new[name]), name
    for k, v in metrics.items():
        assert np.isfinite(v).all(), k
    assert int(metrics["train/samples"]) == int(buf.valid.sum()) == 40
    assert int(metrics["train/updates"]) == 2 * 3  # ceil(40 / 16) minibatches per epoch
    assert 0.0 <= float(metrics["train/clip_fraction"]) <= 1.0 and float(metrics["train/entropy"]) > 0


def test_ppo_update_skips_empty_minibatches(params, ppo_result):
    tx, buf, _ = ppo_result
    opt_state = tx.init(params)
    empty = buf.replace(valid=jnp.zeros_like(buf.valid))
    new, new_opt, metrics = onpolicy.ppo_update(params, opt_state, empty, jax.random.key(4), tx=tx, epochs=2,
                                                minibatch_size=16)
    assert _same_bits(params, new) and _same_bits(opt_state, new_opt)
    assert int(metrics["train/updates"]) == 0


def test_reinforce_update_frozen_conv(params, batch):
    tx = make_optimizer(1e-3, 1e-3)
    opt_state = tx.init(params)
    episodes = onpolicy.split_episodes(batch)
    first = jax.tree.map(lambda x: x[0], episodes)
    new, _, metrics = onpolicy.reinforce_update(params, opt_state, first, tx=tx, c1=0.75)
    assert _same_bits(params["conv"], new["conv"])
    for name in ("dense", "head", "value"):
        assert not _same_bits(params[name], new[name]), name
    assert all(np.isfinite(v) for v in metrics.values())
    assert int(metrics["train/samples"]) == int(first.valid.sum())

    # K episodes in sequence: the scan helper equals K single steps.
    p_scan, _, m_scan = onpolicy.reinforce_updates(params, opt_state, batch, tx=tx, c1=0.75)
    assert m_scan["train/loss"].shape == (GAMES,) and np.isfinite(m_scan["train/loss"]).all()
    p, o = params, opt_state
    for k in range(GAMES):
        p, o, _ = onpolicy.reinforce_update(p, o, jax.tree.map(lambda x: x[k], episodes), tx=tx, c1=0.75)
    assert _same_bits(p_scan["conv"], params["conv"])
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, atol=1e-6), p_scan, p)
