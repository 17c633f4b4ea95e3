"""The static site's JS rules (c4jax/web/rules.js) against the JAX games: random games of Connect
Four and Checkers (Checkers also from random positions of kings only, where the repetition and
no-progress draws come quickly) replayed in Node give the same legal actions, player to move,
end flags, rewards and observations after every ply. Needs ``node`` (skipped without it)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from c4jax import games
from c4jax.games.base import random_legal_action

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed (the site's JS rules are not tested)")
REPLAY = Path(__file__).resolve().parent / "replay_rules.mjs"  # beside this file, in tests/web/


def _play(game, states, key, plies):
    """Random legal games from ``states`` (a batch): per ply the action and the state after it."""

    def ply(state, k):
        keys = jax.random.split(k, state.current_player.shape[0])
        action = jax.vmap(random_legal_action)(keys, state.legal_action_mask)
        after = jax.vmap(game.step)(state, action)
        return after, (action, after)

    _, (actions, after) = jax.lax.scan(ply, states, jax.random.split(key, plies))
    return actions, after


def _rows(game, states):
    """The recorded fields of a batch of states ([T, B] or [B])."""
    return {"legal": np.asarray(states.legal_action_mask), "current": np.asarray(states.current_player),
            "terminated": np.asarray(states.terminated), "truncated": np.asarray(states.truncated),
            "rewards": np.asarray(states.rewards),
            "obs": np.asarray(jax.vmap(jax.vmap(game.observe))(states) if states.current_player.ndim == 2
                              else jax.vmap(game.observe)(states))}


def _compare(game, starts, start_words, key, plies, rules=None):
    actions, after = jax.jit(lambda s, k: _play(game, s, k, plies))(starts, key)
    first, later = _rows(game, starts), _rows(game, after)
    actions = np.asarray(actions)
    done = later["terminated"] | later["truncated"]
    lengths = [int(np.argmax(done[:, b])) + 1 if done[:, b].any() else plies for b in range(actions.shape[1])]
    payload = {"game": game.id, "rules": rules, "games": [{"start": start_words[b], "actions": actions[:lengths[b], b].tolist()}
                                          for b in range(actions.shape[1])]}
    got = json.loads(subprocess.run([NODE, str(REPLAY)], input=json.dumps(payload), capture_output=True,
                                    text=True, check=True).stdout)
    for b, rows in enumerate(got):
        assert len(rows["current"]) == lengths[b] + 1
        for t in range(lengths[b] + 1):
            want = {k: (v[b] if t == 0 else later[k][t - 1, b]) for k, v in first.items()}
            where = f"{game.id} game {b} after {t} plies"
            assert rows["legal"][t] == np.flatnonzero(want["legal"]).tolist(), where
            assert rows["current"][t] == int(want["current"]), where
            assert rows["terminated"][t] == bool(want["terminated"]), where
            assert rows["truncated"][t] == bool(want["truncated"]), where
            assert rows["rewards"][t] == want["rewards"].tolist(), where
            assert rows["obs"][t] == want["obs"].ravel().tolist(), where
    return later, lengths, after


def test_connect_four_rules_match_jax():
    game = games.make("connect_four")
    n = 200
    starts = jax.vmap(lambda _: game.init())(jnp.arange(n))
    later, lengths, _ = _compare(game, starts, [None] * n, jax.random.key(1), game.max_steps)
    results = later["rewards"][np.asarray(lengths) - 1, np.arange(n), 0]
    assert (results == 1).any() and (results == -1).any()  # both players win some games


def _king_positions(rng, n):
    """Random positions with 1-3 kings a side (first player's frame), the first player to move."""
    out = []
    for _ in range(n):
        squares = rng.permutation(32)
        a, b = rng.integers(1, 4, size=2)
        cur = sum(1 << int(q) for q in squares[:a])
        opp = sum(1 << int(q) for q in squares[a:a + b])
        out.append([cur, opp, cur | opp, 0])
    return out


@pytest.mark.parametrize("quiet_limit,max_steps", [(100, 512), (12, 60)])
def test_checkers_rules_match_jax(quiet_limit, max_steps):
    """design.md's rules, and the same rules with a short no-progress limit and ply cap, so that
    both end some of the random games."""
    from c4jax.games.checkers import env
    from c4jax.games.checkers.game import Checkers

    rules = env.Rules(quiet_limit=quiet_limit, max_steps=max_steps)
    game = Checkers(rules=rules)
    n_start, n_kings = 24, 40
    words = [None] * n_start + _king_positions(np.random.default_rng(0), n_kings)
    states = [game.init() if w is None else env.from_board(rules, *w[:3], w[3]) for w in words]
    starts = jax.tree.map(lambda *xs: jnp.stack(xs), *states)
    short = None if rules == env.Rules() else {"quietLimit": quiet_limit, "maxSteps": max_steps}
    later, lengths, after = _compare(game, starts, words, jax.random.key(2), max_steps, short)
    last = np.asarray(lengths) - 1
    games_ = np.arange(len(words))
    ended = later["terminated"][last, games_]
    draws = ended & (later["rewards"][last, games_, 0] == 0)
    quiet = np.asarray(after.quiet)[last, games_]
    assert (ended & ~draws).sum() >= 5  # wins
    if not short:
        assert (draws & (quiet < quiet_limit)).sum() >= 5  # threefold repetitions
    else:
        assert (draws & (quiet == quiet_limit)).any()  # the no-progress draw
        assert later["truncated"][last, games_].any()  # the ply cap


def test_checkers_rules_constants():
    """The JS rules' defaults are design.md's (env.Rules())."""
    from c4jax.games.checkers import env

    script = ('import { CHECKERS_RULES } from "' + (REPLAY.parent.parent.parent / "c4jax/web/rules.js").as_uri()
              + '"; console.log(JSON.stringify(CHECKERS_RULES));')
    got = json.loads(subprocess.run([NODE, "--input-type=module", "-e", script], capture_output=True, text=True,
                                    check=True).stdout)
    assert got == {"quietLimit": env.Rules().quiet_limit, "maxSteps": env.Rules().max_steps}
