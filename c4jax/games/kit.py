"""A game kit: the rules of one game (``game``, :class:`~c4jax.games.base.Game`) and everything else
that trainers, searches, matches and the UI ask of that game; code outside ``c4jax.games`` asks the kit
(:func:`c4jax.games.kit_of`), never which game it plays. docs/guide/extend.md ("Adding a game") describes
every field; the contracts of its callables and module names:

- ``observation_legal``: ``observations -> bool[..., A]``; ``random_start``: ``key -> State``;
  ``other_observation``: ``State -> observation`` of the player not to move;
- ``observation_range``: ``(low, high)``, scalars or arrays broadcast to the observation's shape (``None``
  allowed only for bool and float observations: :func:`check_kit`);
- ``env``: module with ``init``, ``step``, ``observe``, ``EnvState``; ``view``: module (or ``"module:ATTR"``)
  of :mod:`c4jax.games.viewbase`'s interface;
- ``from_observation``: ``observation -> State``, where an observation tells the whole state (agents then
  also take observations); ``playable``: concrete observations ``[B, ...]`` -> ``(observations, bool[B]
  finished)``, validated (``ValueError``) and every finished game replaced by the start position;
- ``position_words``: ``State -> tuple of uint32 arrays`` keying a search agent's scores (``None``: the
  observation's words); ``from_pgx``: pgx observations of the same game -> observations;
- ``plain_lookahead``: ``"module:function"``, ``act(observation, n) -> action``;
- ``solver``: module with ``solver_available()``, ``solve_scores(observations) -> int[..., A]``
  (``ILLEGAL`` where not legal), ``MISSING_SOLVER`` and ``SolverMissingError``;
- ``shaped_reward``: ``(before, after, action) -> float32[...]``, the reward of a move for its mover;
- ``text_format``: module with ``format_pairs(observations, actions) -> bytes`` and
  ``parse_pairs(data, where) -> (observations, actions)``;
- ``defaults``: per algorithm, per config section, the flags that differ on this game.

Every field but ``game`` and ``title`` has a default: ``GameKit(game=..., title=...)`` plugs a game in.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from c4jax.games.base import Game


@dataclass(frozen=True)
class Symmetry:
    """``observation`` maps observations ``[..., *observation_shape]`` to equivalent ones; ``actions[a]``
    is the image's action that plays what ``a`` plays."""

    name: str
    observation: Callable[[Array], Array]
    actions: tuple[int, ...]

    def policy(self, policy: Array) -> Array:
        """``policy[..., A]`` over the original's actions as the same distribution over the image's."""
        if self.reversal:
            return policy[..., ::-1]
        source = np.argsort(np.asarray(self.actions))  # the original action behind each image action
        return jnp.take(policy, jnp.asarray(source), axis=-1)

    def action(self, action: Array) -> Array:
        """The image's action of ``action`` (int32[...])."""
        if self.reversal:
            return len(self.actions) - 1 - action
        return jnp.asarray(self.actions, jnp.int32)[action]

    @property
    def reversal(self) -> bool:
        """Whether the symmetry reverses the actions (action ``a`` plays as ``n - 1 - a``: a mirror of columns)."""
        return self.actions == tuple(range(len(self.actions) - 1, -1, -1))


@dataclass(frozen=True)
class MatchRules:
    """What a protocol match of the game (:mod:`c4jax.evaluation.protocol`) takes from it.

    - ``openings``: the 49 openings, each the actions played from the start (``None``: the start
      position's two-ply openings, all of them when there are 49, else 49 spread evenly);
    - ``alternating``: no player moves twice in a row (a round robin then runs as one program,
      :mod:`c4jax.evaluation.lockstep`);
    - ``compact``: an agent is asked only where it is to move (``False``: both agents at every ply);
    - ``length``: ``final state -> int32[]`` reported per game (``None``: plies after the opening),
      ``length_text`` what it counts, for a table's note.
    """

    openings: tuple[tuple[int, ...], ...] | None = None
    alternating: bool = False
    compact: bool = True
    length: Callable[[Any], Array] | None = None
    length_text: str = "Plies after the opening"


@dataclass(frozen=True)
class Player:
    """One of a game's reference players as data (:mod:`c4jax.agents.players` makes it an agent).

    - ``name``: its ``agents.load`` name, ``{n}`` standing for its number; ``numbers``: ``(low, high)``
      of that number (``high`` ``None``: up to the search's ``MAX_SIMULATIONS``; ``None``: one name),
      each name listed unless ``example`` is set (then matched as a pattern; ``number`` names it in errors);
    - ``scores``: ``"module:function"``, ``(observations [B, ...], n) -> (float32[B, A] scores, -inf where
      illegal; bool[B, A] best)``, pure and jittable; or ``policy``: ``"module:function"``,
      ``n -> (observations, rng) -> int actions[B]``, a stochastic host player;
    - ``tie_order``: the deterministic mode plays the first best action in this order (``None``: no such
      mode); ``sampled``: a stochastic mode (uniform among the best);
    - ``kind``, ``label``: its scores in the play UI's legend (``label`` formatted with ``n`` and
      ``action``); ``costly``: the number from which a decision is costly (0: always);
    - ``available``: ``"module:function"`` -> whether its optional extra is installed; ``missing``:
      ``"module:class"`` of the error raised when it is not.
    """

    name: str
    numbers: tuple[int, int | None] | None = None
    number: str = "depth"
    example: str | None = None
    scores: str | None = None
    policy: str | None = None
    tie_order: tuple[int, ...] | None = None
    sampled: bool = True
    kind: str = "other"
    label: str = ""
    costly: int | None = None
    available: str | None = None
    missing: str | None = None


@dataclass(frozen=True)
class GameKit:
    """One game's rules and everything else that is the game's (see the module docstring)."""

    game: Game
    title: str
    encoding: str | None = None
    cnet: bool = False
    observation_legal: Callable[[Array], Array] | None = None
    symmetries: tuple[Symmetry, ...] = ()
    random_start: Callable[[Array], Any] | None = None
    uct_c: float | None = None
    yardstick: bool = False
    reference_agents: tuple[str, ...] = ("random",)
    reference: str | None = None
    baselines: tuple[str, ...] = ()
    other_observation: Callable[[Any], Array] | None = None
    match: MatchRules = MatchRules()
    observation_range: tuple[Any, Any] | None = field(default=None, compare=False)
    env: str | None = None
    view: str | None = None
    from_observation: Callable[[Array], Any] | None = None
    playable: Callable[[Any], tuple[np.ndarray, np.ndarray]] | None = None
    position_words: Callable[[Any], tuple[Array, ...]] | None = None
    players: tuple[Player, ...] = ()
    from_pgx: Callable[[Array], Array] | None = None
    plain_lookahead: str | None = None
    solver: str | None = None
    shaped_reward: Callable[[Any, Any, Array], Array] | None = None
    teacher: str = "mcts100"
    text_format: str | None = None
    defaults: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=lambda: MappingProxyType({}),
                                                                     compare=False)

    @property
    def id(self) -> str:
        return self.game.id

    def defaults_of(self, algorithm: str) -> Mapping[str, Mapping[str, Any]]:
        """The flags of ``algorithm`` that differ on this game, per config section (empty if none)."""
        return self.defaults.get(algorithm, MappingProxyType({}))


def check_kit(kit: GameKit) -> GameKit:
    """``kit``, or a one-line ``ValueError`` when its game's observations are integers and it has no
    ``observation_range``. Traces ``init`` and ``observe`` without running them."""
    dtype = jax.eval_shape(kit.game.observe, jax.eval_shape(kit.game.init, jax.random.key(0))).dtype
    if kit.observation_range is None and jnp.issubdtype(dtype, jnp.integer):
        raise ValueError(f"game {kit.id!r}: its observations are {dtype} and its kit has no observation_range; "
                         "set GameKit(observation_range=(low, high)) (docs/guide/extend.md, Adding a game)")
    return kit


def resolve(reference: str) -> Any:
    """The object named by ``"module:attribute"``, its module imported on first use."""
    module, attr = reference.split(":")
    return getattr(importlib.import_module(module), attr)


def plain(game: Game) -> GameKit:
    """The kit of a game that brings nothing but its rules."""
    return GameKit(game=game, title=game.id)
