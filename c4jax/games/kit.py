"""A game kit: the rules of one game and everything else that belongs to that game.

Code outside ``c4jax.games`` never asks which game it plays; it asks the game's kit
(:func:`c4jax.games.kit_of`). A kit holds the rules (``game``, the :class:`~c4jax.games.base.Game`
protocol) and the game's answers to what trainers, searches, matches and the UI need to know:

- ``title``: the game's name for people ("Connect Four");
- ``encoding``: how a network reads the observations (a name from :mod:`c4jax.nets.tower`;
  ``None``: the observations as they are, ``[H, W]`` as one plane, ``[H, W, C]`` as C planes);
- ``cnet``: whether the thesis' CNET (:mod:`c4jax.nets.cnet`) reads the observations;
- ``observation_legal``: the legal actions read from observations alone, where they tell them
  (``None``: only the state tells them);
- ``symmetries``: transformations that map a position to an equivalent one (each with its action
  permutation), used to augment training data;
- ``random_start``: ``key -> State``, a random start position for training, where the game has one;
- ``uct_c``: the UCT constant of pure MCTS on this game (``None``: the search's default);
- ``yardstick``: whether a perfect-play yardstick of solved positions exists for the game;
- ``reference_agents``: the ``agents.load`` names every evaluation plays besides the old network;
- ``reference``: the one of them whose win rate progress bars and seed summaries report (``None``:
  the opponent that selects the best network, ``--select-by``);
- ``other_observation``: ``State -> observation`` of the player who is not to move, where the
  game can show it (PettingZoo and Gymnasium give each player its own view);
- ``observation_range``: ``(low, high)``, the values an observation entry takes (scalars or arrays
  broadcast to the observation's shape; ``None``: the dtype's range, allowed only for bool and float
  observations: :func:`check_kit`);
- ``match``: what a protocol match of the game takes from it (:class:`MatchRules`: its openings, whether
  the player to move alternates, how its games are played and counted);
- ``env``: the module of the game's functional environment (``init``, ``step``, ``observe``, its
  ``EnvState``...), which ``c4jax.env`` is for the default game (``None``: the game has none);
- ``view``: the module of the game's view (what the play UI and ``watch`` draw of a position,
  :mod:`c4jax.games.viewbase`), ``None`` when the game has none;
- ``from_observation``: ``observation -> State``, the state an observation of the player to move
  shows, where the observation tells the whole state (``None``: it does not); agents of such a
  game also take observations in place of states (Connect Four's board API, ``agent.act(boards, key)``);
- ``playable``: ``observations -> (observations, finished)`` of concrete observations ``[B, ...]``
  for that API: validated (``ValueError`` on a malformed one), every finished game's replaced by
  the start position, and ``bool[B]``, which ones were finished;
- ``position_words``: ``State -> tuple of uint32 arrays`` that identify a position, folded into
  the key of the search behind a search agent's scores (``None``: the words of its observation);
- ``players``: the game's own reference players (:class:`Player`: names and pure functions, which
  :mod:`c4jax.agents.players` wraps as agents and the agent registry lists; empty: the game has only
  the agents that play any game);
- ``from_pgx``: ``observations of pgx's same game -> observations``, where pgx has the game (what
  :mod:`c4jax.agents.pgx_baseline` reads);
- ``plain_lookahead``: ``"module:function"`` of a plain-Python N-step lookahead,
  ``act(observation, n) -> action`` (one position at a time, the thesis' kind of baseline), that
  Table 5.1's decision timing (:mod:`c4jax.evaluation.timing`) times beside the agents;
- ``solver``: the module of the game's exact solver, which the play UI's hint asks: its
  ``solver_available()``, ``solve_scores(observations) -> int[..., A]`` (each action's exact score,
  ``ILLEGAL`` where it is not legal), ``MISSING_SOLVER`` (why it is not available) and
  ``SolverMissingError`` (``None``: the game has none);
- ``shaped_reward``: ``(before, after, action) -> float32[...]``, the reward of a move for its mover that
  the thesis' whole-game trainers record (``--collect games``; design.md §2 for Connect Four), the
  game's outcome back-propagated over its zero-reward moves (:mod:`c4jax.learning.backprop`)
  (``None``: those trainers record the game's own rewards);
- ``teacher``: the ``agents.load`` name (within the game) of the agent whose moves the supervised
  stage imitates (:mod:`c4jax.learning.dataset`; default pure MCTS with 100 simulations, which plays
  any game);
- ``text_format``: the module of the game's dataset text format, pure functions of bytes
  (``format_pairs(observations, actions) -> bytes``, ``parse_pairs(data, where) -> (observations,
  actions)``) that :func:`c4jax.learning.dataset.export_text` / ``import_text`` use; ``None`` when it has none;
- ``defaults``: per algorithm, the flags that differ from the algorithm's own defaults on this game
  (``{"alphazero": {"run": {...}, "az": {...}}}``, ``{"dqn": {"run": {...}, "dqn": {...}}}``, one mapping
  per config section).

Every field but ``game`` and ``title`` has a default, so a game made for c4jax (or wrapped from
pgx) plugs in with ``GameKit(game=..., title=...)``: docs/guide/extend.md, "Adding a game".
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
    """A map of positions to equivalent positions: ``observation`` maps observations
    ``[..., *observation_shape]``, and ``actions[a]`` is the action in the image that plays what
    action ``a`` plays in the original."""

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
    """What a protocol match of the game (:mod:`c4jax.evaluation.protocol`: the start position and 49
    openings, each played once per seat) takes from the game.

    - ``openings``: the 49 openings, each the actions played from the start position (the first
      player's, then the second's); ``None``: the start position's two-ply openings found from the rules
      (all pairs of first moves when there are 49, else 49 of them spread evenly);
    - ``alternating``: the player to move changes at every ply (no player moves twice in a row), so all
      the matches of a round robin can be played as one program (:mod:`c4jax.evaluation.lockstep`);
    - ``compact``: a match asks each agent only in the games where it is to move (``arena.rollout``'s
      ``compact``); ``False``: both agents in every game at every ply, which samples with other keys
      (AlphaZero's search, whose moves ignore the key, is asked only where it is to move either way);
    - ``length``: ``final state -> int32[]``, the length a match reports for a finished game (``None``:
      the plies played after the opening);
    - ``length_text``: what that length counts, in the words of a table's note.
    """

    openings: tuple[tuple[int, ...], ...] | None = None
    alternating: bool = False
    compact: bool = True
    length: Callable[[Any], Array] | None = None
    length_text: str = "Plies after the opening"


@dataclass(frozen=True)
class Player:
    """One of a game's reference players, as data and pure functions: :mod:`c4jax.agents.players`
    makes it an agent and the agent registry loads it by ``name`` (the kit imports no agent).

    - ``name``: its ``agents.load`` name, ``{n}`` standing for its number (a depth, simulations);
    - ``numbers``: ``(low, high)``, the numbers its names take (``high`` ``None``: up to the search's
      ``MAX_SIMULATIONS``), each name listed when ``example`` is ``None``, else matched as a pattern
      with ``example`` listed (a number outside: an error naming ``number``); ``None``: one name;
    - ``scores``: ``"module:function"``, ``(observations [B, ...], n) -> (scores float32[B, A],
      best bool[B, A])``: each action's score (illegal: ``-inf``) and the actions of the best score
      (exact ties), pure and jittable; the agent shows the scores and plays among the best;
    - ``policy``: ``"module:function"``, ``n -> (observations [B, ...], rng) -> int actions[B]``: a
      host player in place of ``scores`` (always stochastic: ``rng`` seeds it);
    - ``tie_order``: the deterministic mode's move, the first of the best actions in this order
      (``None``: the player has no deterministic mode); ``sampled``: it has a stochastic mode (uniform
      among the best); a player of both modes says its mode in its name (``1steplA:det``);
    - ``kind``, ``label``: its scores in the play UI's legend (``ScoreInfo``; ``label`` formatted
      with ``n`` and ``action``); ``costly``: the number from which a decision is costly (0: always);
    - ``available``: ``"module:function"`` -> whether its optional extra is installed (listed and
      loadable only then), ``missing``: ``"module:class"`` of the error raised when it is not.
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
    """``kit`` if what it must say of its game is there, else a ``ValueError`` of one line: integer
    observations need an ``observation_range`` (their dtype's range, such as int8's -128..127, would be
    the bounds of PettingZoo's and Gymnasium's observation spaces). Traces ``init`` and ``observe``
    without running them; :func:`c4jax.games.kit_of` checks every registered kit."""
    dtype = jax.eval_shape(kit.game.observe, jax.eval_shape(kit.game.init, jax.random.key(0))).dtype
    if kit.observation_range is None and jnp.issubdtype(dtype, jnp.integer):
        raise ValueError(f"game {kit.id!r}: its observations are {dtype} and its kit has no observation_range; "
                         "set GameKit(observation_range=(low, high)) (docs/guide/extend.md, Adding a game)")
    return kit


def resolve(reference: str) -> Any:
    """The object a kit names by ``"module:attribute"`` (``plain_lookahead``, a :class:`Player`'s
    functions), its module imported on first use."""
    module, attr = reference.split(":")
    return getattr(importlib.import_module(module), attr)


def plain(game: Game) -> GameKit:
    """The kit of a game that brings nothing but its rules (a pgx game, a test's game)."""
    return GameKit(game=game, title=game.id)
