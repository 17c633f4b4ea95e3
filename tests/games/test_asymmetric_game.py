"""The guide's game whose players have different goals (docs/guide/extend.md, "Adding a game", "Players
with different goals"): Hunt's two files as the guide prints them, written to a temporary folder
and registered, pass the conformance suite and the kit's checks; its observation tells the
mover's side, its mirror is a symmetry of the rules, and a search plays both sides better than Random.
Also the kit checks' failures: integer observations without a range, a range the observations
leave, an ``alternating`` claim a game breaks, a symmetry whose actions are no permutation."""

from __future__ import annotations

import dataclasses
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from c4jax import agents, evaluation, games
from c4jax.games import testing
from c4jax.games.kit import MatchRules, Symmetry, check_kit

from guide_games import guide_files, registered  # the guide's example games


@pytest.fixture(scope="module")
def hunt(tmp_path_factory):
    assert set(guide_files("hunt")) == {"hunt/game.py", "hunt/kit.py"}
    with registered(tmp_path_factory.mktemp("asymmetric_game"), "hunt", "hunt") as game:
        yield game


def _random_states(game, n: int, seed: int = 0):
    return jax.tree.map(lambda *x: jnp.stack(x), *[_play(game, seed + i) for i in range(n)])


def _play(game, seed: int):
    """The state after a random number of random legal plies (unfinished)."""
    rng = np.random.default_rng(seed)
    state = game.init()
    for _ in range(rng.integers(0, game.max_steps - 1)):
        after = game.step(state, int(rng.choice(np.flatnonzero(np.asarray(state.legal_action_mask)))))
        if bool(after.terminated):
            break
        state = after
    return state


def test_the_guide_s_asymmetric_game_passes_the_conformance_suite_and_the_kit_checks(hunt):
    from c4jax.play.env_support import observation_bounds

    kit = games.kit_of("hunt")
    summary = testing.check(hunt)
    assert summary.games == 16 and summary.longest == hunt.max_steps and summary.illegal_steps > 0
    assert testing.check_kit(kit) == "hunt"
    low, high, dtype = observation_bounds(hunt)  # PettingZoo's and Gymnasium's bounds: the kit's range
    assert dtype == np.int8 and (low == 0).all() and (high[..., :3] == 1).all() and (high[..., 3] == 16).all()


def test_the_observation_tells_the_mover_s_side(hunt):
    kit = games.kit_of("hunt")
    start = hunt.init()
    after = hunt.step(start, 1)  # the hunter moves right: the prey is to move
    assert (hunt.observe(start)[..., 2] == 1).all() and (hunt.observe(after)[..., 2] == 0).all()
    assert (kit.other_observation(start)[..., 2] == 0).all() and (kit.other_observation(after)[..., 2] == 1).all()
    np.testing.assert_array_equal(hunt.observe(start)[..., 0], kit.other_observation(start)[..., 1])  # the hunter
    assert int(hunt.observe(after)[..., 3].max()) == hunt.max_steps - 1  # plies left


def test_the_mirror_is_a_symmetry_of_the_rules(hunt):
    """The mirrored state (every cell's column c as 3 - c) is seen as the mirrored observation, has the legal
    actions ``actions`` maps, and each action's image leads to the mirror of its outcome."""
    from hunt.game import legal

    (mirror,) = games.kit_of("hunt").symmetries
    size = hunt.observation_shape[1]

    def mirrored(state):  # of unfinished states
        cells = state.cells // size * size + (size - 1 - state.cells % size)
        return state.replace(cells=cells, legal_action_mask=jax.vmap(legal)(cells, state.current_player))

    states = _random_states(hunt, 12)
    image = mirrored(states)
    np.testing.assert_array_equal(jax.vmap(hunt.observe)(image), mirror.observation(jax.vmap(hunt.observe)(states)))
    actions = np.asarray(mirror.actions)
    np.testing.assert_array_equal(np.asarray(image.legal_action_mask)[:, actions], states.legal_action_mask)
    for a in range(hunt.num_actions):
        played = jax.vmap(hunt.step, in_axes=(0, None))(states, a)
        imaged = jax.vmap(hunt.step, in_axes=(0, None))(image, int(actions[a]))
        np.testing.assert_array_equal(imaged.cells, mirrored(played).cells)
        np.testing.assert_array_equal(imaged.rewards, played.rewards)


@pytest.mark.slow  # two minutes on one shared core
def test_a_search_beats_random_on_both_sides(hunt):
    """A protocol match seats each agent once as the hunter and once as the prey in every opening."""
    result = evaluation.match(agents.load("hunt/mcts50:det"), agents.load("hunt/random"), jax.random.key(0))
    assert len(result.games) == 100 and result.win_rate >= 0.8, result.win_rate


def test_the_kit_checks_name_what_a_kit_gets_wrong(hunt):
    kit = games.kit_of("hunt")
    kit_module = sys.modules["hunt.kit"]
    kit_module.BARE = dataclasses.replace(kit, observation_range=None)
    games.GAMES["hunt_bare"] = "hunt.kit:BARE"
    try:
        with pytest.raises(ValueError, match=r"^game 'hunt': its observations are int8 and its kit has no "
                                             r"observation_range; set GameKit\(observation_range=") as e:
            games.make("hunt_bare")
        assert "\n" not in str(e.value)
    finally:
        del games.GAMES["hunt_bare"]
    with pytest.raises(ValueError, match="its observations are int8 and its kit has no observation_range"):
        check_kit(kit_module.BARE)
    from c4jax.play.env_support import observation_bounds

    with pytest.raises(ValueError, match="no observation_range"):  # an unregistered game: its plain kit
        observation_bounds(dataclasses.replace(hunt, id="hunt_unregistered"))

    with pytest.raises(testing.ConformanceError, match="observe.state. must lie within the kit's observation_range"):
        testing.check_kit(dataclasses.replace(kit, observation_range=(0, 1)))  # the plies-left plane goes to 16
    with pytest.raises(testing.ConformanceError, match="a permutation of the actions"):
        testing.check_kit(dataclasses.replace(kit, symmetries=(Symmetry("bad", lambda o: o, (0, 0, 2, 1)),)))

    class HunterOnly(type(hunt)):  # the hunter moves at every ply
        def step(self, state, action, key=None):
            return super().step(state, action, key).replace(current_player=jnp.int32(0))

    with pytest.raises(testing.ConformanceError, match="match.alternating says the player to move changes"):
        testing.check_kit(dataclasses.replace(kit, game=HunterOnly(), match=MatchRules(alternating=True)))
