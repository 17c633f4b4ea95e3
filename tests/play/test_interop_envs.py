"""The PettingZoo AEC environment (c4jax.play.pettingzoo_env) and the Gymnasium environment against
an agent (c4jax.play.gymnasium_env): the libraries' own checkers (api_test, check_env) on Connect
Four and Checkers, whole games replayed move by move in c4jax's game, the masks against the game's
legal actions, each player's view, seeding, and the errors."""

from __future__ import annotations

import subprocess
import sys
import warnings

import jax
import numpy as np
import pytest

pytest.importorskip("pettingzoo")
gymnasium = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402
from pettingzoo.test import api_test  # noqa: E402

from c4jax import agents, games  # noqa: E402
from c4jax.games.checkers import notation  # noqa: E402
from c4jax.games.connect_four import env as c4env  # noqa: E402
from c4jax.play import gymnasium_env, pettingzoo_env  # noqa: E402
from c4jax.play.env_support import other_view  # noqa: E402
from scripts import ROOT  # noqa: E402

GAMES = list(games.GAMES)  # every registered game


@pytest.mark.parametrize("game", GAMES)
def test_pettingzoo_api_test(game):
    api_test(pettingzoo_env.env(game, render_mode="ansi"), num_cycles=300)
    api_test(pettingzoo_env.raw_env(game), num_cycles=50)


@pytest.mark.parametrize("env_id", list(gymnasium_env.IDS))
def test_gymnasium_check_env_without_a_warning(env_id):
    env = gymnasium.make(env_id, opponent="random")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)  # made through gymnasium.make: its spec lets it check the render modes too
    assert [str(w.message) for w in caught] == []
    check_env(gymnasium_env.C4jaxGymEnv(gymnasium_env.IDS[env_id], opponent="random", player="random"),
              skip_render_check=True)


@pytest.mark.parametrize("game", GAMES)
def test_a_pettingzoo_game_replayed_in_c4jax(game):
    """Random legal moves to the end: every observation, mask and reward is the c4jax game's."""
    g = games.make(game)
    env = pettingzoo_env.env(game)
    env.reset(seed=3)
    state, rng, total = g.init(), np.random.default_rng(3), {"player_0": 0.0, "player_1": 0.0}
    moves = 0
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        total[agent] += reward
        if terminated or truncated:
            assert bool(state.terminated) == terminated and bool(state.truncated) == truncated
            env.step(None)
            continue
        assert agent == f"player_{int(state.current_player)}"
        np.testing.assert_array_equal(obs["observation"], np.asarray(g.observe(state)))
        np.testing.assert_array_equal(obs["action_mask"], np.asarray(state.legal_action_mask).astype(np.int8))
        assert obs["action_mask"].dtype == np.int8
        other = env.observe(f"player_{1 - int(state.current_player)}")
        assert not other["action_mask"].any()
        np.testing.assert_array_equal(other["observation"], np.asarray(other_view(g, state)))
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
        state, moves = g.step(state, action), moves + 1
    assert env.agents == [] and moves > 5
    rewards = np.asarray(state.rewards)
    assert total == {"player_0": float(rewards[0]), "player_1": float(rewards[1])}


def test_the_other_players_view():
    g = games.make("connect_four")
    state = c4env.step(c4env.init(), 3)
    np.testing.assert_array_equal(np.asarray(other_view(g, state)), -np.asarray(c4env.observe(state)))
    # Checkers: the view of the side not to move is the position with that side to move
    ck = games.make("checkers")
    state = ck.init()
    for action in (int(np.flatnonzero(np.asarray(state.legal_action_mask))[0]),):
        state = ck.step(state, action)
    for _ in range(3):
        fen = notation.to_fen(state)
        flipped = notation.from_fen({"B": "W", "W": "B"}[fen[0]] + fen[1:])
        np.testing.assert_array_equal(np.asarray(other_view(ck, state)), np.asarray(ck.observe(flipped)))
        state = ck.step(state, int(np.flatnonzero(np.asarray(state.legal_action_mask))[-1]))


def test_pettingzoo_render_and_errors():
    env = pettingzoo_env.raw_env("connect_four", render_mode="ansi")
    env.reset(seed=0)
    env.step(3)
    assert env.render() == c4env.render(env.game_state)
    assert "X" in env.render() and "O to move" in env.render()
    with pytest.raises(ValueError, match=r"integer in 0\.\.6, got 7"):
        env.step(7)
    with pytest.raises(ValueError, match="render_mode"):
        pettingzoo_env.raw_env("connect_four", render_mode="human")
    with pytest.raises(ValueError, match="unknown game"):
        pettingzoo_env.raw_env("chess")
    # a column the mask forbids ends the game with -1 for its mover (the game's rule)
    for _ in range(5):
        env.step(3)
    env.step(3)  # column 3 is full
    assert env.terminations == {"player_0": True, "player_1": True}
    assert env.rewards == {"player_0": -1.0, "player_1": 1.0}


@pytest.mark.parametrize("game", GAMES)
def test_a_gymnasium_game_to_the_end_against_random(game):
    g = games.make(game)
    env = gymnasium_env.C4jaxGymEnv(game, opponent="random")
    obs, info = env.reset(seed=0)
    rng, steps, reward = np.random.default_rng(0), 0, 0.0
    terminated = truncated = False
    while not (terminated or truncated):
        state = env.game_state
        assert int(state.current_player) == env.learner == 0
        np.testing.assert_array_equal(obs, np.asarray(g.observe(state)))
        np.testing.assert_array_equal(info["action_mask"], np.asarray(state.legal_action_mask).astype(np.int8))
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        steps += 1
        assert reward == 0.0 or terminated or truncated
    state = env.game_state
    assert bool(state.terminated) == terminated and bool(state.truncated) == truncated and steps > 3
    assert reward == float(np.asarray(state.rewards)[0]) and reward in (-1.0, 0.0, 1.0)
    assert not info["action_mask"].any()


def test_the_opponent_is_the_agent():
    """The learner second: the opponent's opening move is the agent's."""
    env = gymnasium_env.C4jaxGymEnv("connect_four", opponent="1steplA", player=1)
    obs, info = env.reset(seed=0)
    column = int(agents.load("1steplA").act(np.zeros((1, 6, 7), np.int8), jax.random.key(0))[0])
    expected = np.zeros((6, 7), np.int8)
    expected[5, column] = -1  # the opponent's stone, seen by the learner
    np.testing.assert_array_equal(obs, expected)
    assert env.learner == 1 and info["action_mask"].all()
    checkers = gymnasium_env.C4jaxGymEnv("checkers", opponent=agents.load("checkers/random"))
    assert checkers.opponent.game.id == "checkers"
    with pytest.raises(ValueError, match="plays connect_four, not checkers"):
        gymnasium_env.C4jaxGymEnv("checkers", opponent=agents.load("random"))
    with pytest.raises(ValueError, match="player must be 0, 1 or 'random'"):
        gymnasium_env.C4jaxGymEnv("connect_four", player=2)
    with pytest.raises(ValueError, match=r"integer in 0\.\.6"):
        env.step(-1)


def _episode(env, seed: int) -> list:
    obs, info = env.reset(seed=seed)
    rng, out = np.random.default_rng(seed), [(env.learner, obs)]
    done = False
    while not done:
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        out.append((obs, reward))
        done = terminated or truncated
    return out


def _same(a, b) -> bool:
    """Two episodes of :func:`_episode` are equal, entry by entry."""
    return len(a) == len(b) and all(len(x) == len(y) and all(np.array_equal(u, v) for u, v in zip(x, y))
                                    for x, y in zip(a, b))


def test_reset_seeding_is_reproducible():
    env = gymnasium_env.C4jaxGymEnv("connect_four", opponent="random", player="random")
    first = [_episode(env, seed) for seed in range(4)]
    again = [_episode(gymnasium_env.C4jaxGymEnv("connect_four", opponent="random", player="random"), seed)
             for seed in range(4)]
    assert all(_same(a, b) for a, b in zip(first, again))
    assert not all(_same(first[0], other) for other in first[1:])  # the seed matters
    assert {episode[0][0] for episode in first} <= {0, 1}
    pz = pettingzoo_env.env("checkers")
    runs = []
    for _ in range(2):
        pz.reset(seed=7)
        rng, seen = np.random.default_rng(7), []
        for _, agent in zip(range(40), pz.agent_iter()):
            obs, _, terminated, truncated, _ = pz.last()
            seen.append(obs["observation"])
            pz.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        runs.append(np.stack(seen))
    np.testing.assert_array_equal(runs[0], runs[1])


def test_the_libraries_are_optional():
    """Importing c4jax (and its play package) imports neither library; importing an environment
    without its library says which extra to install."""
    # one fresh interpreter: c4jax imported first, then each environment module with its library hidden
    code = ("import sys, c4jax, c4jax.play, c4jax.play.env_support; "
            "print(sorted(m for m in ('pettingzoo', 'gymnasium') if m in sys.modules))\n"
            "for module, library in (('pettingzoo_env', 'pettingzoo'), ('gymnasium_env', 'gymnasium')):\n"
            "    sys.modules[library] = None\n"
            "    try:\n"
            "        __import__('c4jax.play.' + module)\n"
            "    except ImportError as e:\n"
            "        print(f'ImportError: {e}'.replace(chr(10), ' '))\n"
            "    else:\n"
            "        print(f'imported c4jax.play.{module}')\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    lines = out.strip().splitlines()
    assert lines[0] == "[]" and len(lines) == 3, out
    for line, (module, extra) in zip(lines[1:], (("pettingzoo_env", "pettingzoo"), ("gymnasium_env", "gymnasium"))):
        assert f"ImportError: c4jax.play.{module} needs" in line and f"pip install 'c4jax[{extra}]'" in line, line


def test_the_guides_snippets_run(capsys):
    """Every Python block of docs/guide/play.md's "PettingZoo, Gymnasium and pgx" runs as it is written."""
    pytest.importorskip("pgx")
    text = (ROOT / "docs" / "guide" / "play.md").read_text()
    section = text[text.index("## PettingZoo, Gymnasium and pgx\n"):]
    end = section.find("\n## ", 1)  # the next section, or the end of the page
    section = section if end < 0 else section[:end]
    blocks = [b.split("```", 1)[0] for b in section.split("```python\n")[1:]]
    assert len(blocks) == 3
    for block in blocks:
        scope: dict = {}
        exec(compile(block, "docs/guide/play.md", "exec"), scope)  # noqa: S102 - the guide's own code
    assert bool((scope["env"].unwrapped.game_state.terminated | scope["env"].unwrapped.game_state.truncated))
    assert "to move" not in capsys.readouterr().out.splitlines()[-2]  # the Checkers diagram of a finished game
