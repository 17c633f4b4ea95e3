"""CNET128 (design.md §5) in flax linen: preprocessing, conv block, shared dense, heads.

``CNet(width=128, heads=...)`` maps boards ``int8[B, 6, 7]`` to ``float32[B, 7]`` (``heads="one"``),
``(float32[B, 7], float32[B])`` (``"two"``; with ``reply_head`` also reply logits ``float32[B, 7]``) or
Q = V + A - mean(A) ``float32[B, 7]`` (``"dueling"``). Parameter names (``conv``, ``dense``, ``head``,
``value``, ``reply``) are stable: checkpoints, conv freezing and the supervised -> RL transfer rely on them.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
from jax import Array

HEADS = ("one", "two", "dueling")


def preprocess(boards: Array) -> Array:
    """float32[B, 6, 7, 2] planes (own, opponent) of ``boards`` int8[B, 6, 7]; each column's lowest empty
    cell is -1 in both planes."""
    boards = jnp.asarray(boards)
    own = (boards == 1).astype(jnp.float32)
    opp = (boards == -1).astype(jnp.float32)
    empty = boards == 0
    # A cell is playable when it is empty and the cell below is filled (or it is on the bottom row).
    below_filled = jnp.concatenate([~empty[..., 1:, :], jnp.ones_like(empty[..., :1, :])], axis=-2)
    playable = empty & below_filled
    planes = jnp.stack([own, opp], axis=-1)
    return jnp.where(playable[..., None], -1.0, planes)


class ValidConv(nn.Module):
    """A stride-1 "valid" 2-D convolution as one im2col matmul (design.md §5): the parameters (``kernel``
    [kh, kw, in, out], ``bias`` [out]) and outputs of ``nn.Conv(features, kernel_size, padding="VALID")``."""

    features: int
    kernel_size: tuple[int, int]
    kernel_init: nn.initializers.Initializer = nn.initializers.lecun_normal()

    @nn.compact
    def __call__(self, x: Array) -> Array:
        kh, kw = self.kernel_size
        cin = x.shape[-1]
        kernel = self.param("kernel", self.kernel_init, (kh, kw, cin, self.features))
        bias = self.param("bias", nn.initializers.zeros_init(), (self.features,))
        h, w = x.shape[-3] - kh + 1, x.shape[-2] - kw + 1
        patches = jnp.stack([x[..., i : i + h, j : j + w, :] for i in range(kh) for j in range(kw)], axis=-2)
        patches = patches.reshape(patches.shape[:-2] + (kh * kw * cin,))  # [..., h, w, kh*kw*cin]
        return patches @ kernel.reshape(kh * kw * cin, self.features) + bias


class ConvBlock(nn.Module):
    """Conv(w, 4x4, valid) -> ReLU -> Conv(w, 2x2, valid) -> ReLU -> flatten (2*3*w)."""

    width: int = 128

    @nn.compact
    def __call__(self, x: Array) -> Array:
        x = nn.relu(ValidConv(self.width, (4, 4), name="conv1")(x))
        x = nn.relu(ValidConv(self.width, (2, 2), name="conv2")(x))
        return x.reshape(x.shape[:-3] + (-1,))


class MLPHead(nn.Module):
    """Dense(w) -> ReLU -> Dense(out)."""

    width: int
    out: int

    @nn.compact
    def __call__(self, x: Array) -> Array:
        x = nn.relu(nn.Dense(self.width, name="hidden")(x))
        return nn.Dense(self.out, name="out")(x)


class CNet(nn.Module):
    """CNET-w: 185,735 parameters with one head and 202,376 with two at width 128."""

    width: int = 128
    heads: str = "one"
    reply_head: bool = False

    @nn.compact
    def __call__(self, boards: Array):
        if self.heads not in HEADS:
            raise ValueError(f"heads must be one of {HEADS}, got {self.heads!r}")
        if self.reply_head and self.heads != "two":
            raise ValueError(f"a reply head needs heads='two', got {self.heads!r}")
        x = ConvBlock(self.width, name="conv")(preprocess(boards))
        x = nn.relu(nn.Dense(self.width, name="dense")(x))
        main = MLPHead(self.width, 7, name="head")(x)
        if self.heads == "one":
            return main
        value = MLPHead(self.width, 1, name="value")(x)[..., 0]
        if self.heads == "two":
            return (main, value, nn.Dense(7, name="reply")(x)) if self.reply_head else (main, value)
        return value[..., None] + main - main.mean(axis=-1, keepdims=True)


def init_params(key: Array, width: int = 128, heads: str = "one"):
    """Fresh parameters for ``CNet(width, heads)`` (a batch of one empty board traces the shapes)."""
    return CNet(width=width, heads=heads).init(key, jnp.zeros((1, 6, 7), jnp.int8))["params"]


def param_shapes(width: int = 128, heads: str = "one"):
    """``jax.ShapeDtypeStruct`` leaves of :func:`init_params`' parameters (traced, not computed)."""
    return jax.eval_shape(lambda key: init_params(key, width=width, heads=heads), jax.random.key(0))
