"""The Agent protocol every player implements, and the jitted entry points they share.

An agent plays the ``1`` stones of public boards (design.md §1): ``int8[B, 6, 7]``,
row 0 on top. Every agent is a ``flax.struct`` dataclass: its arrays (network
parameters) are pytree leaves and its settings are static, so an agent can be
passed as an argument to a jitted function (never closed over), and ``scores``
and ``act`` are jittable and batched.

``c4jax.agents.registry.load(name)`` builds any agent from its name.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, runtime_checkable

import jax
from jax import Array

from c4jax.games.connect_four.board import check_boards
from c4jax.games.connect_four.game import GAME as CONNECT_FOUR


@runtime_checkable
class Agent(Protocol):
    name: str  # e.g. "1steplA:det"
    stochastic: bool  # act() samples (depends on the key)

    def scores(self, boards: Array) -> Array:
        """float32[B, 7]: what the agent thinks of each column (illegal: -inf)."""

    def act(self, boards: Array, key: Array) -> Array:
        """int32[B]: a legal column for each board."""


class ScoreInfo(NamedTuple):
    """What an agent's scores are, for the play UI's legend (``AgentBase.describe_scores``).

    ``kind``: ``"random"``, ``"lookahead"``, ``"perfect"``, ``"q"``, ``"policy"``, ``"search"``
    (the page writes a search's shares as percentages) or ``"other"``; ``label``: a score in
    words; ``values``: ``search_stats`` of the game's observations also gives each action's
    searched value.
    """

    kind: str
    label: str
    values: bool = False


def searched_value_label(action: str, how: str) -> str:
    """The legend's words for a search's values (``how``: where the values come from)."""
    return (f"; under it, the searched value of the {action}: the root Q-value of that search, from -1 (a loss) "
            f"to +1 (a win) for the player to move ({how})")


def _is_traced(x) -> bool:
    return isinstance(x, jax.core.Tracer)


def typed_key(key) -> Array:
    """``key`` as a typed PRNG key: a legacy ``jax.random.PRNGKey`` (uint32 key data) is wrapped with
    ``jax.random.wrap_key_data``; a typed key (``jax.random.key``) is returned as it is."""
    if jax.dtypes.issubdtype(getattr(key, "dtype", None), jax.dtypes.prng_key):
        return key
    return jax.random.wrap_key_data(key)


@jax.jit
def _jit_scores(agent, boards):
    return agent._scores(boards)


@jax.jit
def _jit_act(agent, boards, key):
    return agent._act(boards, key)


class AgentBase:
    """Shared public entry points; subclasses implement ``_scores`` and ``_act`` (pure, batched).

    ``game`` is the game the agent plays (Connect Four unless a subclass says otherwise).

    Called with concrete arrays (numpy, lists, jax arrays outside ``jit``), boards are
    validated (``ValueError`` on a wrong shape or dtype, values outside {-1, 0, 1},
    impossible or finished positions) and the call runs jitted; called on tracers
    inside a user's ``jit`` the pure implementation is inlined.
    """

    game = CONNECT_FOUR  # a class attribute, not a pytree field (a subclass may make it a static field)

    def scores(self, boards) -> Array:
        if _is_traced(boards):
            return self._scores(boards)
        return _jit_scores(self, check_boards(boards, batched=True, allow_finished=False))

    def act(self, boards, key) -> Array:
        key = typed_key(key)  # agents take typed keys and legacy PRNGKey ones alike
        if _is_traced(boards) or _is_traced(key):
            return self._act(boards, key)
        return _jit_act(self, check_boards(boards, batched=True, allow_finished=False), key)

    def act_states(self, states, key: Array) -> Array:
        """int32[B]: a legal action for each game state ``states`` ([B]) of the agent's game
        (pure and batched, for use inside ``jit``: what :func:`c4jax.agents.arena.rollout` calls).
        By default the agent plays the observation of each state (``_act``); agents that
        need the whole state (search) override it."""
        return self._act(jax.vmap(self.game.observe)(states), key)

    def scores_states(self, states) -> Array:
        """float32[B, A]: ``scores`` of the observations of game states ``states`` ([B]) of the
        agent's game (illegal actions ``-inf``); jitted and validated as ``scores`` when called
        with concrete states, pure inside a user's ``jit``."""
        boards = jax.vmap(self.game.observe)(states)
        if _is_traced(boards):
            return self._scores(boards)
        return self.scores(boards)

    def describe_scores(self, action: str = "column", actions: str = "free columns") -> ScoreInfo:
        """What the agent's scores are (:class:`ScoreInfo`), in the words of its game: ``action``
        names one action (``"column"``), ``actions`` the legal ones (``"free columns"``)."""
        return ScoreInfo("other", f"the agent's score for each {action}")

    def _scores(self, boards: Array) -> Array:  # pragma: no cover - abstract
        raise NotImplementedError

    def _act(self, boards: Array, key: Array) -> Array:  # pragma: no cover - abstract
        raise NotImplementedError
