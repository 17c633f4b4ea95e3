"""The Agent protocol every player implements, and the jitted entry points they share.

An agent plays ``agent.game``: ``scores_states(states)`` ``float32[B, num_actions]`` (illegal ``-inf``)
and ``act_states(states, key)`` ``int32[B]``; where observations tell the whole state (Connect Four's
``int8[B, 6, 7]`` boards) also ``scores(boards)`` and ``act(boards, key)``. Agents are ``flax.struct``
dataclasses (parameters are leaves, settings static): pass them to jitted functions as arguments.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, runtime_checkable

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from c4jax import games
from c4jax.agents.policy import ILLEGAL_SCORE


@runtime_checkable
class Agent(Protocol):
    name: str  # e.g. "1steplA:det"
    stochastic: bool  # act() samples (depends on the key)
    game: object  # the game it plays (c4jax.games.base.Game)

    def scores_states(self, states) -> Array:
        """float32[B, num_actions]: what the agent thinks of each action of states [B] of its game
        (illegal: -inf)."""

    def act_states(self, states, key: Array) -> Array:
        """int32[B]: a legal action for each of the states [B] of its game."""

    def scores(self, boards: Array) -> Array:
        """float32[B, num_actions]: what the agent thinks of each action of observations [B] of its
        game (illegal: -inf)."""

    def act(self, boards: Array, key: Array) -> Array:
        """int32[B]: a legal action for each observation [B] of its game."""


class ScoreInfo(NamedTuple):
    """What an agent's scores are, for the play UI's legend. ``kind``: ``"random"``,
    ``"lookahead"``, ``"perfect"``, ``"q"``, ``"policy"``, ``"search"`` or ``"other"``; ``label``: in
    words; ``values``: ``search_stats`` also gives each action's searched value."""

    kind: str
    label: str
    values: bool = False


def searched_value_label(action: str, how: str) -> str:
    """The legend's words for a search's values (``how``: where the values come from)."""
    return (f"; under it, the searched value of the {action}: the root Q-value of that search, from -1 (a loss) "
            f"to +1 (a win) for the player to move ({how})")


def in_game_name(name: str, game) -> str:
    """``name`` on the default game or when it has a ``/`` already, else ``<game>/<name>``."""
    if game.id == games.DEFAULT or "/" in name:
        return name
    return f"{game.id}/{name}"


def _is_traced(x) -> bool:
    return isinstance(x, jax.core.Tracer)


def playable(boards, game) -> tuple[np.ndarray, np.ndarray]:
    """``(boards, finished bool[B])`` of concrete observations [B] of ``game``: validated, each finished
    game's replaced by a playable one (the kit's ``playable``). ``TypeError`` without one."""
    check = games.kit_of(game).playable
    if check is None:
        raise TypeError(f"{game.id}: its agents take states (act_states / scores_states), not observations")
    return check(boards)


def unfinished(boards, game) -> np.ndarray:
    """Observations validated as :func:`playable` does; ``ValueError`` for a finished game among them."""
    boards, finished = playable(boards, game)
    if finished.any():
        raise ValueError(f"board {int(np.argmax(finished))} is a finished game")
    return boards


def observation_legal(game, observations) -> Array:
    """bool[..., num_actions]: the legal actions of observations of ``game`` (``GameKit.observation_legal``;
    ``TypeError`` without one)."""
    legal = games.kit_of(game).observation_legal
    if legal is None:
        raise TypeError(f"{game.id}: its observations do not tell the legal actions; call act_states / "
                        "scores_states with states of the game")
    return legal(observations)


def states_of(game, observations):
    """States [B] of ``game`` rebuilt from its observations [B] (``GameKit.from_observation``;
    ``TypeError`` without one)."""
    rebuild = games.kit_of(game).from_observation
    if rebuild is None:
        raise TypeError(f"{game.id}: its observations do not tell its states; call act_states / scores_states "
                        "with states of the game")
    return jax.vmap(rebuild)(observations)


@jax.jit
def _jit_scores(agent, boards):
    return agent._scores(boards)


@jax.jit
def _jit_act(agent, boards, key):
    return agent._act(boards, key)


@jax.jit
def _jit_scores_states(agent, states):
    return agent._scores_states(states)


def check_states(game, states) -> None:
    """``ValueError`` unless ``states`` is a batch [B] of ``game``'s states (the fields of the game
    protocol, with a legal-action mask of ``game.num_actions`` actions)."""
    mask = getattr(states, "legal_action_mask", None)
    if mask is None or not hasattr(states, "current_player"):
        raise ValueError(f"expected a batch of {game.id} states (with legal_action_mask and current_player), "
                         f"got {type(states).__name__}")
    if mask.ndim != 2 or mask.shape[-1] != game.num_actions:
        raise ValueError(f"expected a batch [B] of {game.id} states: legal_action_mask of shape "
                         f"(B, {game.num_actions}), got {tuple(mask.shape)}")


class AgentBase:
    """Shared public entry points; subclasses declare ``game`` (static) and implement ``_scores`` and
    ``_act`` (pure, batched).

    Called with concrete arrays, boards are validated (``ValueError`` on a wrong shape or dtype,
    values outside {-1, 0, 1} or impossible positions) and the call runs jitted; a finished game in
    the batch gets action 0 from ``act`` and ``-inf`` in every column from ``scores``. Called on
    tracers, the pure implementation is inlined and boards are not inspected.
    """

    @property
    def keyed(self) -> bool:
        """Whether ``act_states``' actions depend on the key (and so on where a state sits in the batch)."""
        return self.stochastic

    @property
    def costly(self) -> bool:
        """Whether one decision costs far more than a network's forward pass (a search, a solver, a
        host call): a match then asks it only about the games where it is to move (``arena.decide``)."""
        return False

    def scores(self, boards) -> Array:
        if _is_traced(boards):
            return self._scores(boards)
        boards, finished = playable(boards, self.game)
        out = _jit_scores(self, boards)
        return jnp.where(finished[:, None], ILLEGAL_SCORE, out) if finished.any() else out

    def act(self, boards, key) -> Array:
        if not jax.dtypes.issubdtype(getattr(key, "dtype", None), jax.dtypes.prng_key):
            key = jax.random.wrap_key_data(key)  # a legacy PRNGKey
        if _is_traced(boards) or _is_traced(key):
            return self._act(boards, key)
        boards, finished = playable(boards, self.game)
        out = _jit_act(self, boards, key)
        return jnp.where(finished, 0, out).astype(out.dtype) if finished.any() else out

    def act_states(self, states, key: Array) -> Array:
        """int32[B]: a legal action for each state [B] of the agent's game (pure; by default ``_act``
        of the observations)."""
        return self._act(jax.vmap(self.game.observe)(states), key)

    def scores_states(self, states) -> Array:
        """float32[B, num_actions]: the agent's scores of states [B] of its game, illegal ``-inf``.
        Concrete states are checked (``ValueError``) and the call jitted."""
        if _is_traced(getattr(states, "legal_action_mask", None)):
            return self._scores_states(states)
        check_states(self.game, states)
        return _jit_scores_states(self, states)

    def _scores_states(self, states) -> Array:
        """``_scores`` of the observations, masked to the legal actions."""
        scores = self._scores(jax.vmap(self.game.observe)(states))
        return jnp.where(states.legal_action_mask, scores, ILLEGAL_SCORE)

    def describe_scores(self, action: str = "column", actions: str = "free columns") -> ScoreInfo:
        """What the agent's scores are (:class:`ScoreInfo`), in the words of its game: ``action``
        names one action (``"column"``), ``actions`` the legal ones (``"free columns"``)."""
        return ScoreInfo("other", f"the agent's score for each {action}")

    def _scores(self, boards: Array) -> Array:  # pragma: no cover - abstract
        raise NotImplementedError

    def _act(self, boards: Array, key: Array) -> Array:  # pragma: no cover - abstract
        raise NotImplementedError
