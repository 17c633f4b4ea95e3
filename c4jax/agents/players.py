"""The agents of the players a game's kit supplies as data and pure functions (``GameKit.players``,
:class:`c4jax.games.kit.Player`: Connect Four's N-step lookahead, ``minimax<D>``, ``perfect`` and
``openspiel-mcts<N>``), which the registry loads by their names (:func:`build`)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct
from jax import Array

from c4jax.agents.base import Agent, AgentBase, ScoreInfo, in_game_name
from c4jax.agents.external import from_callable
from c4jax.agents.search import MAX_SIMULATIONS
from c4jax.games.kit import Player, resolve


@struct.dataclass
class PlayerAgent(AgentBase):
    """A kit's scoring player (``Player.scores``) as an agent: ``scores`` are the player's, ``act``
    plays the first of its best actions in its ``tie_order`` when ``deterministic``, else uniformly
    among them. Batched and jittable (every field is static)."""

    player: Player = struct.field(pytree_node=False)
    n: int | None = struct.field(pytree_node=False, default=None)
    deterministic: bool = struct.field(pytree_node=False, default=True)
    game: object = struct.field(pytree_node=False, kw_only=True)

    @property
    def name(self) -> str:
        base = self.player.name.format(n=self.n)
        both = self.player.tie_order is not None and self.player.sampled
        return in_game_name(f"{base}:{'det' if self.deterministic else 'sto'}" if both else base, self.game)

    @property
    def stochastic(self) -> bool:
        return not self.deterministic

    @property
    def costly(self) -> bool:
        return self.player.costly is not None and (self.n or 0) >= self.player.costly

    def describe_scores(self, action: str = "column", actions: str = "free columns") -> ScoreInfo:
        return ScoreInfo(self.player.kind, self.player.label.format(n=self.n, action=action))

    def _scores(self, boards: Array) -> Array:
        return resolve(self.player.scores)(boards, self.n)[0]

    def _act(self, boards: Array, key: Array) -> Array:
        best = resolve(self.player.scores)(boards, self.n)[1]
        if self.deterministic:
            rank = np.argsort(self.player.tie_order).astype(np.int32)  # each action's place in the order
            return jnp.argmin(jnp.where(best, rank, best.shape[-1]), axis=-1).astype(jnp.int32)
        return jax.random.categorical(key, jnp.where(best, 0.0, -jnp.inf)).astype(jnp.int32)


def number(player: Player, text: str) -> int:
    """The number that ``text`` (a name's ``{n}``) gives ``player``, or a ``ValueError``."""
    low, high = player.numbers
    high = MAX_SIMULATIONS if high is None else high
    if not (text.isascii() and text.isdigit()) or not low <= int(text) <= high:
        raise ValueError(f"agent {player.name.format(n=text)!r}: the {player.number} must be an integer in "
                         f"{low}..{high}, as in {player.example!r}")
    return int(text)


def build(player: Player, n: int | None, mode: str | None, game) -> Agent:
    """The agent of ``player`` of ``game`` with number ``n`` in ``mode`` (None: deterministic where it can be);
    ``ValueError`` for a mode it lacks, ``player.missing`` when its extra is not installed."""
    name = player.name.format(n=n)
    if mode == "sto" and not player.sampled:
        raise ValueError(f"agent {name!r} has no stochastic mode ({name + ':sto'!r})")
    if mode == "det" and player.tie_order is None:
        raise ValueError(f"agent {name!r} has no deterministic mode ({name + ':det'!r})")
    if player.available is not None and not resolve(player.available)():
        raise resolve(player.missing)()
    if player.policy is not None:
        return from_callable(resolve(player.policy)(n), name=in_game_name(name, game), returns="actions",
                             stochastic=True, game=game)
    return PlayerAgent(player=player, n=n, deterministic=player.tie_order is not None and mode != "sto", game=game)
