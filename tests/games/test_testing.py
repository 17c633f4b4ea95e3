"""c4jax.games.testing: every game passes the conformance suite, and games that break one rule of
the protocol each fail it with that rule's message."""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from flax import struct

from c4jax import games
from c4jax.games import base, testing
from c4jax.games.checkers.game import OPENSPIEL_GAME

C4 = games.make("connect_four")
HAS_PGX = importlib.util.find_spec("pgx") is not None


# every registered game, and the Checkers variant with OpenSpiel's draw rule
@pytest.mark.parametrize("game", [games.make(g) for g in games.GAMES] + [OPENSPIEL_GAME], ids=lambda g: g.id)
def test_game_conforms(game):
    summary = testing.check(game)
    assert summary.game_id == game.id and summary.games == 16
    if game.id in games.GAMES:  # and its kit says what holds of it
        assert testing.check_kit(games.kit_of(game.id)) == game.id
    assert 0 < summary.longest <= game.max_steps
    assert summary.steps >= 16 * 7 and summary.illegal_steps > 0  # every game played, illegal actions tried


@pytest.mark.skipif(not HAS_PGX, reason="needs pgx")
def test_pgx_game_conforms():
    """pgx's tic-tac-toe through the adapter (which clears pgx's legal mask of finished states)."""
    summary = testing.check(games.from_pgx("tic_tac_toe"))
    assert summary.game_id == "pgx:tic_tac_toe" and 5 <= summary.longest <= 9 and summary.illegal_steps > 0


# --------------------------------------------------------------------------- games that break a rule


@struct.dataclass
class View:
    """A Connect Four state with its protocol fields held as fields, so a flawed game can change them."""

    inner: Any
    current_player: jax.Array
    legal_action_mask: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    noise: jax.Array  # int32[]: 0, unless the flaw makes a call impure


def view(state, noise=0) -> View:
    return View(state, state.current_player, state.legal_action_mask, state.rewards, state.terminated,
                state.truncated, jnp.int32(noise))


CALLS = itertools.count(1)


@dataclass(frozen=True)
class Flawed:
    """Connect Four with one ``flaw``."""

    flaw: str
    num_players: int = 2

    @property
    def id(self) -> str:
        return f"flawed_{self.flaw}"

    num_actions = property(lambda self: C4.num_actions)
    observation_shape = property(lambda self: C4.observation_shape)
    max_steps = property(lambda self: 6 if self.flaw == "too_long" else C4.max_steps)

    def init(self, key=None):
        state = view(C4.init(key), next(CALLS) if self.flaw == "impure_init" else 0)
        if self.flaw == "int_terminated":
            state = state.replace(terminated=state.terminated.astype(jnp.int32))
        return state

    def step(self, state, action, key=None):
        legal = state.legal_action_mask[action]
        if self.flaw == "ignores_illegal":  # plays a legal column instead
            action = jnp.where(legal, action, jnp.argmax(state.legal_action_mask))
        noise = next(CALLS) if self.flaw == "impure_step" else 0
        if self.flaw == "branches_on_tracers":  # Python code that sees whether it is traced
            noise = int(isinstance(action, jax.core.Tracer))
        if self.flaw == "branches_on_vmap":  # Python code that sees whether it is batched
            noise = int(type(action).__name__ == "BatchTracer")
        new = view(C4.step(state.inner, action, key), noise)
        if self.flaw == "restarts":  # a finished game starts again
            new = jax.tree.map(lambda a, b: jnp.where(base.done(state), a, b), view(C4.init(key)), new)
        if self.flaw == "mask_after_end":
            new = new.replace(legal_action_mask=new.legal_action_mask | base.done(new))
        if self.flaw == "both_win":
            new = new.replace(rewards=jnp.abs(new.rewards))
        if self.flaw == "double_rewards":
            new = new.replace(rewards=jnp.where(legal, 2.0, 1.0) * new.rewards)
        return new

    def observe(self, state):
        board = C4.observe(state.inner)
        return board[:-1] if self.flaw == "short_observation" else board


@pytest.mark.parametrize("flaw, message", [
    ("restarts", "finished states must be absorbing"),
    ("mask_after_end", "the legal mask must be all False once the game is over"),
    ("both_win", "rewards must be zero-sum"),
    ("double_rewards", r"rewards of a legal action must lie in \[-1, 1\]"),
    ("ignores_illegal", "an illegal action must end the game with -1 for its mover"),
    ("too_long", "every game must end within max_steps steps"),
    ("short_observation", r"observe\(state\) must have observation_shape"),
    ("int_terminated", r"state.terminated must be bool\[\]"),
    ("impure_init", "init must be deterministic"),
    ("impure_step", "step must be deterministic"),
    ("branches_on_vmap", r"vmap\(step\) must equal step on each state"),
    ("branches_on_tracers", r"jit\(step\) must equal step"),
])
def test_a_broken_rule_fails_with_its_message(flaw, message):
    with pytest.raises(testing.ConformanceError, match=f"^flawed_{flaw}: {message}"):
        testing.check(Flawed(flaw), games=8)


def test_the_game_object_must_be_a_hashable_two_player_game():
    with pytest.raises(testing.ConformanceError, match="^flawed_none: num_players must be 2"):
        testing.check_attributes(Flawed("none", num_players=3))
    unhashable = dataclasses.make_dataclass("Unhashable", [("id", str), ("num_actions", int)],
                                            namespace={n: getattr(C4, n) for n in ("num_players", "observation_shape",
                                                                                   "max_steps", "init", "step",
                                                                                   "observe")})
    with pytest.raises(testing.ConformanceError, match="^mine: the game object must be hashable"):
        testing.check_attributes(unhashable("mine", 7))
    with pytest.raises(testing.ConformanceError, match="must have every attribute.*missing: max_steps, init"):
        testing.check_attributes(type("Half", (), {"id": "half", "num_actions": 7, "num_players": 2,
                                                    "observation_shape": (6, 7)})())
    assert isinstance(testing.ConformanceError("x"), AssertionError)


def test_flawless_wrapper_passes():
    """The wrapper of the broken games passes when it breaks nothing (the failures above are the flaws')."""
    assert testing.check(Flawed("none"), games=8).games == 8
