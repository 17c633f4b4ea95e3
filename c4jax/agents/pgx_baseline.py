"""A shipped AlphaZero network as a pgx-style baseline model (docs/guide/play.md):
``logits, value = baseline("alphazero")(state.observation)`` on pgx observations
(``GameKit.from_pgx``: Connect Four's ``bool[..., 6, 7, 2]``): ``logits`` ``float32[..., A]``, illegal
actions at float32's minimum; ``value`` ``float32[...]`` in [-1, 1] for the player to move. The raw
network of ``agents.load("alphazero@0")``, pure JAX, a pytree of its parameters; pgx is never imported.
"""

from __future__ import annotations

from typing import Any

import jax
from flax import struct
from jax import Array

from c4jax.agents.network_search import agent_from_search_checkpoint, evaluate, is_search_checkpoint
from c4jax.agents.registry import checkpoint_path
from c4jax.games import kit_of
from c4jax.io import checkpoint


@struct.dataclass
class PgxBaseline:
    """A two-headed network (CNET of ``width``, or the residual ``tower``) on pgx observations."""

    params: Any
    label: str = struct.field(pytree_node=False, default="alphazero")
    width: int = struct.field(pytree_node=False, default=128)
    tower: tuple[int, ...] = struct.field(pytree_node=False, default=())
    game: Any = struct.field(pytree_node=False, kw_only=True)

    # identity, not the parameters' values: jax.jit(model) keys its cache on the callable's hash
    __hash__ = object.__hash__

    def __eq__(self, other) -> bool:
        return self is other

    def __call__(self, observation) -> tuple[Array, Array]:
        """``(logits float32[..., 7], value float32[...])`` of pgx observations ``bool[..., 6, 7, 2]``.
        Jitted unless traced."""
        if isinstance(observation, jax.core.Tracer):
            return self.apply(observation)
        return _jit_apply(self, observation)

    def apply(self, observation) -> tuple[Array, Array]:
        """:meth:`__call__` without its own ``jit`` (to be traced inside the caller's)."""
        boards = kit_of(self.game).from_pgx(observation)
        shape = tuple(self.game.observation_shape)
        lead = boards.shape[:boards.ndim - len(shape)]
        logits, value = evaluate(self.params, boards.reshape((-1,) + shape), self.width, self.tower, self.game)
        return logits.reshape(lead + logits.shape[-1:]), value.reshape(lead)


@jax.jit
def _jit_apply(model: PgxBaseline, observation) -> tuple[Array, Array]:
    return model.apply(observation)


def baseline(name: str = "alphazero") -> PgxBaseline:
    """The pgx-style model of an AlphaZero-style network: a shipped agent's name or a checkpoint or
    run directory. ``ValueError`` for a network without a value head or of a game without ``from_pgx``."""
    directory = checkpoint_path(name)
    try:
        searched = is_search_checkpoint(directory)
    except checkpoint.CheckpointError as e:
        raise ValueError(f"baseline {name!r}: no shipped agent or checkpoint of that name ({e})") from e
    if not searched:
        raise ValueError(f"baseline {name!r}: not an AlphaZero-style network (policy and value heads); "
                         "the shipped one is 'alphazero'")
    agent = agent_from_search_checkpoint(directory, "det", label=str(name), num_simulations=0)
    if kit_of(agent.game).from_pgx is None:
        raise ValueError(f"baseline {name!r}: a network of {agent.game.id}, whose kit reads no pgx observations")
    return PgxBaseline(params=agent.params, label=agent.label, width=agent.width, tower=agent.tower, game=agent.game)
