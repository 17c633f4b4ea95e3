"""The games: the protocol every game implements (``base``), and each game in its own subpackage.

``make(name)`` returns a game object by its id; ``from_pgx(name)`` wraps a pgx environment
(``pip install 'c4jax[pgx]'``). Every trainer, search, match and tournament takes a game object
(:class:`c4jax.games.base.Game`); see docs/guide.md, "Adding a game". ``view(name)`` returns
the game's view module (:mod:`c4jax.games.viewbase`: what the play UI and ``watch`` show of it).
"""

from __future__ import annotations

import importlib

from c4jax.games.base import Game, check_game

DEFAULT = "connect_four"  # the game of names without a game (agents.load("random"), --game's default)

# id -> "module:attribute" of the game object (imported on first use)
GAMES = {
    "connect_four": "c4jax.games.connect_four.game:GAME",
    "checkers": "c4jax.games.checkers.game:GAME",
}

# id -> the module of its view (c4jax.games.viewbase describes the interface), in the play UI's order
VIEWS = {
    "connect_four": "c4jax.games.connect_four.view",
    "checkers": "c4jax.games.checkers.view",
}


def make(name: str) -> Game:
    """The game object of ``name`` (one of :data:`GAMES`, or ``pgx:<pgx env id>``)."""
    if name.startswith("pgx:"):
        return from_pgx(name[len("pgx:"):])
    if name not in GAMES:
        raise ValueError(f"unknown game {name!r}; choose one of {sorted(GAMES)} or pgx:<env id>")
    module, attr = GAMES[name].split(":")
    return check_game(getattr(importlib.import_module(module), attr))


def view(name: str):
    """The view module of game ``name`` (one of :data:`VIEWS`); imported on first use."""
    if name not in VIEWS:
        raise ValueError(f"game {name!r} has no view; games with one: {', '.join(VIEWS)}")
    return importlib.import_module(VIEWS[name])


def from_pgx(name: str, **kwargs) -> Game:
    """A pgx environment (``pgx.make(name, **kwargs)``) as a game; needs the ``pgx`` extra."""
    from c4jax.games import pgx_adapter

    return pgx_adapter.PgxGame.make(name, **kwargs)


__all__ = ["DEFAULT", "GAMES", "VIEWS", "Game", "check_game", "from_pgx", "make", "view"]
