"""The Agent that plays a trained CNET (greedy or sampled, optionally mirror-averaged),
and rebuilding one from a checkpoint directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct
from jax import Array

from c4jax import games
from c4jax.agents.base import AgentBase, ScoreInfo, observation_legal
from c4jax.agents.policy import ILLEGAL_SCORE, greedy, masked_logits, masked_softmax, sample
from c4jax.io import checkpoint
from c4jax.nets import cnet
from c4jax.nets.cnet import CNet

OUTPUTS = ("policy", "q")


@struct.dataclass
class NetworkAgent(AgentBase):
    """A trained CNET playing greedily (``det``) or by sampling its policy (``sto``).

    ``scores``: the policy's probabilities (``output="policy"``) or the Q-values (``output="q"``),
    with ``symmetric`` averaged over the game's symmetries (``GameKit.symmetries``), illegal ``-inf``.
    ``ValueError`` for another ``output`` or a sampled Q-value agent.
    """

    params: Any
    label: str = struct.field(pytree_node=False, default="network")
    width: int = struct.field(pytree_node=False, default=128)
    heads: str = struct.field(pytree_node=False, default="one")
    output: str = struct.field(pytree_node=False, default="policy")
    sampled: bool = struct.field(pytree_node=False, default=False)
    symmetric: bool = struct.field(pytree_node=False, default=True)
    game: Any = struct.field(pytree_node=False, kw_only=True)

    def __post_init__(self):
        if self.output not in OUTPUTS:
            raise ValueError(f"output must be one of {OUTPUTS}, got {self.output!r}")
        if self.output == "q" and self.sampled:
            raise ValueError(f"{self.label}: a Q-value agent has no sampled (':sto') mode")

    @property
    def name(self) -> str:
        return f"{self.label}:{'sto' if self.sampled else 'det'}"

    @property
    def stochastic(self) -> bool:
        return self.sampled

    def describe_scores(self, action: str = "column", actions: str = "free columns") -> ScoreInfo:
        if self.output == "q":
            return ScoreInfo("q", f"Q-value of each {action} (the network's expected return)")
        return ScoreInfo("policy", f"policy probability of each {action}")

    def _legal(self, boards: Array) -> Array:
        return observation_legal(self.game, boards)

    def _values(self, boards: Array) -> Array:
        """float32[B, A]: probabilities (policy) or Q-values, symmetric-averaged if asked."""
        net = CNet(width=self.width, heads=self.heads)

        def one(b):
            out = net.apply({"params": self.params}, b)
            main = out[0] if self.heads == "two" else out
            return masked_softmax(main, self._legal(b)) if self.output == "policy" else main

        values = one(boards)
        symmetries = games.kit_of(self.game).symmetries if self.symmetric else ()
        if symmetries:
            total = values
            for symmetry in symmetries:
                total = total + symmetry.policy(one(symmetry.observation(boards)))
            values = (1.0 / (len(symmetries) + 1)) * total
        return values

    def _scores(self, boards: Array) -> Array:
        return jnp.where(self._legal(boards), self._values(boards), ILLEGAL_SCORE)

    def prior_logits(self, boards: Array, q_temperature: float) -> Array:
        """float32[B, A]: a search prior's logits: a policy's log-probabilities or ``Q / q_temperature``;
        illegal actions at the dtype's minimum."""
        values = self._values(boards)
        if self.output == "policy":
            logits = jnp.log(jnp.maximum(values, jnp.finfo(values.dtype).tiny))
        else:
            logits = values / q_temperature
        return masked_logits(logits, self._legal(boards))

    def prior_logits_states(self, states, q_temperature: float) -> Array:
        """:meth:`prior_logits` of the observations of game states [B]."""
        return self.prior_logits(jax.vmap(self.game.observe)(states), q_temperature)

    def _act(self, boards: Array, key: Array) -> Array:
        values, legal = self._values(boards), self._legal(boards)
        if self.sampled:
            return sample(key, jnp.log(jnp.maximum(values, 1e-30)), legal)
        return greedy(values, legal)


def resolve_checkpoint(directory: str | Path) -> Path:
    """The checkpoint an agent is loaded from: ``directory`` itself, or the ``best/`` checkpoint of an
    RL run directory."""
    directory = Path(directory)
    if not (directory / checkpoint.METADATA_FILE).exists() and (directory / "best" / checkpoint.METADATA_FILE).exists():
        return directory / "best"
    return directory


def agent_from_checkpoint(directory: str | Path, mode: str | None = None, label: str | None = None) -> NetworkAgent:
    """Rebuild the CNET agent saved in a checkpoint or run directory (:func:`resolve_checkpoint`);
    ``CheckpointError`` for metadata that does not describe one."""
    directory = resolve_checkpoint(directory)
    meta = checkpoint.read_metadata(directory, game=None)
    if not games.kit_of(game := checkpoint_game(directory, meta)).cnet:
        raise checkpoint.CheckpointError(f"checkpoint {str(directory)!r}: the CNET does not read {game.id}")
    try:
        net, agent = meta["network"], meta["agent"]
        width, heads, output = int(net["width"]), str(net["heads"]), str(agent["output"])
    except (KeyError, TypeError, ValueError) as e:
        raise checkpoint.CheckpointError(
            f"checkpoint {str(directory)!r} has no agent description (network/agent metadata): {e}"
        ) from e
    if net.get("tower"):
        raise checkpoint.CheckpointError(f"checkpoint {str(directory)!r} holds a residual tower, not a CNET: "
                                         "load it with agents.load (it plays with search)")
    template = {"params": cnet.param_shapes(width=width, heads=heads)}
    params = checkpoint.restore(directory, template)["params"]
    mode = mode or agent.get("default_mode", "det")
    return NetworkAgent(
        params=params,
        label=label or meta.get("name", Path(directory).name),
        width=width,
        heads=heads,
        output=output,
        sampled=mode == "sto",
        symmetric=bool(agent.get("symmetric", True)),
        game=game,
    )


def checkpoint_game(directory, meta: dict):
    """The game object of a checkpoint's metadata (as :func:`c4jax.io.checkpoint.read_metadata` returns
    it, naming its game); ``CheckpointError`` for a game this c4jax cannot make."""
    name = meta.get("game")
    if not isinstance(name, str):
        raise checkpoint.CheckpointError(f"checkpoint {str(directory)!r} names no game (its metadata.json has no "
                                         "\"game\")")
    try:
        return games.make(name)
    except (ValueError, ImportError) as e:
        raise checkpoint.CheckpointError(f"checkpoint {str(directory)!r} is of the game {name!r}, which this "
                                         f"c4jax cannot play: {e}") from e
