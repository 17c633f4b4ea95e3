"""Unbatched returns, advantages, TD targets and policy-gradient losses (rlax style).

Every function takes ONE episode (``[T]`` arrays) or ONE sample (scalars and ``[A]`` rows), checks
shapes with ``chex`` and is ``jit``-compatible; batch with ``jax.vmap``. Values are from the point of
view of the player to move; what flows back from a ply where the opponent moves is subtracted
(negamax, design.md §7). Losses are to be minimised.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import optax
from jax import Array

from c4jax.agents.policy import masked_log_softmax, masked_logits, masked_softmax


# --------------------------------------------------------------------------- returns and advantages


def _td_targets(rewards: Array, next_values: Array, sign: Array, done: Array, gamma: Array) -> Array:
    """float32[T]: negamax one-step targets ``r_t + (gamma * sign_t) * [not done_t] V(s_{t+1})``."""
    return rewards + (gamma * sign) * jnp.where(done, 0.0, next_values)


def negamax_gae(rewards: Array, values: Array, sign: Array, done: Array, gamma: float | Array,
                lam: float | Array, last_value: float | Array = 0.0, valid: Array | None = None) -> Array:
    """float32[T]: GAE(lambda) advantages of consecutive plies of a two-player zero-sum game.

    Args:
      rewards: float32[T]: reward of ply t for the player who made it.
      values: float32[T]: ``V(s_t)`` for the player to move at t.
      sign: float32[T] or scalar: -1 when the opponent moves at t + 1, +1 when the same player does.
      done: bool[T] or scalar: ply t ended its game (the next row is not looked at).
      gamma, lam: discount and GAE lambda.
      last_value: float32[]: ``V`` of the state after the last row (0: the rows end with the game).
      valid: bool[T] or None (all): padding rows get value and advantage 0.

    ``delta_t = r_t + gamma sign_t (1 - done_t) V(s_{t+1}) - V(s_t)``,
    ``A_t = delta_t + gamma lam sign_t (1 - done_t) A_{t+1}``; ``lam = 1, values = 0`` gives returns.
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


def one_step_td(rewards: Array, values: Array, valid: Array, done: Array,
                gamma: float | Array) -> tuple[Array, Array]:
    """``(targets, advantages)``, float32[T] each, of one episode (the published PPO code):
    ``target_t = r_t - gamma (1 - done_t) V(s_{t+1})``, ``advantage_t = target_t - V(s_t)``; padding 0."""
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
    """float32[]: the negamax Q-learning target of one move, under ``stop_gradient``.

    Args:
      reward: float32[]: reward of the move for its mover.
      sign: float32[] or scalar: -1 when the opponent moves in s', +1 when the same player does.
      done: bool[] (or 0/1): the move ended the game.
      q_next: float32[A]: Q-values of s' (for its mover) that value it.
      legal_next: bool[A]: legal actions in s'.
      gamma: discount.
      q_next_select: float32[A] or None: Q-values that choose the action (Double DQN); None: ``q_next``.

    ``y = r + gamma * sign * q_next[a*]``, ``a* = argmax_{legal a'} q_next_select[a']``; ``y = r`` when
    ``done`` or no action of s' is legal.
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
    """PPO clipped-surrogate loss of one sample (thesis §2.1.3 / §4.5).

    Args:
      logits: float32[A]: policy logits on s; legal: bool[A]; action: int32[] played.
      old_logp: float32[]: ``log pi_old(a|s)`` recorded at collection.
      advantage: float32[]: the advantage (a constant).
      value: float32[]: ``V(s)``; ret: float32[]: the return target G.
      clip: epsilon of the ratio clip; c1, c2: value and entropy coefficients.
      value_loss: ``"smooth_l1"`` or ``"squared"``; ``ValueError`` otherwise.

    Returns:
      ``(total, aux)``, ``total = -L_clip + c1 * L_value - c2 * entropy`` (minus the thesis' objective)
      with ``L_clip = min(ratio * A, clip(ratio, 1 - eps, 1 + eps) * A)``. aux: ``policy_loss``,
      ``value_loss``, ``entropy``, ``ratio``, ``log_prob``, ``approx_kl`` (``(ratio - 1) - log ratio``)
      and ``clipped`` (1.0 when ``|ratio - 1| > clip``).
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
      logits: float32[A]: policy logits on s; legal: bool[A]; action: int32[] played.
      ret: float32[]: the return ``G_t``; value: float32[]: the baseline ``V(s)``.
      c1: weight of the value loss.

    Returns:
      ``(total, aux)``, ``total = -log pi(a|s) * stop_gradient(G - V(s)) + c1 * SmoothL1(V(s), G)``
      (minus the thesis' objective). aux: ``policy_loss``, ``value_loss``, ``advantage``, ``log_prob``,
      ``entropy``.
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
