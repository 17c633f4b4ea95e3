"""A small residual tower with policy and value heads, the network of AlphaZero-style agents (design.md §8).

``Tower(num_actions, encoding, blocks, channels)`` maps observations ``[B, H, W(, C)]`` to
``(float32[B, num_actions] logits, float32[B] value)``: a 3x3 ``stem`` conv on the planes of
:func:`encode`; ``blocks`` residual blocks (3x3 conv, ReLU, 3x3 conv initialised to zero, added, ReLU);
a policy head (1x1 conv to 2 planes, ReLU, ``policy`` Dense) and a value head (1x1 conv, ReLU,
Dense(64), ReLU, Dense(1)). ``reply_head`` adds reply logits (a ``reply`` Dense on the policy planes);
``dueling`` makes the logits ``V + A - mean(A)`` (``dueling_value`` Dense(1)). Every convolution keeps
the board size (zero padding) and runs as :class:`c4jax.nets.cnet.ValidConv`.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
from jax import Array

from c4jax import games
from c4jax.nets.cnet import CNet, ValidConv, preprocess


class SameConv3(nn.Module):
    """A 3x3 convolution that keeps the board size (zero padding of one cell)."""

    features: int
    kernel_init: nn.initializers.Initializer = nn.initializers.lecun_normal()

    @nn.compact
    def __call__(self, x: Array) -> Array:
        x = jnp.pad(x, [(0, 0)] * (x.ndim - 3) + [(1, 1), (1, 1), (0, 0)])
        return ValidConv(self.features, (3, 3), kernel_init=self.kernel_init, name="conv")(x)


ENCODINGS = ("cnet_planes", "hw", "hwc")


def encode(observations: Array, encoding: str) -> Array:
    """float32[..., H, W, C]: ``observations`` as input planes: the CNET planes (``"cnet_planes"``), as they
    are (``"hwc"``) or as one plane (``"hw"``); ``ValueError`` for another encoding."""
    if encoding == "cnet_planes":
        return preprocess(observations)
    x = jnp.asarray(observations).astype(jnp.float32)
    if encoding == "hw":
        return x[..., None]
    if encoding == "hwc":
        return x
    raise ValueError(f"encoding must be one of {ENCODINGS}, got {encoding!r}")


def encoding_for(game) -> str:
    """The :func:`encode` mode of ``game``'s observations: the one its kit names, else by their rank."""
    named = games.kit_of(game).encoding
    if named is not None:
        if named not in ENCODINGS:
            raise ValueError(f"{game.id}'s kit names the encoding {named!r}; choose one of {ENCODINGS}")
        return named
    if len(game.observation_shape) == 2:
        return "hw"
    if len(game.observation_shape) == 3:
        return "hwc"
    raise ValueError(f"the residual tower takes [H, W] or [H, W, C] observations; {game.id}'s are "
                     f"{game.observation_shape}")


class Tower(nn.Module):
    """Residual tower: ``blocks`` blocks of ``channels`` 3x3 filters, policy and value heads (module docstring)."""

    num_actions: int
    encoding: str
    blocks: int = 4
    channels: int = 64
    reply_head: bool = False
    dueling: bool = False

    @nn.compact
    def __call__(self, boards: Array) -> tuple[Array, ...]:
        x = nn.relu(SameConv3(self.channels, name="stem")(encode(boards, self.encoding)))
        for i in range(self.blocks):
            y = nn.relu(SameConv3(self.channels, name=f"block{i}_a")(x))
            y = SameConv3(self.channels, kernel_init=nn.initializers.zeros_init(), name=f"block{i}_b")(y)
            x = nn.relu(x + y)
        lead = x.shape[:-3]
        p = nn.relu(nn.Dense(2, name="policy_conv")(x)).reshape(lead + (-1,))
        logits = nn.Dense(self.num_actions, name="policy")(p)
        if self.dueling:
            logits = nn.Dense(1, name=DUELING)(p) + logits - logits.mean(axis=-1, keepdims=True)
        v = nn.relu(nn.Dense(1, name="value_conv")(x)).reshape(lead + (-1,))
        v = nn.relu(nn.Dense(64, name="value_hidden")(v))
        value = nn.Dense(1, name="value")(v)[..., 0]
        if self.reply_head:
            return logits, value, nn.Dense(self.num_actions, name="reply")(p)
        return logits, value


def two_headed(game, width: int = 128, tower: tuple[int, ...] = (), reply_head: bool = False) -> nn.Module:
    """``Tower(*tower)`` (``(blocks, channels)``) for ``game``, or ``CNet(width, heads="two")`` when ``tower`` is
    empty (``ValueError`` unless the kit says the CNET reads ``game``); ``reply_head``: a third output."""
    if tower:
        blocks, channels = tower
        return Tower(blocks=blocks, channels=channels, num_actions=game.num_actions, encoding=encoding_for(game),
                     reply_head=reply_head)
    if not games.kit_of(game).cnet:
        raise ValueError(f"the CNET does not read {game.id}'s observations: it needs the residual tower (--tower-blocks)")
    return CNet(width=width, heads="two", reply_head=reply_head)


def init_params(key: Array, game, width: int = 128, tower: tuple[int, ...] = (), reply_head: bool = False):
    """Fresh parameters of :func:`two_headed` ``(game, width, tower, reply_head)``."""
    net = two_headed(game, width, tower, reply_head)
    return net.init(key, jnp.zeros((1,) + tuple(game.observation_shape), jnp.int8))["params"]


def param_shapes(game, width: int = 128, tower: tuple[int, ...] = (), reply_head: bool = False):
    """``jax.ShapeDtypeStruct`` leaves of :func:`init_params`' parameters (traced, not computed)."""
    return jax.eval_shape(lambda key: init_params(key, game, width, tower, reply_head), jax.random.key(0))


REPLY = "reply"  # the reply head's parameter subtree
DUELING = "dueling_value"  # the dueling head's state-value Dense


def fold_dueling(params):
    """The plain tower's parameters computing what the dueling ``params`` compute (``V + A - mean(A)`` folded
    into the ``policy`` Dense; leading axes kept); ``params`` itself without a dueling head."""
    if DUELING not in params:
        return params
    a, v = params["policy"], params[DUELING]
    policy = {"kernel": a["kernel"] - a["kernel"].mean(axis=-1, keepdims=True) + v["kernel"],
              "bias": a["bias"] - a["bias"].mean(axis=-1, keepdims=True) + v["bias"]}
    return {**{k: x for k, x in params.items() if k != DUELING}, "policy": policy}


def without_reply_head(params):
    """``params`` without the reply head's subtree."""
    return {k: v for k, v in params.items() if k != REPLY} if REPLY in params else params


def from_metadata(network: dict) -> tuple[int, ...]:
    """The ``tower`` of a checkpoint's ``network`` metadata (``()``: a CNET)."""
    tower = network.get("tower") or []
    if tower and (len(tower) != 2 or not all(isinstance(n, int) and n >= 1 for n in tower)):
        raise ValueError(f"network 'tower' must be [blocks, channels] (positive integers), got {tower!r}")
    return tuple(tower)
