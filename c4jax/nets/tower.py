"""A small residual tower with policy and value heads, the network of AlphaZero-style agents
(design.md §8), as an alternative to the two-headed CNET.

``Tower(blocks, channels)`` maps public boards ``int8[B, 6, 7]`` to ``(float32[B, 7],
float32[B])`` (policy logits, value), like ``CNet(heads="two")``:

- the CNET input planes (:func:`c4jax.nets.cnet.preprocess`), a 3x3 convolution to ``channels``;
- ``blocks`` residual blocks: 3x3 conv -> ReLU -> 3x3 conv, added to the block's input, ReLU;
  the second convolution of each block starts at zero, so every block starts as the identity
  (the tower trains without normalisation layers);
- policy head: 1x1 conv to 2 planes -> ReLU -> Dense(7); value head: 1x1 conv to 1 plane ->
  ReLU -> Dense(64) -> ReLU -> Dense(1).

All convolutions keep the 6x7 board ("same" padding with zeros) and run as im2col matmuls
(:class:`c4jax.nets.cnet.ValidConv` on the padded input), which is what is fast on a CPU.
"""

from __future__ import annotations

import flax.linen as nn
import jax.numpy as jnp
from jax import Array

from c4jax.nets.cnet import CNet, ValidConv, preprocess


class SameConv3(nn.Module):
    """A 3x3 convolution that keeps the board size (zero padding of one cell)."""

    features: int
    kernel_init: nn.initializers.Initializer = nn.initializers.lecun_normal()

    @nn.compact
    def __call__(self, x: Array) -> Array:
        x = jnp.pad(x, [(0, 0)] * (x.ndim - 3) + [(1, 1), (1, 1), (0, 0)])
        return ValidConv(self.features, (3, 3), kernel_init=self.kernel_init, name="conv")(x)


class Tower(nn.Module):
    """Residual tower: ``blocks`` blocks of ``channels`` 3x3 filters, policy and value heads."""

    blocks: int = 4
    channels: int = 64

    @nn.compact
    def __call__(self, boards: Array) -> tuple[Array, Array]:
        x = nn.relu(SameConv3(self.channels, name="stem")(preprocess(boards)))
        for i in range(self.blocks):
            y = nn.relu(SameConv3(self.channels, name=f"block{i}_a")(x))
            y = SameConv3(self.channels, kernel_init=nn.initializers.zeros_init(), name=f"block{i}_b")(y)
            x = nn.relu(x + y)
        lead = x.shape[:-3]
        p = nn.relu(nn.Dense(2, name="policy_conv")(x)).reshape(lead + (-1,))
        logits = nn.Dense(7, name="policy")(p)
        v = nn.relu(nn.Dense(1, name="value_conv")(x)).reshape(lead + (-1,))
        v = nn.relu(nn.Dense(64, name="value_hidden")(v))
        return logits, nn.Dense(1, name="value")(v)[..., 0]


def two_headed(width: int = 128, tower: tuple[int, ...] = ()) -> nn.Module:
    """The two-headed network of an AlphaZero agent: ``Tower(*tower)`` (``(blocks, channels)``),
    or ``CNet(width, heads="two")`` when ``tower`` is empty."""
    if tower:
        blocks, channels = tower
        return Tower(blocks=blocks, channels=channels)
    return CNet(width=width, heads="two")


def init_params(key: Array, width: int = 128, tower: tuple[int, ...] = ()):
    """Fresh parameters of :func:`two_headed` ``(width, tower)``."""
    return two_headed(width, tower).init(key, jnp.zeros((1, 6, 7), jnp.int8))["params"]


def from_metadata(network: dict) -> tuple[int, ...]:
    """The ``tower`` of a checkpoint's ``network`` metadata (``()``: a CNET)."""
    tower = network.get("tower") or []
    if tower and (len(tower) != 2 or not all(isinstance(n, int) and n >= 1 for n in tower)):
        raise ValueError(f"network 'tower' must be [blocks, channels] (positive integers), got {tower!r}")
    return tuple(tower)
