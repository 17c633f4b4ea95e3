"""CNET128 shapes and parameter counts, preprocessing, the im2col conv, masked policies."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from c4jax.nets import cnet, tower
from c4jax.agents import policy
from c4jax import games as c4games
from params import num_params

C4 = c4games.make(c4games.DEFAULT)


@pytest.mark.parametrize(
    "heads, total", [("one", 185_735), ("two", 202_376), ("dueling", 202_376)]
)
def test_parameter_counts_match_the_thesis(heads, total):
    p = cnet.init_params(jax.random.key(0), width=128, heads=heads)
    assert num_params(p) == total
    assert num_params(p["conv"]) == 69_888
    assert num_params(p["dense"]) == 98_432
    assert num_params(p["head"]) == 17_415
    if heads != "one":
        assert num_params(p["value"]) == 16_641


@pytest.mark.parametrize("width", [96, 160, 192])
def test_other_widths_keep_the_structure(width):
    p = cnet.init_params(jax.random.key(0), width=width)
    conv = 16 * 2 * width + width + 4 * width * width + width
    dense = 6 * width * width + width
    head = width * width + width + 7 * width + 7
    assert num_params(p) == conv + dense + head


def test_output_shapes():
    boards = jnp.zeros((5, 6, 7), jnp.int8)
    for heads in cnet.HEADS:
        net = cnet.CNet(heads=heads)
        out = net.apply({"params": cnet.init_params(jax.random.key(1), heads=heads)}, boards)
        if heads == "two":
            assert out[0].shape == (5, 7) and out[1].shape == (5,)
        else:
            assert out.shape == (5, 7)


def test_dueling_combines_value_and_centred_advantage():
    p = cnet.init_params(jax.random.key(2), heads="dueling")
    boards = jax.random.randint(jax.random.key(3), (4, 6, 7), -1, 2).astype(jnp.int8)
    adv, value = cnet.CNet(heads="two").apply({"params": p}, boards)
    q = cnet.CNet(heads="dueling").apply({"params": p}, boards)
    np.testing.assert_allclose(q, value[:, None] + adv - adv.mean(-1, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(q.mean(-1), value, rtol=1e-5, atol=1e-5)


def test_preprocessing_on_a_hand_built_board():
    board = np.zeros((6, 7), np.int8)
    board[5, 3], board[5, 4], board[4, 3] = 1, -1, 1  # two own stones in col 3, one opponent in col 4
    board[:, 0] = [-1, 1, -1, 1, -1, 1]  # rows 0..5: top -1, bottom 1
    x = np.asarray(cnet.preprocess(board))
    assert x.shape == (6, 7, 2)
    own, opp = x[..., 0], x[..., 1]
    playable = {(5, 1), (5, 2), (3, 3), (4, 4), (5, 5), (5, 6)}  # column 0 is full
    for r in range(6):
        for c in range(7):
            if (r, c) in playable:
                assert own[r, c] == -1 and opp[r, c] == -1, (r, c)
            else:
                assert own[r, c] == (board[r, c] == 1), (r, c)
                assert opp[r, c] == (board[r, c] == -1), (r, c)


def test_valid_conv_equals_flax_conv():
    x = jax.random.normal(jax.random.key(4), (3, 6, 7, 2))
    for k, cin in (((4, 4), 2), ((2, 2), 2)):
        conv = cnet.ValidConv(16, k)
        p = conv.init(jax.random.key(5), x)
        ref = nn.Conv(16, k, padding="VALID").apply(p, x)
        np.testing.assert_allclose(conv.apply(p, x), ref, rtol=1e-5, atol=1e-5)


def test_unknown_heads_is_a_clear_error():
    with pytest.raises(ValueError, match="heads must be one of"):
        cnet.init_params(jax.random.key(0), heads="three")


# --- masked policies --------------------------------------------------------------------------


@pytest.mark.parametrize("legal", [
    [True] * 7,
    [False, False, False, True, False, False, False],  # a single legal column
    [True, False, True, False, True, False, False],
])
def test_masked_softmax_puts_no_mass_on_illegal_columns_and_no_nan(legal):
    legal = jnp.asarray(legal)
    for logits in (jnp.zeros(7), jnp.array([50.0, -50, 3, 1e4, -1e4, 0, 2]), jnp.full(7, -3e38).at[3].set(3e38)):
        p = policy.masked_softmax(logits, legal)
        assert not jnp.isnan(p).any()
        np.testing.assert_allclose(p.sum(), 1.0, rtol=1e-6)
        assert (p[~legal] == 0).all()
        lp = policy.masked_log_softmax(logits, legal)
        assert not jnp.isnan(lp[legal]).any()


def test_greedy_sample_and_epsilon_greedy_only_pick_legal_columns():
    legal = jnp.array([False, True, False, False, True, False, False])
    values = jnp.array([9.0, 1, 8, 7, 2, 6, 5])
    assert int(policy.greedy(values, legal)) == 4
    keys = jax.random.split(jax.random.key(0), 500)
    s = jax.vmap(lambda k: policy.sample(k, values, legal))(keys)
    e = jax.vmap(lambda k: policy.epsilon_greedy(k, values, legal, 1.0))(keys)
    assert set(np.asarray(s).tolist()) <= {1, 4} and set(np.asarray(e).tolist()) == {1, 4}
    g = jax.vmap(lambda k: policy.epsilon_greedy(k, values, legal, 0.0))(keys)
    assert (g == 4).all()


# --- the residual tower (AlphaZero's alternative network) -------------------------------------


def test_same_conv3_equals_flax_same_conv():
    x = jax.random.normal(jax.random.key(6), (3, 6, 7, 5))
    conv = tower.SameConv3(8)
    p = conv.init(jax.random.key(7), x)
    ref = nn.Conv(8, (3, 3), padding="SAME").apply({"params": p["params"]["conv"]}, x)
    np.testing.assert_allclose(conv.apply(p, x), ref, rtol=1e-5, atol=1e-5)


def test_tower_shapes_and_blocks_start_as_the_identity():
    boards = jnp.asarray(np.random.default_rng(0).integers(-1, 2, (5, 6, 7)), jnp.int8)
    params = tower.init_params(jax.random.key(0), C4, tower=(3, 16))
    logits, value = tower.two_headed(C4, tower=(3, 16)).apply({"params": params}, boards)
    assert logits.shape == (5, 7) and value.shape == (5,)
    # every block's second convolution starts at zero: the fresh tower is its stem and heads
    shallow = {k: v for k, v in params.items() if not k.startswith("block")}
    np.testing.assert_allclose(tower.Tower(num_actions=C4.num_actions, encoding=tower.encoding_for(C4), blocks=0, channels=16).apply({"params": shallow}, boards)[0], logits,
                               rtol=1e-6, atol=1e-6)
    assert isinstance(tower.two_headed(C4, 64), cnet.CNet)


@pytest.mark.parametrize("network, expected", [({"width": 128}, ()), ({"tower": [4, 64]}, (4, 64)),
                                               ({"tower": None}, ())])
def test_tower_from_metadata(network, expected):
    assert tower.from_metadata(network) == expected


@pytest.mark.parametrize("bad", [[4], [4, 0], [4, "64"], [1, 2, 3]])
def test_tower_from_metadata_rejects_malformed(bad):
    with pytest.raises(ValueError, match="blocks, channels"):
        tower.from_metadata({"tower": bad})


@pytest.mark.parametrize("net", [(), (1, 8)], ids=["cnet", "tower"])
def test_reply_head_is_one_more_subtree_and_output(net):
    boards = jnp.asarray(np.random.default_rng(1).integers(-1, 2, (5, 6, 7)), jnp.int8)
    plain = tower.init_params(jax.random.key(0), C4, width=8, tower=net)
    params = tower.init_params(jax.random.key(0), C4, width=8, tower=net, reply_head=True)
    assert set(params) - set(plain) == {tower.REPLY} and tower.REPLY not in plain
    assert tower.without_reply_head(params).keys() == plain.keys() and tower.without_reply_head(plain) is plain
    logits, value, reply = tower.two_headed(C4, 8, net, reply_head=True).apply({"params": params}, boards)
    assert reply.shape == logits.shape == (5, 7) and value.shape == (5,)
    # the other heads are those of the network without it (the same parameters, the same outputs)
    np.testing.assert_array_equal(tower.two_headed(C4, 8, net).apply({"params": tower.without_reply_head(params)},
                                                                 boards)[0], logits)


def test_reply_head_needs_two_heads():
    with pytest.raises(ValueError, match="reply head"):
        cnet.CNet(width=8, heads="one", reply_head=True).init(jax.random.key(0), jnp.zeros((1, 6, 7), jnp.int8))
