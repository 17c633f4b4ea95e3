"""Each registered game's card (:mod:`c4jax.games.card`) says what its kit has."""

from __future__ import annotations

import pytest

from c4jax import games


@pytest.mark.parametrize("name", sorted(games.GAMES))
def test_card_matches_kit(name):
    card, kit = games.card_of(name), games.kit_of(name)
    assert card.num_actions == kit.game.num_actions
    assert card.cnet == kit.cnet
    assert card.random_start == (kit.random_start is not None)
    assert card.symmetric == bool(kit.symmetries)
    assert (card.title, card.yardstick, card.reference_agents, card.reference, card.teacher, card.view) == \
        (kit.title, kit.yardstick, kit.reference_agents, kit.reference, kit.teacher, kit.view)
    assert dict(card.defaults) == dict(kit.defaults)


def test_games_with_views_are_read_from_the_cards():
    assert games.with_views() == tuple(name for name in games.GAMES if games.kit_of(name).view is not None)
    assert {"connect_four", "checkers"} <= set(games.with_views())


def test_unknown_game_has_no_card():
    with pytest.raises(ValueError, match="unknown game"):
        games.card_of("nope")


def test_alphazero_methods_are_the_searches():
    from c4jax.agents.network_search import METHODS
    from c4jax.learning.settings import alphazero

    assert alphazero.METHODS == METHODS
