"""What an RL trainer provides to the host loop (:func:`c4jax.learning.loop.run`): :class:`Algorithm`,
whose defaults are those of a trainer of a CNET evaluated as a :class:`~c4jax.agents.network.NetworkAgent`.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any, Callable, Hashable, Mapping

from jax import Array

from c4jax.agents.base import Agent
from c4jax.agents.network import NetworkAgent
from c4jax.games.base import Game
from c4jax.learning import config as config_lib
from c4jax.learning.train_state import TrainState


# the config fields that set the interval between evaluations: --eval-every and the unit counts it is saved as
EVAL_FIELDS = ("eval_every", "iterations_per_eval", "buffers_per_eval", "episodes_per_eval")


class Algorithm:
    """An RL trainer; its training state is a :class:`~c4jax.learning.train_state.TrainState` (or a subclass)."""

    name: str
    """The run's and the saved agent's name: "dqn", "dueling_dqn", "reinforce", "ppo" or "alphazero"."""
    game: Game
    """The game it trains on (``LoopConfig.game`` names it)."""
    heads: str
    """The CNET heads ("one", "two", "dueling"), saved with the network."""
    output: str
    """What the network's first head is: "q" or "policy"."""
    default_mode: str
    """How the saved agent plays by default: "det" or "sto" (and whether evaluation samples)."""

    batch_fields: tuple[str, ...] = ()
    """'batch' split: the dotted state fields whose leaves carry a batch axis; other leaves are replicated."""
    batch_sizes: Mapping[str, int] = MappingProxyType({})
    """'batch' split: ``{flag: size}`` of every batch split over the devices (multiples of their number)."""
    network_meta: Mapping[str, Any] = MappingProxyType({})
    """Extra fields of the saved network's description; empty for a CNET (:attr:`is_cnet`)."""
    agent_meta: Mapping[str, Any] = MappingProxyType({})
    """Extra fields of the saved agent's description (e.g. AlphaZero's search settings)."""
    compile_key: Hashable | None = None
    """Everything the chunk's program depends on besides the state: algorithms with equal keys share one
    compiled chunk. ``None``: compiled anew for each algorithm."""

    update_step: int = 1
    """The updates of one whole block of the training (an iteration's, a buffer's...)."""
    eval_updates: int = 1
    """The updates between two evaluations."""

    def init(self, key: Array, params) -> TrainState:
        """The fresh training state of one seed, from its network's initial ``params``."""
        raise NotImplementedError

    def chunk(self, state: TrainState) -> tuple[TrainState, dict]:
        """``(state, scalar metrics)`` at the next evaluation point; jittable and vmappable."""
        raise NotImplementedError

    def collect(self, state: TrainState) -> TrainState:
        """One round of self-play into the replay buffer, without an update or counting the games (jittable,
        vmappable; :func:`c4jax.learning.portable.refill`)."""
        raise NotImplementedError(f"{self.name} has no replay buffer to refill")

    def chunk_of(self, units):
        """A shorter :meth:`chunk` of ``units`` (what :meth:`short_block` returns, hashable)."""
        raise NotImplementedError

    def capped(self, budget: int, units=None) -> Callable | None:
        """:meth:`chunk` (``units``: :meth:`chunk_of`) for a vmapped run, jitted, in which no seed updates past
        ``budget``; ``None`` where the plain one already guarantees it: its blocks make the same updates on
        every seed, so seeds that start level stay level. The default: ``None``."""
        del budget, units
        return None

    def block_end(self, updates: int) -> int:
        """The updates after a full chunk from ``updates`` (at most)."""
        return updates + self.eval_updates

    def short_block(self, state, updates: int):
        """The ``units`` of :meth:`chunk_of` that make ``updates`` (>= 1) more updates (at most) from one seed's
        ``state``; by default ``updates``."""
        del state
        return updates

    def eval_interval_of(self, config: Mapping[str, Any]) -> int | None:
        """The updates between evaluations of ``self.cfg`` with ``config``'s :data:`EVAL_FIELDS`; ``None`` when
        it cannot tell."""
        cfg = getattr(self, "cfg", None)
        if not dataclasses.is_dataclass(cfg) or not hasattr(cfg, "eval_updates"):
            return None
        changes = {k: config[k] for k in EVAL_FIELDS if k in config and hasattr(cfg, k)}
        try:
            return config_lib.settle(dataclasses.replace(cfg, **changes)).eval_updates
        except (TypeError, ValueError):
            return None

    @property
    def is_cnet(self) -> bool:
        """Whether the network is a CNET of ``heads`` (which ``--init-from`` can start)."""
        return not self.network_meta

    def fresh_params(self, key: Array) -> Any | None:
        """The initial parameters of a network of the algorithm's own; ``None``: a CNET, which the loop makes."""
        del key
        return None

    def agent_of(self, params, label: str, sampled: bool = False, symmetric: bool = False, *, width: int) -> Agent:
        """The evaluated agent: by default the CNET of ``width`` as a :class:`~c4jax.agents.network.NetworkAgent`."""
        return NetworkAgent(params=params, label=label, width=width, heads=self.heads, output=self.output,
                            sampled=sampled, symmetric=symmetric, game=self.game)

    def playing_params(self, state: TrainState):
        """The weights the loop evaluates, keeps and saves; by default ``state.params``."""
        return state.params

    def saved_params(self, params):
        """The weights ``best/`` saves from :meth:`playing_params`' ``params``; by default the same."""
        return params

    def sync_target(self, state: TrainState, reset) -> TrainState:
        """``state`` after the old-network rule took a new best or reverted where ``reset`` (bool[K]); by default
        unchanged."""
        del reset
        return state
