"""The games: the protocol (``base``), the game kit (``kit``) and each game in its own subpackage
(docs/guide/extend.md, "Adding a game"). Importing ``c4jax.games`` imports neither JAX nor NumPy: a kit's
module loads on first use, and ``Game``, ``GameKit``, ``Symmetry`` and ``check_game`` with it."""

from __future__ import annotations

import functools
import importlib

from typing import TYPE_CHECKING, Any

from c4jax.games.card import GameCard

if TYPE_CHECKING:
    from c4jax.games.base import Game
    from c4jax.games.kit import GameKit

DEFAULT = "connect_four"  # the game of names without a game (agents.load("random"), --game's default)

# id -> "module:attribute" of the game's kit (imported on first use): one line per game
GAMES = {
    "connect_four": "c4jax.games.connect_four.kit:KIT",
    "checkers": "c4jax.games.checkers.kit:KIT",
}
# id -> "module:attribute" of the game's card (plain data, imported without JAX; kits take their fields
# from it): one line per game; a registered game without one has its kit's
CARDS = {
    "connect_four": "c4jax.games.connect_four.card:CARD",
    "checkers": "c4jax.games.checkers.card:CARD",
}

_LAZY = {"Game": "c4jax.games.base", "check_game": "c4jax.games.base", "GameKit": "c4jax.games.kit",
         "Symmetry": "c4jax.games.kit", "plain": "c4jax.games.kit"}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'c4jax.games' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


_CHECKED: dict[int, tuple[Any, GameKit]] = {}  # id(a registered kit) -> (that kit, it checked)


def _registered(name: str) -> GameKit:
    """The kit :data:`GAMES` names for ``name``, checked once per kit object."""
    from c4jax.games.base import check_game
    from c4jax.games.kit import check_kit

    module, attr = GAMES[name].split(":")
    registered = getattr(importlib.import_module(module), attr)
    seen = _CHECKED.get(id(registered))
    if seen is None or seen[0] is not registered:
        check_game(registered.game)
        seen = _CHECKED[id(registered)] = (registered, check_kit(registered))
    return seen[1]


@functools.lru_cache(maxsize=None)
def card_of(name: str) -> GameCard:
    """The card of the registered game ``name``: the one :data:`CARDS` names (imported without JAX),
    else made of its kit's fields. ``ValueError`` for an unknown game."""
    if name not in GAMES:
        raise ValueError(f"unknown game {name!r}; choose one of {sorted(GAMES)}")
    if name in CARDS:
        module, attr = CARDS[name].split(":")
        return getattr(importlib.import_module(module), attr)
    kit = _registered(name)
    return GameCard(title=kit.title, num_actions=kit.game.num_actions, cnet=kit.cnet,
                    random_start=kit.random_start is not None, symmetric=bool(kit.symmetries), yardstick=kit.yardstick,
                    reference_agents=kit.reference_agents, reference=kit.reference, baselines=kit.baselines, teacher=kit.teacher,
                    view=kit.view, defaults=kit.defaults)


def make(name: str) -> Game:
    """The game object of ``name`` (one of :data:`GAMES`, or ``pgx:<pgx env id>``)."""
    if name.startswith("pgx:"):
        return from_pgx(name[len("pgx:"):])
    if name not in GAMES:
        raise ValueError(f"unknown game {name!r}; choose one of {sorted(GAMES)} or pgx:<env id>")
    return _registered(name).game


def kit_of(game: str | Game) -> GameKit:
    """The kit of ``game`` (a game object or an id): the registered kit of a registered game (checked on
    first use), else :func:`c4jax.games.kit.plain`."""
    from c4jax.games.kit import plain

    if isinstance(game, str):
        if game.startswith("pgx:") or game not in GAMES:
            return plain(make(game))
        return _registered(game)
    if game.id in GAMES and _registered(game.id).game == game:
        return _registered(game.id)
    return plain(game)


def view(game: str | Game):
    """The view module (or ``"module:ATTR"`` object) that ``game``'s kit names, imported on first use;
    ``ValueError`` when it has none."""
    where = kit_of(game).view
    if where is None:
        name = game if isinstance(game, str) else game.id
        raise ValueError(f"game {name!r} has no view; games with one: {', '.join(with_views())}")
    module, _, attr = where.partition(":")
    found = importlib.import_module(module)
    return getattr(found, attr) if attr else found


def subfolder(game: str) -> str:
    """The folder of ``game``'s files under ``runs/``, ``data/`` and ``checkpoints/``: ``""`` for the default
    game (its files sit at the root), else the game's id."""
    return "" if game == DEFAULT else game


def with_views() -> tuple[str, ...]:
    """The registered games whose card has a view, in the registry's order (no kit is loaded)."""
    return tuple(name for name in GAMES if card_of(name).view is not None)


def from_pgx(name: str, **kwargs) -> Game:
    """A pgx environment (``pgx.make(name, **kwargs)``) as a game; needs the ``pgx`` extra."""
    from c4jax.games import pgx_adapter

    return pgx_adapter.PgxGame.make(name, **kwargs)


__all__ = ["CARDS", "DEFAULT", "GAMES", "Game", "GameCard", "GameKit", "Symmetry", "card_of", "check_game", "from_pgx",
           "kit_of", "make", "view", "with_views"]
