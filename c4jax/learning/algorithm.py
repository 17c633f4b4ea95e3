"""What an RL trainer provides to the host loop (:func:`c4jax.learning.loop.run`).

:class:`Algorithm` declares every attribute and hook the loop and the device placement
(:mod:`c4jax.learning.placement`) read; DQN, REINFORCE, PPO and AlphaZero subclass it. The
defaults are those of a trainer of a CNET (``c4jax.nets.cnet``) that the loop evaluates as a
:class:`~c4jax.agents.network.NetworkAgent`, on one device or with its whole state replicated.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any, Hashable, Mapping

from jax import Array

from c4jax.agents.base import Agent
from c4jax.agents.network import NetworkAgent
from c4jax.games.base import Game
from c4jax.learning import config as config_lib
from c4jax.learning.train_state import TrainState


# the config fields that set the interval between evaluations: --eval-every and the unit counts it is saved as
EVAL_FIELDS = ("eval_every", "iterations_per_eval", "buffers_per_eval", "episodes_per_eval")


class Algorithm:
    """An RL trainer. Its training state is a :class:`~c4jax.learning.train_state.TrainState` (or a
    subclass): the loop reads ``state.params`` and ``state.updates`` and swaps weights with
    ``state.replace(params=...)``."""

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
    """Several devices, 'batch' split: the dotted state fields whose leaves carry a batch axis (a
    replay buffer's storage); every other leaf is replicated."""
    batch_sizes: Mapping[str, int] = MappingProxyType({})
    """Several devices, 'batch' split: ``{flag: size}`` of every batch split over the devices, each of
    which must be a multiple of their number."""
    network_meta: Mapping[str, Any] = MappingProxyType({})
    """Extra fields of the saved network's description. Empty for a CNET; an algorithm with a network of
    its own describes it here (e.g. AlphaZero's residual tower), see :attr:`is_cnet`."""
    agent_meta: Mapping[str, Any] = MappingProxyType({})
    """Extra fields of the saved agent's description (e.g. AlphaZero's search settings)."""
    compile_key: Hashable | None = None
    """Everything the chunk's program depends on besides the state (the class and its settings):
    algorithms with equal keys trace the same program, so a process compiles it once for all of
    them (a run resumed in the same process, a sweep over seeds one run at a time). ``None``: the
    chunk is compiled anew for each algorithm (e.g. one that plays a loaded opponent, whose weights
    the program holds as constants)."""

    update_step: int = 1
    """The updates of one whole block of the training (an iteration's, a buffer's...); a ``--total-updates`` or
    ``--eval-every`` that is not a multiple of it ends with a shortened block."""
    eval_updates: int = 1
    """The updates of one full chunk (``--eval-every``): the updates between two evaluations."""

    def init(self, key: Array, params) -> TrainState:
        """The fresh training state of one seed, from its network's initial ``params``."""
        raise NotImplementedError

    def chunk(self, state: TrainState) -> tuple[TrainState, dict]:
        """Advance ``state`` to the next evaluation point on device, returning it and the chunk's
        metrics (scalars). Jittable and vmappable: the loop calls it as ``jit(vmap(chunk))``. The
        algorithms here set it per instance to ``jax.jit(self._chunk)``."""
        raise NotImplementedError

    def collect(self, state: TrainState) -> TrainState:
        """One round of the algorithm's self-play into its replay buffer, without an update and
        without counting the games in ``state.episodes`` (jittable, vmappable): how a run resumed
        from its portable state (:mod:`c4jax.learning.portable`) refills the buffer. Only an
        algorithm with a replay buffer needs it."""
        raise NotImplementedError(f"{self.name} has no replay buffer to refill")

    def chunk_of(self, units):
        """A chunk shorter than :meth:`chunk`, of ``units`` (what :meth:`short_block` returns, hashable): the
        last chunk of a run whose ``--total-updates`` ends before the next evaluation. The algorithms here jit
        their ``_chunk`` with ``units`` bound (one compile per distinct ``units``)."""
        raise NotImplementedError

    def block_end(self, updates: int) -> int:
        """The updates after a full chunk from ``updates`` (at most: a trainer that only plays until its
        buffer fills makes fewer)."""
        return updates + self.eval_updates

    def short_block(self, state, updates: int):
        """The ``units`` of :meth:`chunk_of` that make exactly ``updates`` (>= 1) more updates from ``state``
        (one seed's, on the host; a trainer whose blocks can make fewer updates than they hold, PPO's short
        buffers, makes at most that many): by default ``updates`` itself."""
        del state
        return updates

    def eval_interval_of(self, config: Mapping[str, Any]) -> int | None:
        """The updates between evaluations of this algorithm's settings (``self.cfg``, a config with an
        ``eval_updates``) with the :data:`EVAL_FIELDS` of ``config`` (a saved run's flat config), ``None`` when
        it cannot tell (no such config, or ``config``'s values are not valid)."""
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
        """Whether the network is a CNET of ``heads``, the network that ``--init-from`` can start:
        an algorithm with a network of its own names it in ``network_meta``."""
        return not self.network_meta

    def fresh_params(self, key: Array) -> Any | None:
        """The initial parameters of a network of the algorithm's own, or ``None`` (the default): a
        CNET, which the loop makes (:func:`c4jax.learning.loop.initial_state`, with ``--init-from``)."""
        del key
        return None

    def agent_of(self, params, label: str, sampled: bool = False, symmetric: bool = False, *, width: int) -> Agent:
        """The agent that the evaluation matches play and ``best/`` is chosen by: by default the CNET of
        the run's ``width`` as a :class:`~c4jax.agents.network.NetworkAgent` (``sampled``: sampling
        its policy; ``symmetric``: averaged with the mirrored board)."""
        return NetworkAgent(params=params, label=label, width=width, heads=self.heads, output=self.output,
                            sampled=sampled, symmetric=symmetric, game=self.game)

    def playing_params(self, state: TrainState):
        """The weights the loop evaluates, keeps as the old network and saves as ``best/``: by default
        the trained ``state.params`` (AlphaZero with ``ema_decay``: their moving average)."""
        return state.params

    def saved_params(self, params):
        """The weights that ``best/`` saves, from :meth:`playing_params`' ``params`` (stacked per seed
        with ``--vmap-seeds``): by default the same; AlphaZero drops its reply head, which only trains,
        so that ``best/`` holds the network an agent plays."""
        return params

    def sync_target(self, state: TrainState, reset) -> TrainState:
        """After the loop's old-network rule, which took a new best or reverted where ``reset``
        (bool[K], one per seed): ``state`` with anything that must follow the weights updated (DQN's
        target network, optionally). By default ``state`` unchanged."""
        del reset
        return state
