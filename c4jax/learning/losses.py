"""Unbatched returns, advantages, TD targets and policy-gradient losses (rlax style).

Every function works on ONE episode (``[T]`` arrays) or ONE sample (scalars and rows
over the actions: ``[A]``, or ``[7]`` for the Connect Four only ones), opens with ``chex``
shape checks, and is ``jit``-compatible; batch with ``jax.vmap``.

Turn-based zero-sum sign convention (design.md §7). Every reward or value is from the
point of view of the player who is to move at that step. Consecutive moves of a Connect
Four episode alternate between the two players: what is good for the opponent at
``t + 1`` is bad for the mover at ``t``, so everything that flows back in time is
**subtracted**::

    G_t   = r_t - gamma * G_{t+1}                     (returns)
    y     = r   - gamma * max_a' Q(s', a')            (TD target)
    delta = r_t - gamma * V(s_{t+1}) - V(s_t)         (TD error)
    A_t   = delta_t - gamma * lam * A_{t+1}           (GAE)

In other games the same player may move again (a Checkers multi-jump); ``negamax_gae``
and ``negamax_td_target`` take a per-step ``sign`` (-1: the opponent moves next, +1: the
same player) and are the one GAE and the one TD target: the turn-based functions above
are them with ``sign = -1``.

Losses are quantities to **minimise** (gradient descent). The thesis writes its
objectives to maximise; each loss below says how it maps to the thesis' sign.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import optax
from jax import Array

from c4jax.agents.policy import masked_log_softmax, masked_logits, masked_softmax

NUM_ACTIONS = 7


# --------------------------------------------------------------------------- returns and advantages


def _td_targets(rewards: Array, next_values: Array, sign: Array, done: Array, gamma: Array) -> Array:
    """float32[T]: negamax one-step targets ``r_t + (gamma * sign_t) * [not done_t] V(s_{t+1})``."""
    return rewards + (gamma * sign) * jnp.where(done, 0.0, next_values)


def negamax_gae(rewards: Array, values: Array, sign: Array, done: Array, gamma: float | Array,
                lam: float | Array, last_value: float | Array = 0.0, valid: Array | None = None) -> Array:
    """float32[T]: GAE(lambda) advantages of consecutive plies of a two-player zero-sum game.

    Args:
      rewards: float32[T]: reward of ply t for the player who made it.
      values: float32[T]: ``V(s_t)`` from the point of view of the player to move at t.
      sign: float32[T] (or a scalar): -1 when the opponent moves at t + 1, +1 when the same
        player moves again (a Checkers multi-jump).
      done: bool[T] (or a scalar): ply t ended its game; the row after it (if any) starts
        another game and is not looked at.
      gamma, lam: discount and GAE lambda.
      last_value: float32[]: ``V`` of the state after the last row, for its player to move
        (0: the rows end with the game).
      valid: bool[T] or None (all rows): rows of the episode; the others are padding, get
        value and advantage 0 and so end the game of the valid row before them.

    The value of ``s_{t+1}`` seen by the mover at t is ``sign_t V(s_{t+1})`` (negamax), so
    ``delta_t = r_t + gamma sign_t (1 - done_t) V(s_{t+1}) - V(s_t)`` and
    ``A_t = delta_t + gamma lam sign_t (1 - done_t) A_{t+1}``. With ``sign = -1`` everywhere
    this is the thesis' turn-based GAE (``gae_turn_based``); with ``values = 0`` and
    ``lam = 1`` it is the return (``turn_based_returns``); with ``lam = 0`` the one-step TD
    error. The value target of row t is ``A_t + V(s_t)``.
    """
    chex.assert_rank([rewards, values], [1, 1])
    chex.assert_equal_shape([rewards, values])
    (length,) = rewards.shape
    valid = jnp.ones((length,), jnp.bool_) if valid is None else valid
    chex.assert_equal_shape([rewards, valid])
    sign = jnp.broadcast_to(jnp.asarray(sign, jnp.float32), (length,))
    done = jnp.broadcast_to(jnp.asarray(done, jnp.bool_), (length,))
    rewards = rewards.astype(jnp.float32)
    values = jnp.where(valid, values.astype(jnp.float32), 0.0)
    gamma = jnp.asarray(gamma, jnp.float32)
    lam = jnp.asarray(lam, jnp.float32)
    next_values = jnp.concatenate([values[1:], jnp.reshape(jnp.asarray(last_value, jnp.float32), (1,))])
    deltas = _td_targets(rewards, next_values, sign, done, gamma) - values
    # A_t = delta_t + coef_t A_{t+1}: one product and one sum a step, so with sign = -1 the float
    # operations are those of the thesis' A_t = delta_t - gamma lam A_{t+1} (tests/learning/test_losses.py)
    coefs = jnp.where(done, 0.0, gamma * lam * sign)

    def _step(a_next: Array, x) -> tuple[Array, Array]:
        delta_t, coef_t, valid_t = x
        a_t = jnp.where(valid_t, delta_t + coef_t * a_next, 0.0)
        return a_t, a_t

    _, advantages = jax.lax.scan(_step, jnp.float32(0.0), (deltas, coefs, valid), reverse=True)
    return advantages


def turn_based_returns(rewards: Array, valid: Array, gamma: float | Array) -> Array:
    """float32[T]: zero-sum returns ``G_t = r_t - gamma * G_{t+1}`` of one episode.

    Args:
      rewards: float32[T]: reward of move t for the player who made it (e.g. the
        back-propagated shaped rewards).
      valid: bool[T]: move t was played (a prefix of True; the rest is padding).
      gamma: discount.

    The move after t is the opponent's, so its return is subtracted. The last valid
    move gets ``G = r``; padding gets ``G = 0`` and contributes nothing. This is
    ``negamax_gae`` with ``sign = -1``, ``values = 0`` and ``lam = 1``.
    """
    chex.assert_rank([rewards, valid], [1, 1])
    chex.assert_equal_shape([rewards, valid])
    return negamax_gae(rewards, jnp.zeros(rewards.shape, jnp.float32), -1.0, False, gamma, 1.0, valid=valid)


def gae_turn_based(rewards: Array, values: Array, valid: Array, gamma: float | Array,
                   lam: float | Array) -> Array:
    """float32[T]: turn-based GAE(lambda) advantages of one episode.

    Args:
      rewards: float32[T]: reward of move t for its mover.
      values: float32[T]: ``V(s_t)`` from the point of view of the player to move at t.
      valid: bool[T]: move t was played (a prefix of True).
      gamma, lam: discount and GAE lambda.

    ``negamax_gae`` with the opponent moving next at every move (``sign = -1``):
    ``V(s_{t+1})`` is the opponent's value, i.e. minus the mover's, so
    ``delta_t = r_t - gamma * V(s_{t+1}) - V(s_t)`` and
    ``A_t = delta_t - gamma * lam * A_{t+1}``. After the last valid move the game is
    over: ``V(s_T) = 0`` and ``A_T = 0``. Padding gets 0. With ``lam = 1`` this
    telescopes to ``A_t = G_t - V(s_t)`` (``turn_based_returns``), the REINFORCE /
    thesis advantage; with ``lam = 0`` it is the one-step TD error.
    """
    chex.assert_rank([rewards, values, valid], [1, 1, 1])
    chex.assert_equal_shape([rewards, values, valid])
    return negamax_gae(rewards, values, -1.0, False, gamma, lam, valid=valid)


def one_step_td(rewards: Array, values: Array, valid: Array, done: Array,
                gamma: float | Array) -> tuple[Array, Array]:
    """``(targets, advantages)``, float32[T] each: the published PPO code's one-step TD value
    targets and advantages of one episode.

    ``target_t = r_t - gamma * (1 - done_t) * V(s_{t+1})`` (the next state is the opponent's:
    its value is subtracted; ``negamax_gae``'s one-step target with ``sign = -1``) and
    ``advantage_t = target_t - V(s_t)``; ``values`` are ``V(s_t)`` of the player to move at t
    (the published code uses the mirror-averaged value). Padding gets 0.
    """
    chex.assert_rank([rewards, values, valid, done], [1, 1, 1, 1])
    chex.assert_equal_shape([rewards, values, valid, done])
    values = values.astype(jnp.float32)
    values_next = jnp.concatenate([values[1:], jnp.zeros((1,), jnp.float32)])
    targets = _td_targets(rewards.astype(jnp.float32), values_next, jnp.float32(-1.0), done,
                          jnp.asarray(gamma, jnp.float32))
    targets = jnp.where(valid, targets, 0.0)
    return targets, jnp.where(valid, targets - values, 0.0)


# --------------------------------------------------------------------------- TD targets


def _masked_max(q: Array, legal: Array) -> Array:
    return jnp.max(masked_logits(q, legal), axis=-1)


def negamax_td_target(reward: Array, sign: Array, done: Array, q_next: Array, legal_next: Array,
                      gamma: float | Array, q_next_select: Array | None = None) -> Array:
    """float32[]: the Q-learning target of one move of a two-player zero-sum game, negamax form.

    Args:
      reward: float32[]: reward of the move for its mover.
      sign: float32[] (or a scalar): -1 when the opponent moves in s', +1 when the same player
        moves again (a Checkers multi-jump).
      done: bool[] (or 0/1): the move ended the game.
      q_next: float32[A]: Q-values of s' for its player to move, the ones that value s' (usually
        the target network's).
      legal_next: bool[A]: legal actions in s'.
      gamma: discount.
      q_next_select: float32[A] or None: Q-values of s' that choose its action (Double DQN: the
        online network's); None chooses by ``q_next`` itself.

    ``y = r + gamma * sign * Q(s', a*)`` with ``a* = argmax_{legal a'} q_next_select(s', a')``
    (``Q(s', a*) = max_{legal a'} q_next(s', a')`` without ``q_next_select``); ``y = r`` when
    ``done`` or when s' has no legal action. Illegal actions of s' are never chosen. With
    ``sign = -1`` this is the thesis' turn-based target (``td_target``, ``double_td_target``),
    float operation for float operation. The target is wrapped in ``stop_gradient``.
    """
    chex.assert_rank([reward, q_next, legal_next], [0, 1, 1])
    chex.assert_equal_shape([q_next, legal_next])
    bootstrap = ~jnp.asarray(done, jnp.bool_) & jnp.asarray(legal_next, jnp.bool_).any()
    if q_next_select is None:
        next_value = _masked_max(q_next, legal_next)
    else:
        chex.assert_equal_shape([q_next_select, legal_next])
        next_value = q_next[jnp.argmax(masked_logits(q_next_select, legal_next), axis=-1)]
    # r + (gamma * sign) * [bootstrap] Q: with sign = -1 the float operations of r - gamma * [bootstrap] Q
    y = _td_targets(jnp.asarray(reward, jnp.float32), next_value, jnp.asarray(sign, jnp.float32), ~bootstrap,
                    jnp.asarray(gamma, jnp.float32))
    return jax.lax.stop_gradient(y)


def td_target(reward: Array, done: Array, q_next: Array, legal_next: Array,
              gamma: float | Array) -> Array:
    """float32[]: turn-based Q-learning target ``y = r - gamma * max_{legal a'} Q(s', a')``.

    Args:
      reward: float32[]: reward of the move for its mover.
      done: bool[] (or 0/1): the move ended the game.
      q_next: float32[7]: Q-values of the next state s' (the opponent to move), usually
        from the target network.
      legal_next: bool[7]: legal columns in s'.
      gamma: discount.

    ``negamax_td_target`` with the opponent to move in s' (``sign = -1``): ``y = r`` when
    ``done`` or when s' has no legal column; illegal columns of s' are never the max. The
    target is wrapped in ``stop_gradient``.
    """
    chex.assert_rank([reward, done, q_next, legal_next], [0, 0, 1, 1])
    chex.assert_shape([q_next, legal_next], (NUM_ACTIONS,))
    return negamax_td_target(reward, -1.0, done, q_next, legal_next, gamma)


def double_td_target(reward: Array, done: Array, q_next_online: Array, q_next_target: Array,
                     legal_next: Array, gamma: float | Array) -> Array:
    """float32[]: Double-DQN turn-based target ``y = r - gamma * Q_target(s', argmax_{legal a'} Q_online(s', a'))``.

    The action is chosen among the legal columns of s' by the online network and
    valued by the target network (the Double DQN article): ``negamax_td_target`` with
    ``sign = -1``. ``y = r`` when ``done`` or when s' has no legal column. The target is
    wrapped in ``stop_gradient``.
    """
    chex.assert_rank([reward, done, q_next_online, q_next_target, legal_next], [0, 0, 1, 1, 1])
    chex.assert_shape([q_next_online, q_next_target, legal_next], (NUM_ACTIONS,))
    return negamax_td_target(reward, -1.0, done, q_next_target, legal_next, gamma, q_next_select=q_next_online)


# --------------------------------------------------------------------------- policy losses


def smooth_l1(prediction: Array, target: Array) -> Array:
    """Huber loss with delta 1, i.e. PyTorch's ``smooth_l1_loss`` (beta 1): 0.5 x^2 if |x| < 1 else |x| - 0.5."""
    return optax.huber_loss(prediction, target, delta=1.0)


def masked_entropy(logits: Array, legal: Array) -> Array:
    """float32[]: entropy of the masked policy; illegal columns contribute exactly 0 (and no NaN gradient)."""
    chex.assert_rank([logits, legal], [1, 1])
    probs = masked_softmax(logits, legal)
    # Zero the log-probs of illegal columns *before* the product so that neither the
    # value nor its gradient ever sees 0 * (huge negative).
    log_probs = jnp.where(legal, masked_log_softmax(logits, legal), 0.0)
    return -jnp.sum(probs * log_probs, axis=-1)


def _log_prob(logits: Array, legal: Array, action: Array) -> Array:
    return masked_log_softmax(logits, legal)[action]


VALUE_LOSSES = ("smooth_l1", "squared")


def ppo_loss(logits: Array, legal: Array, action: Array, old_logp: Array, advantage: Array,
             value: Array, ret: Array, *, clip: float, c1: float, c2: float,
             value_loss: str = "smooth_l1") -> tuple[Array, dict]:
    """PPO clipped-surrogate loss of one sample (PPO paper, thesis §2.1.3 / §4.5).

    Args:
      logits: float32[A]: policy logits of the current network on s (A actions: 7 columns
        for Connect Four).
      legal: bool[A]: the actions of the policy (the legal ones) and of its entropy.
      action: int32[]: the action played.
      old_logp: float32[]: ``log pi_old(a|s)`` recorded at collection.
      advantage: float32[]: the advantage estimate (a constant; a trainer that normalises
        advantages does it over its minibatch before this call).
      value: float32[]: ``V(s)`` of the current network.
      ret: float32[]: the return target G.
      clip: epsilon of the ratio clip (0.2); c1, c2: value and entropy coefficients.
      value_loss: ``"smooth_l1"`` (the thesis: Huber, delta 1) or ``"squared"``
        (``(V(s) - G)^2``).

    Returns:
      ``(total, aux)`` with ``total = -L_clip + c1 * L_value - c2 * entropy``, to be
      **minimised**; this is minus the thesis' maximised objective
      ``L_clip - c1 * L_VF + c2 * S[pi]``. ``L_clip = min(ratio * A, clip(ratio, 1 - eps,
      1 + eps) * A)`` with ``ratio = pi(a|s) / pi_old(a|s)`` over the masked policy,
      ``L_value`` is ``value_loss`` of ``V(s)`` against ``ret``. aux holds
      ``policy_loss`` (= -L_clip), ``value_loss``, ``entropy``, ``ratio``, ``log_prob``,
      ``approx_kl`` (the ``(ratio - 1) - log ratio`` estimator of KL(old || new)) and
      ``clipped`` (1.0 when ``|ratio - 1| > clip``).
    """
    chex.assert_rank([logits, legal, action, old_logp, advantage, value, ret], [1, 1, 0, 0, 0, 0, 0])
    chex.assert_equal_shape([logits, legal])
    if value_loss not in VALUE_LOSSES:
        raise ValueError(f"value_loss must be one of {VALUE_LOSSES}, got {value_loss!r}")
    advantage = jax.lax.stop_gradient(advantage)
    old_logp = jax.lax.stop_gradient(old_logp)
    ret = jax.lax.stop_gradient(ret)
    logp = _log_prob(logits, legal, action)
    log_ratio = logp - old_logp
    ratio = jnp.exp(log_ratio)
    surrogate = jnp.minimum(ratio * advantage, jnp.clip(ratio, 1.0 - clip, 1.0 + clip) * advantage)
    policy_loss = -surrogate
    v_loss = smooth_l1(value, ret) if value_loss == "smooth_l1" else (value - ret) ** 2
    entropy = masked_entropy(logits, legal)
    total = policy_loss + c1 * v_loss - c2 * entropy
    aux = {
        "policy_loss": policy_loss,
        "value_loss": v_loss,
        "entropy": entropy,
        "ratio": ratio,
        "log_prob": logp,
        "approx_kl": jax.lax.stop_gradient((ratio - 1.0) - log_ratio),
        "clipped": jax.lax.stop_gradient((jnp.abs(ratio - 1.0) > clip).astype(jnp.float32)),
    }
    return total, aux


def reinforce_loss(logits: Array, legal: Array, action: Array, ret: Array, value: Array, *,
                   c1: float) -> tuple[Array, dict]:
    """REINFORCE-with-baseline loss of one sample (thesis §2.1.2 / §4.4).

    Args:
      logits: float32[A]: policy logits on s (A actions: 7 columns for Connect Four); legal:
        bool[A]; action: int32[] played.
      ret: float32[]: the turn-based return ``G_t``.
      value: float32[]: the baseline ``V(s)`` of the current network.
      c1: weight of the value loss (0.75).

    Returns:
      ``(total, aux)`` with ``total = -log pi(a|s) * stop_gradient(G - V(s)) + c1 *
      SmoothL1(V(s), G)``, to be **minimised**. The thesis maximises
      ``L_policy - c1 * L_value`` with ``L_policy = log pi(a|s) * (G - V(s))`` (gradient
      ascent on the expected return) and ``L_value`` the Smooth-L1 regression loss of
      the value head; ``total`` is exactly minus that objective, so a descent step on
      ``total`` is the thesis' ascent step. The advantage is a constant for the policy
      term (the baseline is trained only by the value term). aux: ``policy_loss``
      (``-log pi * A``), ``value_loss``, ``advantage``, ``log_prob``, ``entropy``.
    """
    chex.assert_rank([logits, legal, action, ret, value], [1, 1, 0, 0, 0])
    chex.assert_equal_shape([logits, legal])
    ret = jax.lax.stop_gradient(ret)
    advantage = jax.lax.stop_gradient(ret - value)
    logp = _log_prob(logits, legal, action)
    policy_loss = -logp * advantage
    value_loss = smooth_l1(value, ret)
    total = policy_loss + c1 * value_loss
    aux = {
        "policy_loss": policy_loss,
        "value_loss": value_loss,
        "advantage": advantage,
        "log_prob": logp,
        "entropy": jax.lax.stop_gradient(masked_entropy(logits, legal)),
    }
    return total, aux
