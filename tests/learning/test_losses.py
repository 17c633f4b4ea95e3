"""Returns, advantages, TD targets and policy losses on hand-computed numbers (jit and no-jit)."""

import functools
import math

import chex
import jax
import jax.numpy as jnp
import numpy as np
from absl.testing import parameterized

from c4jax.learning import losses

import turn_based

F, T = False, True
LN = math.log


def _legal(*cols):
    return jnp.array([c in cols for c in range(7)])


class ReturnsTest(chex.TestCase):
    # One 3-move episode padded to 4: rewards of the movers, alternating players.
    rewards = jnp.array([0.5, -1.0, 1.0, 7.0])  # the 7.0 is padding and must be ignored
    values = jnp.array([0.2, -0.4, 0.6, 9.0])
    valid = jnp.array([T, T, T, F])

    @chex.variants(with_jit=True, without_jit=True)
    def test_turn_based_returns(self):
        # G2 = 1; G1 = -1 - 0.5 * 1 = -1.5; G0 = 0.5 - 0.5 * (-1.5) = 1.25; padding 0.
        g = self.variant(turn_based.turn_based_returns)(self.rewards, self.valid, 0.5)
        np.testing.assert_allclose(g, [1.25, -1.5, 1.0, 0.0], rtol=1e-6)

    @chex.variants(with_jit=True, without_jit=True)
    def test_gae_turn_based(self):
        # delta2 = 1 - 0 - 0.6 = 0.4; delta1 = -1 - 0.5 * 0.6 + 0.4 = -0.9; delta0 = 0.5 + 0.5 * 0.4 - 0.2 = 0.5
        # lam 0.5: A2 = 0.4; A1 = -0.9 - 0.25 * 0.4 = -1.0; A0 = 0.5 - 0.25 * (-1.0) = 0.75
        a = self.variant(turn_based.gae_turn_based)(self.rewards, self.values, self.valid, 0.5, 0.5)
        np.testing.assert_allclose(a, [0.75, -1.0, 0.4, 0.0], rtol=1e-6, atol=1e-7)
        # lam 1 telescopes to G - V: [1.25 - 0.2, -1.5 + 0.4, 1 - 0.6, 0]
        a1 = self.variant(turn_based.gae_turn_based)(self.rewards, self.values, self.valid, 0.5, 1.0)
        np.testing.assert_allclose(a1, [1.05, -1.1, 0.4, 0.0], rtol=1e-6, atol=1e-7)
        # lam 0: the one-step TD errors
        a0 = self.variant(turn_based.gae_turn_based)(self.rewards, self.values, self.valid, 0.5, 0.0)
        np.testing.assert_allclose(a0, [0.5, -0.9, 0.4, 0.0], rtol=1e-6, atol=1e-7)

    def test_lambda_one_equals_returns_minus_values_on_random_episodes(self):
        key = jax.random.key(0)
        r = jax.random.normal(key, (16, 42))
        v = jax.random.normal(jax.random.key(1), (16, 42))
        valid = jnp.arange(42)[None] < jax.random.randint(jax.random.key(2), (16, 1), 1, 43)
        g = jax.vmap(turn_based.turn_based_returns, in_axes=(0, 0, None))(r, valid, 0.95)
        a = jax.vmap(turn_based.gae_turn_based, in_axes=(0, 0, 0, None, None))(r, v, valid, 0.95, 1.0)
        np.testing.assert_allclose(a, jnp.where(valid, g - v, 0.0), atol=1e-4)


def _negamax_gae_reference(r, v, sign, done, gamma, lam, last_value, valid):
    """Plain-Python GAE of negamax_gae's docstring, in float64."""
    n = len(r)
    v = [float(x) if ok else 0.0 for x, ok in zip(v, valid)]
    adv, a_next = [0.0] * n, 0.0
    for t in reversed(range(n)):
        if not valid[t]:
            a_next = 0.0
            continue
        v_next = v[t + 1] if t + 1 < n else float(last_value)
        cont = 0.0 if done[t] else gamma * float(sign[t])
        adv[t] = float(r[t]) + cont * v_next - v[t] + cont * lam * a_next
        a_next = adv[t]
    return adv


def _random_plies(seed, shape, prefix_valid=False):
    """Rewards (a third of them 0), tanh values, signs +-1, done flags and valid rows."""
    ks = jax.random.split(jax.random.key(seed), 6)
    r = jax.random.normal(ks[0], shape)
    r = jnp.where(jax.random.uniform(ks[1], shape) < 0.3, 0.0, r)
    v = jnp.tanh(jax.random.normal(ks[2], shape))
    sign = jnp.where(jax.random.uniform(ks[3], shape) < 0.3, 1.0, -1.0)
    done = jax.random.uniform(ks[4], shape) < 0.15
    if prefix_valid:
        valid = jnp.arange(shape[-1]) < jax.random.randint(ks[5], shape[:-1] + (1,), 0, shape[-1] + 1)
    else:
        valid = jax.random.uniform(ks[5], shape) < 0.85
    return r, v, sign, done, valid


class NegamaxGAETest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_the_sign_flips_when_the_opponent_moves_next(self):
        gae = self.variant(losses.negamax_gae)
        # players A, B, A; A's last move wins: A's rows are worth +1, B's -1 (lambda = gamma = 1, V = 0)
        zeros = jnp.zeros(3)
        adv = gae(jnp.array([0.0, 0.0, 1.0]), zeros, jnp.array([-1.0, -1.0, -1.0]), jnp.array([F, F, T]), 1.0, 1.0)
        np.testing.assert_array_equal(adv, [1.0, -1.0, 1.0])
        # a multi-jump: A moves twice (sign +1 after the first), then B makes a losing move
        adv = gae(jnp.array([0.0, 0.0, -1.0]), zeros, jnp.array([1.0, -1.0, -1.0]), jnp.array([F, F, T]), 1.0, 1.0)
        np.testing.assert_array_equal(adv, [1.0, 1.0, -1.0])

    @chex.variants(with_jit=True, without_jit=True)
    def test_it_bootstraps_from_the_last_value_and_stops_at_the_end_of_a_game(self):
        # lambda 0: one-step targets r + gamma * sign * V(next); a finished game does not look past its end
        values = jnp.array([0.5, 0.2, -0.3])
        adv = self.variant(losses.negamax_gae)(jnp.array([0.0, 1.0, 0.0]), values, jnp.array([-1.0, -1.0, 1.0]),
                                               jnp.array([F, T, F]), 0.9, 0.0, jnp.float32(0.4))
        np.testing.assert_allclose(adv + values, [-0.9 * 0.2, 1.0, 0.9 * 0.4], rtol=1e-6)

    @chex.variants(with_jit=True, without_jit=True)
    def test_random_episodes_match_a_plain_python_reference(self):
        r, v, sign, done, valid = _random_plies(0, (32, 20))
        last = jax.random.normal(jax.random.key(9), (32,))
        for gamma, lam in ((1.0, 0.95), (0.9, 0.5), (0.95, 0.0), (0.8, 1.0)):
            got = self.variant(jax.vmap(losses.negamax_gae, in_axes=(0, 0, 0, 0, None, None, 0, 0)))(
                r, v, sign, done, gamma, lam, last, valid)
            want = [_negamax_gae_reference(*map(np.asarray, (r[i], v[i], sign[i], done[i])), gamma, lam,
                                           last[i], np.asarray(valid[i])) for i in range(32)]
            np.testing.assert_allclose(got, np.array(want), rtol=1e-5, atol=1e-5)


# The thesis' turn-based formulas written out on their own (sign -1 at every move, padding after the
# last valid move): negamax_gae and its special cases must give exactly these floats.
def _thesis_gae(rewards, values, valid, gamma, lam):
    values = jnp.where(valid, values, 0.0)
    deltas = rewards - gamma * jnp.concatenate([values[1:], jnp.zeros(1)]) - values

    def step(a_next, x):
        a = jnp.where(x[1], x[0] - gamma * lam * a_next, 0.0)
        return a, a

    return jax.lax.scan(step, jnp.float32(0.0), (deltas, valid), reverse=True)[1]


def _thesis_returns(rewards, valid, gamma):
    def step(g_next, x):
        g = jnp.where(x[1], x[0] - gamma * g_next, 0.0)
        return g, g

    return jax.lax.scan(step, jnp.float32(0.0), (rewards, valid), reverse=True)[1]


def _thesis_one_step_td(rewards, values, valid, done, gamma):
    targets = rewards - gamma * jnp.where(done, 0.0, jnp.concatenate([values[1:], jnp.zeros(1)]))
    targets = jnp.where(valid, targets, 0.0)
    return targets, jnp.where(valid, targets - values, 0.0)


def _bits(x):
    return np.asarray(x, np.float32).view(np.uint32)


class ThesisSpecialCasesTest(chex.TestCase):
    """gae_turn_based, turn_based_returns and one_step_td are bit for bit the thesis' formulas."""

    @chex.variants(with_jit=True, without_jit=True)
    def test_bit_identical_to_the_thesis_formulas_on_random_episodes(self):
        r, v, _, done, valid = _random_plies(1, (64, 42), prefix_valid=True)
        r = jnp.where(jax.random.uniform(jax.random.key(7), r.shape) < 0.05, -0.0, r)  # signed zeros too
        gamma_lam = jnp.array([[0.95, 1.0], [0.9, 0.5], [1.0, 0.95], [0.95, 0.0], [0.7, 0.3]], jnp.float32)
        for gamma, lam in gamma_lam:
            pairs = (
                (jax.vmap(turn_based.gae_turn_based, in_axes=(0, 0, 0, None, None)),
                 jax.vmap(_thesis_gae, in_axes=(0, 0, 0, None, None)), (r, v, valid, gamma, lam)),
                (jax.vmap(turn_based.turn_based_returns, in_axes=(0, 0, None)),
                 jax.vmap(_thesis_returns, in_axes=(0, 0, None)), (r, valid, gamma)),
                (jax.vmap(losses.one_step_td, in_axes=(0, 0, 0, 0, None)),
                 jax.vmap(_thesis_one_step_td, in_axes=(0, 0, 0, 0, None)), (r, v, valid, done, gamma)),
            )
            for new, old, args in pairs:
                for got, want in zip(jax.tree.leaves(self.variant(new)(*args)),
                                     jax.tree.leaves(self.variant(old)(*args))):
                    np.testing.assert_array_equal(_bits(got), _bits(want))

    def test_turn_based_gae_is_negamax_gae_with_the_opponent_always_next(self):
        r, v, _, _, valid = _random_plies(2, (42,), prefix_valid=True)
        ref = _negamax_gae_reference(np.asarray(r), np.asarray(v), -np.ones(42), np.zeros(42, bool), 0.9, 0.8, 0.0,
                                     np.asarray(valid))
        np.testing.assert_allclose(turn_based.gae_turn_based(r, v, valid, 0.9, 0.8), ref, rtol=1e-5, atol=1e-5)


class TDTargetTest(chex.TestCase):
    q_next = jnp.array([1.0, 3.0, 2.0, 9.0, -1.0, 0.0, 0.5])
    legal = _legal(0, 1, 2, 4, 5, 6)  # column 3 (the max, 9.0) is full

    @chex.variants(with_jit=True, without_jit=True)
    def test_td_target(self):
        f = self.variant(turn_based.td_target)
        # 0.5 - 0.9 * 3 (the best legal column, not the illegal 9)
        np.testing.assert_allclose(f(jnp.float32(0.5), jnp.bool_(F), self.q_next, self.legal, 0.9), -2.2, rtol=1e-6)
        np.testing.assert_allclose(f(jnp.float32(0.5), jnp.bool_(T), self.q_next, self.legal, 0.9), 0.5)
        none = jnp.zeros(7, bool)
        np.testing.assert_allclose(f(jnp.float32(-1.0), jnp.bool_(F), self.q_next, none, 0.9), -1.0)

    @chex.variants(with_jit=True, without_jit=True)
    def test_double_td_target(self):
        f = self.variant(turn_based.double_td_target)
        online = jnp.array([0.0, 1.0, 5.0, 9.0, 2.0, 0.0, 0.0])  # legal argmax: column 2 (3 is full)
        target = jnp.array([4.0, 4.0, -1.0, 8.0, 4.0, 4.0, 4.0])
        # 0.5 - 0.9 * Q_target(s', 2) = 0.5 + 0.9
        np.testing.assert_allclose(f(jnp.float32(0.5), jnp.bool_(F), online, target, self.legal, 0.9), 1.4, rtol=1e-6)
        np.testing.assert_allclose(f(jnp.float32(0.5), jnp.bool_(T), online, target, self.legal, 0.9), 0.5)
        np.testing.assert_allclose(f(jnp.float32(0.5), jnp.bool_(F), online, target, jnp.zeros(7, bool), 0.9), 0.5)


def _negamax_td_reference(r, sign, done, q_next, legal, gamma, q_select=None):
    """Plain-Python negamax TD target of negamax_td_target's docstring, in float64."""
    moves = [a for a in range(len(legal)) if legal[a]]
    if done or not moves:
        return float(r)
    chooser = q_next if q_select is None else q_select
    best = max(moves, key=lambda a: (float(chooser[a]), -a))  # the first of equal values, as argmax
    return float(r) + gamma * float(sign) * float(q_next[best])


def _random_moves(seed, n, actions):
    """Rewards, signs +-1, done flags, two Q rows per move and legal masks (some rows with none)."""
    ks = jax.random.split(jax.random.key(seed), 7)
    r = jnp.where(jax.random.uniform(ks[0], (n,)) < 0.5, 0.0, jax.random.normal(ks[1], (n,)))
    sign = jnp.where(jax.random.uniform(ks[2], (n,)) < 0.3, 1.0, -1.0)
    done = jax.random.uniform(ks[3], (n,)) < 0.2
    q_next = jnp.tanh(jax.random.normal(ks[4], (n, actions)))
    q_select = jnp.tanh(jax.random.normal(ks[5], (n, actions)))
    legal = jax.random.uniform(ks[6], (n, actions)) < 0.6
    legal = legal.at[: n // 8].set(False)  # no legal action in s'
    return r, sign, done, q_next, q_select, legal


class NegamaxTDTargetTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_the_sign_of_the_next_mover(self):
        f = self.variant(losses.negamax_td_target)
        q_next, legal = jnp.array([0.2, 0.7, -0.4]), jnp.array([T, F, T])  # the best legal action: 0
        # the opponent moves next: its best value is subtracted; the same player again: added
        np.testing.assert_allclose(f(jnp.float32(0.0), -1.0, F, q_next, legal, 0.5), -0.1, rtol=1e-6)
        np.testing.assert_allclose(f(jnp.float32(0.0), 1.0, F, q_next, legal, 0.5), 0.1, rtol=1e-6)
        np.testing.assert_allclose(f(jnp.float32(1.0), 1.0, T, q_next, legal, 0.5), 1.0)
        # Double DQN: the selecting Q picks action 2 among the legal ones, q_next values it
        select = jnp.array([0.0, 9.0, 0.5])
        np.testing.assert_allclose(f(jnp.float32(0.25), 1.0, F, q_next, legal, 0.5, select), 0.05, rtol=1e-6)
        np.testing.assert_allclose(f(jnp.float32(0.25), -1.0, F, q_next, legal, 0.5, select), 0.45, rtol=1e-6)

    @chex.variants(with_jit=True, without_jit=True)
    def test_random_moves_match_a_plain_python_reference(self):
        for actions, gamma in ((7, 0.95), (32, 1.0), (9, 0.5)):
            r, sign, done, q_next, q_select, legal = _random_moves(actions, 64, actions)
            f = self.variant(jax.vmap(losses.negamax_td_target, in_axes=(0, 0, 0, 0, 0, None, 0)))
            for select in (None, q_select):
                got = f(r, sign, done, q_next, legal, gamma, select)
                want = [_negamax_td_reference(*map(np.asarray, (r[i], sign[i], done[i], q_next[i], legal[i])),
                                              gamma, None if select is None else np.asarray(select[i]))
                        for i in range(64)]
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
                assert got.dtype == jnp.float32

    def test_the_target_has_no_gradient(self):
        def y(q):
            return losses.negamax_td_target(jnp.float32(0.0), 1.0, F, q, jnp.ones(3, bool), 0.9, q)

        np.testing.assert_array_equal(jax.grad(y)(jnp.array([0.1, 0.5, 0.2])), 0.0)


# The thesis' turn-based DQN targets written out on their own: td_target and double_td_target (so
# negamax_td_target with sign -1) must give exactly these floats.
def _thesis_td_target(reward, done, q_next, legal_next, gamma):
    bootstrap = ~done & legal_next.any()
    best = jnp.max(jnp.where(legal_next, q_next, jnp.finfo(jnp.float32).min))
    return jax.lax.stop_gradient((reward - gamma * jnp.where(bootstrap, best, 0.0)).astype(jnp.float32))


def _thesis_double_td_target(reward, done, q_next_online, q_next_target, legal_next, gamma):
    bootstrap = ~done & legal_next.any()
    best = jnp.argmax(jnp.where(legal_next, q_next_online, jnp.finfo(jnp.float32).min))
    return jax.lax.stop_gradient((reward - gamma * jnp.where(bootstrap, q_next_target[best], 0.0)).astype(jnp.float32))


class ThesisTDTargetTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_bit_identical_to_the_thesis_formulas_on_random_moves(self):
        r, _, done, q_next, q_online, legal = _random_moves(3, 256, 7)
        r = jnp.where(jax.random.uniform(jax.random.key(8), r.shape) < 0.05, -0.0, r)  # signed zeros too
        q_next = q_next * 3.0  # values beyond [-1, 1], as the CNET's Q are
        for gamma in (0.95, 0.9, 1.0, 0.7, jnp.float32(0.99)):
            pairs = (
                (jax.vmap(turn_based.td_target, in_axes=(0, 0, 0, 0, None)),
                 jax.vmap(_thesis_td_target, in_axes=(0, 0, 0, 0, None)), (r, done, q_next, legal, gamma)),
                (jax.vmap(turn_based.double_td_target, in_axes=(0, 0, 0, 0, 0, None)),
                 jax.vmap(_thesis_double_td_target, in_axes=(0, 0, 0, 0, 0, None)),
                 (r, done, q_online, q_next, legal, gamma)),
            )
            for new, old, args in pairs:
                np.testing.assert_array_equal(_bits(self.variant(new)(*args)), _bits(self.variant(old)(*args)))


# Two legal columns with probabilities 0.25 / 0.75; the illegal logits are large on purpose.
LOGITS = jnp.array([0.0, LN(3.0), 5.0, 5.0, 5.0, 5.0, 5.0])
LEGAL = _legal(0, 1)
ENTROPY = -(0.25 * LN(0.25) + 0.75 * LN(0.75))  # 0.5623351


class PPOLossTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.named_parameters(
        # (action, old prob, advantage, expected surrogate L_clip, expected clipped flag)
        ("unclipped_positive", 1, 0.75 / 1.1, 2.0, 1.1 * 2.0, 0.0),  # ratio 1.1 inside [0.8, 1.2]
        ("clipped_positive", 1, 0.5, 2.0, 1.2 * 2.0, 1.0),  # ratio 1.5: min(3.0, 2.4)
        ("clipped_negative", 0, 0.5, -2.0, 0.8 * -2.0, 1.0),  # ratio 0.5: min(-1.0, -1.6)
        ("unclipped_negative_high_ratio", 1, 0.5, -2.0, 1.5 * -2.0, 1.0),  # ratio 1.5: min(-3.0, -2.4)
        ("unclipped_negative", 0, 0.25 / 0.9, -1.0, 0.9 * -1.0, 0.0),  # ratio 0.9
    )
    def test_clipped_objective_value_and_entropy(self, action, old_p, adv, surrogate, clipped):
        f = self.variant(functools.partial(losses.ppo_loss, clip=0.2, c1=0.75, c2=0.04))
        value, ret = jnp.float32(0.5), jnp.float32(2.0)  # |V - G| = 1.5 > 1: Smooth-L1 = 1.5 - 0.5
        total, aux = f(LOGITS, LEGAL, jnp.int32(action), jnp.float32(LN(old_p)), jnp.float32(adv), value, ret)
        np.testing.assert_allclose(aux["policy_loss"], -surrogate, rtol=1e-5)
        np.testing.assert_allclose(aux["value_loss"], 1.0, rtol=1e-6)
        np.testing.assert_allclose(aux["entropy"], ENTROPY, rtol=1e-6)
        np.testing.assert_allclose(aux["clipped"], clipped)
        np.testing.assert_allclose(total, -surrogate + 0.75 * 1.0 - 0.04 * ENTROPY, rtol=1e-5)

    @chex.variants(with_jit=True, without_jit=True)
    def test_quadratic_value_loss_and_zero_kl_at_ratio_one(self):
        f = self.variant(functools.partial(losses.ppo_loss, clip=0.2, c1=0.75, c2=0.04))
        total, aux = f(LOGITS, LEGAL, jnp.int32(1), jnp.float32(LN(0.75)), jnp.float32(1.0),
                       jnp.float32(0.5), jnp.float32(0.0))
        np.testing.assert_allclose(aux["value_loss"], 0.125, rtol=1e-6)  # 0.5 * 0.5^2
        np.testing.assert_allclose(aux["ratio"], 1.0, rtol=1e-6)
        np.testing.assert_allclose(aux["approx_kl"], 0.0, atol=1e-6)
        np.testing.assert_allclose(total, -1.0 + 0.75 * 0.125 - 0.04 * ENTROPY, rtol=1e-5)

    def test_squared_value_loss_and_any_number_of_actions(self):
        # three actions, the last illegal: the policy is softmax([0, ln 3]) = [0.25, 0.75]
        logits, legal = jnp.array([0.0, LN(3.0), 9.0]), jnp.array([T, T, F])
        total, aux = losses.ppo_loss(logits, legal, jnp.int32(1), jnp.float32(LN(0.75)), jnp.float32(1.0),
                                     jnp.float32(0.5), jnp.float32(2.0), clip=0.2, c1=0.75, c2=0.04,
                                     value_loss="squared")
        np.testing.assert_allclose(aux["value_loss"], 1.5**2, rtol=1e-6)
        np.testing.assert_allclose(aux["entropy"], ENTROPY, rtol=1e-6)
        np.testing.assert_allclose(total, -1.0 + 0.75 * 2.25 - 0.04 * ENTROPY, rtol=1e-5)
        with self.assertRaisesRegex(ValueError, "value_loss must be one of"):
            losses.ppo_loss(logits, legal, jnp.int32(1), jnp.float32(0.0), jnp.float32(1.0), jnp.float32(0.5),
                            jnp.float32(2.0), clip=0.2, c1=0.75, c2=0.04, value_loss="l2")


    def test_clipped_ratio_has_no_policy_gradient(self):
        # ratio 1.5 with A > 0: the clipped branch is active, the policy term is flat in the logits.
        def policy(logits):
            return losses.ppo_loss(logits, LEGAL, jnp.int32(1), jnp.float32(LN(0.5)), jnp.float32(2.0),
                                   jnp.float32(0.0), jnp.float32(0.0), clip=0.2, c1=0.0, c2=0.0)[0]

        np.testing.assert_allclose(jax.grad(policy)(LOGITS), 0.0, atol=1e-7)


class ReinforceLossTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_hand_computed(self):
        f = self.variant(functools.partial(losses.reinforce_loss, c1=0.75))
        # G = 1, V = 0.25: A = 0.75; -log(0.75) * 0.75; Smooth-L1 = 0.5 * 0.75^2
        total, aux = f(LOGITS, LEGAL, jnp.int32(1), jnp.float32(1.0), jnp.float32(0.25))
        np.testing.assert_allclose(aux["advantage"], 0.75, rtol=1e-6)
        np.testing.assert_allclose(aux["policy_loss"], -LN(0.75) * 0.75, rtol=1e-5)
        np.testing.assert_allclose(aux["value_loss"], 0.5 * 0.75**2, rtol=1e-6)
        np.testing.assert_allclose(total, -LN(0.75) * 0.75 + 0.75 * 0.5 * 0.75**2, rtol=1e-5)

    @parameterized.parameters((1.0, 1), (-1.0, -1))
    def test_gradient_step_moves_log_prob_with_the_advantage(self, ret, sign):
        def loss(logits, value):
            return losses.reinforce_loss(logits, LEGAL, jnp.int32(0), jnp.float32(ret), value, c1=0.75)[0]

        g_logits, g_value = jax.grad(loss, argnums=(0, 1))(LOGITS, jnp.float32(0.0))
        assert sign * -g_logits[0] > 0  # descent raises log pi(a) iff A > 0
        np.testing.assert_allclose(g_logits[2:], 0.0)  # illegal columns get no gradient
        # The baseline is trained by the value term only: d/dV c1 * SmoothL1(V, G) = c1 * (V - G).
        np.testing.assert_allclose(g_value, 0.75 * (0.0 - ret), rtol=1e-6)
        stepped = LOGITS - 0.1 * g_logits
        before = jax.nn.log_softmax(LOGITS[:2])[0]
        after = jax.nn.log_softmax(stepped[:2])[0]
        assert sign * (after - before) > 0


class MaskingTest(chex.TestCase):
    """Illegal columns never get probability mass, and nothing is NaN (values or gradients)."""

    cases = (
        ("single_legal", _legal(4)),
        ("two_full_columns", _legal(0, 1, 2, 4, 6)),
        ("all_legal", _legal(*range(7))),
    )

    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.named_parameters(*cases)
    def test_losses_and_gradients_are_finite(self, legal):
        logits = jnp.array([30.0, -2.0, 1.0, 0.5, -40.0, 3.0, 1e4])
        action = jnp.argmax(legal).astype(jnp.int32)

        def total(logits, value):
            ppo, _ = losses.ppo_loss(logits, legal, action, jnp.float32(-0.3), jnp.float32(1.0), value,
                                     jnp.float32(1.0), clip=0.2, c1=0.75, c2=0.04)
            rei, _ = losses.reinforce_loss(logits, legal, action, jnp.float32(1.0), value, c1=0.75)
            return ppo + rei + losses.masked_entropy(logits, legal)

        val, grads = self.variant(jax.value_and_grad(total, argnums=(0, 1)))(logits, jnp.float32(0.2))
        assert np.isfinite(val)
        assert np.isfinite(grads[0]).all() and np.isfinite(grads[1])
        np.testing.assert_array_equal(np.asarray(grads[0])[~np.asarray(legal)], 0.0)
        _, aux = losses.ppo_loss(logits, legal, action, jnp.float32(-0.3), jnp.float32(1.0), jnp.float32(0.0),
                                 jnp.float32(1.0), clip=0.2, c1=0.75, c2=0.04)
        assert np.isfinite(aux["log_prob"]) and aux["log_prob"] <= 0.0

    def test_single_legal_column_has_zero_entropy_and_log_prob(self):
        legal = _legal(4)
        logits = jnp.array([30.0, -2.0, 1.0, 0.5, -40.0, 3.0, 1e4])
        np.testing.assert_allclose(losses.masked_entropy(logits, legal), 0.0, atol=1e-6)
        _, aux = losses.reinforce_loss(logits, legal, jnp.int32(4), jnp.float32(1.0), jnp.float32(0.0), c1=0.75)
        np.testing.assert_allclose(aux["log_prob"], 0.0, atol=1e-6)

    def test_masked_entropy_ignores_illegal_logits(self):
        e1 = losses.masked_entropy(LOGITS, LEGAL)
        e2 = losses.masked_entropy(LOGITS.at[2:].set(-1e30), LEGAL)
        np.testing.assert_allclose(e1, ENTROPY, rtol=1e-6)
        np.testing.assert_allclose(e2, ENTROPY, rtol=1e-6)
        none = jnp.zeros(7, bool)  # a finished board: no mass anywhere, entropy 0, finite gradient
        value, grad = jax.value_and_grad(losses.masked_entropy)(LOGITS, none)
        assert value == 0.0 and np.isfinite(grad).all()

    def test_smooth_l1_matches_pytorch_definition(self):
        x = jnp.array([-3.0, -1.0, -0.5, 0.0, 0.25, 1.0, 2.0])
        expected = np.where(np.abs(x) < 1, 0.5 * np.asarray(x) ** 2, np.abs(x) - 0.5)
        np.testing.assert_allclose(losses.smooth_l1(x, jnp.zeros_like(x)), expected, rtol=1e-6)
