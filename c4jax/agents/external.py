"""Any Python policy as an agent: ``agents.from_callable(fn)`` (docs/guide/api.md). ``fn`` runs on the
host (``jax.pure_callback``, once per batch) on NumPy ``int8[B, 6, 7]`` legal, unfinished boards and
returns ``float[B, 7]`` scores (``act``: the best legal column, the lowest among equals) or, with
``returns="actions"``, ``int[B]`` columns (``scores``: 1 there, 0 on the other legal columns); full
columns score ``-inf``. ``stochastic=True`` calls ``fn(boards, rng)``, a NumPy generator seeded from the key.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct
from jax import Array

from c4jax import games
from c4jax.agents.base import AgentBase, observation_legal
from c4jax.agents.policy import ILLEGAL_SCORE

RETURNS = ("scores", "actions")


def _rng_of(key_data: np.ndarray) -> np.random.Generator:
    return np.random.default_rng(np.asarray(key_data, np.uint32).ravel().tolist())


@struct.dataclass
class CallableAgent(AgentBase):
    """An agent whose decisions come from a host-side Python function (module docstring)."""

    fn: Callable[..., Any] = struct.field(pytree_node=False)
    name: str = struct.field(pytree_node=False, default="python")
    returns: str = struct.field(pytree_node=False, default="scores")
    stochastic: bool = struct.field(pytree_node=False, default=False)
    game: Any = struct.field(pytree_node=False, kw_only=True)

    @property
    def costly(self) -> bool:
        return True  # a host call: asked only about the games where it is to move

    def _call(self, boards: np.ndarray, key_data: np.ndarray | None) -> np.ndarray:
        shape = tuple(self.game.observation_shape)
        b = np.ascontiguousarray(np.asarray(boards, np.int8).reshape((-1,) + shape))
        out = self.fn(b, _rng_of(key_data)) if self.stochastic else self.fn(b)
        if hasattr(out, "detach"):  # a torch tensor
            out = out.detach().cpu().numpy()
        out = np.asarray(out)
        want = (len(b), self.game.num_actions) if self.returns == "scores" else (len(b),)
        if out.shape != want:
            raise ValueError(f"agent {self.name!r}: the policy returned shape {out.shape} for {len(b)} boards, "
                             f"expected {want} ({self.returns})")
        return out

    def _host(self, boards: Array, key: Array | None) -> Array:
        """The function's output for traced ``boards [B, 6, 7]`` (float32 scores or int32 actions)."""
        lead = boards.shape[:boards.ndim - len(self.game.observation_shape)]
        if self.returns == "scores":
            shape, dtype = lead + (self.game.num_actions,), np.float32
        else:
            shape, dtype = lead, np.int32

        def host(b, k=None):
            return self._call(b, k).astype(dtype).reshape(shape)

        args = (boards,) if key is None else (boards, jax.random.key_data(key))
        return jax.pure_callback(host, jax.ShapeDtypeStruct(shape, dtype), *args, vmap_method="sequential")

    def _key(self, key: Array | None) -> Array | None:
        return key if self.stochastic else None

    def _scores_from(self, boards: Array, out: Array) -> Array:
        legal = observation_legal(self.game, boards)
        if self.returns == "actions":
            out = (jnp.arange(self.game.num_actions) == out[..., None]).astype(jnp.float32)
        return jnp.where(legal, out.astype(jnp.float32), ILLEGAL_SCORE)

    def _scores(self, boards: Array, key: Array | None = None) -> Array:
        if self.stochastic and key is None:
            key = jax.random.key(0)  # scores() takes no key: a stochastic policy is asked with a fixed one
        return self._scores_from(boards, self._host(boards, self._key(key)))

    def _act(self, boards: Array, key: Array) -> Array:
        out = self._host(boards, self._key(key))
        if self.returns == "actions":
            return out.astype(jnp.int32)
        return jnp.argmax(self._scores_from(boards, out), axis=-1).astype(jnp.int32)


def from_callable(fn: Callable[..., Any], *, name: str = "python", returns: str = "scores",
                  stochastic: bool = False, game=games.DEFAULT) -> CallableAgent:
    """The agent of ``game`` (an id or a game object) that plays with ``fn`` (module docstring):
    ``fn(observations)`` returns ``float[B, num_actions]`` scores or ``int[B]`` actions (``returns``).
    ``TypeError`` unless ``fn`` is callable, ``ValueError`` for another ``returns``.
    """
    if not callable(fn):
        raise TypeError(f"from_callable needs a function, got {type(fn).__name__}")
    if returns not in RETURNS:
        raise ValueError(f"returns must be one of {RETURNS}, got {returns!r}")
    return CallableAgent(fn=fn, name=name, returns=returns, stochastic=stochastic,
                         game=games.make(game) if isinstance(game, str) else game)
