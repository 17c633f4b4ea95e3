"""The thesis' turn-based (opponent moves next: ``sign = -1``) returns, GAE and Connect Four TD targets,
written as the special cases of :mod:`c4jax.learning.losses`' negamax functions that they are."""

from __future__ import annotations

import chex
import jax.numpy as jnp
from jax import Array

from c4jax.learning import losses

NUM_ACTIONS = 7


def turn_based_returns(rewards: Array, valid: Array, gamma: float | Array) -> Array:
    """float32[T]: ``G_t = r_t - gamma * G_{t+1}`` over the valid prefix ``valid`` bool[T]; padding 0."""
    chex.assert_rank([rewards, valid], [1, 1])
    chex.assert_equal_shape([rewards, valid])
    return losses.negamax_gae(rewards, jnp.zeros(rewards.shape, jnp.float32), -1.0, False, gamma, 1.0, valid=valid)


def gae_turn_based(rewards: Array, values: Array, valid: Array, gamma: float | Array,
                   lam: float | Array) -> Array:
    """float32[T]: ``A_t = delta_t - gamma * lam * A_{t+1}``, ``delta_t = r_t - gamma V(s_{t+1}) - V(s_t)``."""
    chex.assert_rank([rewards, values, valid], [1, 1, 1])
    chex.assert_equal_shape([rewards, values, valid])
    return losses.negamax_gae(rewards, values, -1.0, False, gamma, lam, valid=valid)


def td_target(reward: Array, done: Array, q_next: Array, legal_next: Array, gamma: float | Array) -> Array:
    """float32[]: ``y = r - gamma * max_{legal a'} Q(s', a')`` (``y = r`` when done or nothing is legal)."""
    chex.assert_rank([reward, done, q_next, legal_next], [0, 0, 1, 1])
    chex.assert_shape([q_next, legal_next], (NUM_ACTIONS,))
    return losses.negamax_td_target(reward, -1.0, done, q_next, legal_next, gamma)


def double_td_target(reward: Array, done: Array, q_next_online: Array, q_next_target: Array,
                     legal_next: Array, gamma: float | Array) -> Array:
    """float32[]: ``y = r - gamma * Q_target(s', argmax_{legal a'} Q_online(s', a'))``."""
    chex.assert_rank([reward, done, q_next_online, q_next_target, legal_next], [0, 0, 1, 1, 1])
    chex.assert_shape([q_next_online, q_next_target, legal_next], (NUM_ACTIONS,))
    return losses.negamax_td_target(reward, -1.0, done, q_next_target, legal_next, gamma, q_next_select=q_next_online)
