"""Differential test: c4jax's environment against pgx's ``connect_four``.

``N_GAMES`` random games are played in lockstep in both implementations, batched
with ``vmap`` inside one jitted ``lax.scan`` over the 42 plies of a full board
(compiled once per test session). At every ply both receive the same uniformly
random legal column; finished games stay finished (both environments ignore
actions on a finished game). After every ply we compare:

* the legal masks (pgx sets every entry ``True`` on a terminal state, c4jax sets
  every entry ``False``; pgx's mask is therefore compared as ``mask & ~terminated``),
* ``done`` against pgx's ``terminated``,
* the winner: c4jax's ``winner`` (+1 first player, -1 second player, 0 none) against
  pgx's ``rewards`` read at the player id that moved first (pgx draws who moves
  first at ``init``: ``current_player`` of the initial state), latched on the ply
  where pgx terminates (pgx zeroes the rewards on later plies),
* the board: c4jax's ``observe`` against pgx's observation (``[6, 7, 2]``, channel 0
  = stones of the player to move, channel 1 = the opponent's, row 0 on top)
  turned into the canonical ``int8`` view ``obs[..., 0] - obs[..., 1]``,
  and, independently of pgx's ``observe``, against pgx's raw colour board (colour
  ``_x.color`` = the player to move),
* the stone count ``num_moves`` against the stones on pgx's board and, at the end,
  the game length against the number of plies pgx accepted (``_step_count``),
* the shaped reward of a game's last move: +1 for a win, 0 for a full-board draw,
* ``from_board`` on pgx's board: it must rebuild the same legal mask, ``done``,
  winner and stone count.

pgx is a declared test dependency (``pip install -e .[test]``), so it is imported
directly: a missing pgx is an error, not a skip.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pgx
import pytest

from c4jax.games.connect_four import env
from c4jax.games.connect_four import rewards as shaped_lib

N_GAMES = 20_000
SEED = 20240611
PLIES = env.MAX_MOVES  # 42: every game is over after at most this many plies

_PGX = pgx.make("connect_four")


def _pgx_canonical_board(obs: jax.Array) -> jax.Array:
    """int8[6, 7] from pgx's observation bool[6, 7, 2] (channel 0 = player to move)."""
    return obs[..., 0].astype(jnp.int8) - obs[..., 1].astype(jnp.int8)


def _pgx_raw_canonical_board(state) -> jax.Array:
    """int8[6, 7] from pgx's colour board (-1 empty, 0/1 colours; ``_x.color`` moves next)."""
    raw = state._x.board.reshape(env.ROWS, env.COLS)
    to_move = state._x.color
    return jnp.where(raw == to_move, 1, jnp.where(raw == 1 - to_move, -1, 0)).astype(jnp.int8)


def _compare(c4, px, pgx_winner, pgx_len):
    """Per-game mismatch flags of one ply (all bool[]) plus values for the report."""
    board_c4 = env.observe(c4)
    board_px = _pgx_canonical_board(px.observation)
    rebuilt = env.from_board(board_px)  # traced here: the pure path, no host validation
    px_mask = px.legal_action_mask & ~px.terminated
    flags = {
        "legal_mask": jnp.any(c4.legal_mask != px_mask),
        "done": c4.done != px.terminated,
        "winner": c4.winner != pgx_winner,
        "board_vs_observation": jnp.any(board_c4 != board_px),
        "board_vs_raw_pgx_board": jnp.any(board_c4 != _pgx_raw_canonical_board(px)),
        "num_moves_vs_stones": c4.num_moves != jnp.sum(board_px != 0),
        "length_vs_pgx_step_count": c4.num_moves != px._step_count,
        "length_vs_plies_accepted": c4.num_moves != pgx_len,
        "from_board_legal_mask": jnp.any(rebuilt.legal_mask != px_mask),
        "from_board_done": rebuilt.done != px.terminated,
        "from_board_winner": rebuilt.winner != pgx_winner,
        "from_board_num_moves": rebuilt.num_moves != c4.num_moves,
    }
    return flags


def _play_one(key: jax.Array):
    """Play one random game in both environments; per-ply flags and the game record."""
    init_key, play_key = jax.random.split(key)
    c4 = env.init()
    px = _PGX.init(init_key)
    first_id = px.current_player  # pgx player id of the first mover (random per game)

    def ply(carry, k):
        c4, px, pgx_winner, pgx_len = carry
        action = env.random_legal_action(k, c4.legal_mask)
        was_over = px.terminated
        # The column must be legal for pgx too (else pgx would end the game itself).
        illegal_in_pgx = ~was_over & ~px.legal_action_mask[action]
        c4_prev = c4
        c4_prev_done = c4.done
        c4 = env.step(c4, action)
        px = _PGX.step(px, action)
        just_ended = px.terminated & ~was_over
        # pgx rewards are indexed by player id; read them at the first mover's id.
        winner_now = jnp.round(px.rewards[first_id]).astype(jnp.int32)
        pgx_winner = jnp.where(just_ended, winner_now, pgx_winner)
        pgx_len = pgx_len + (~was_over).astype(jnp.int32)
        flags = _compare(c4, px, pgx_winner, pgx_len)
        # The shaped reward of the last move: +1 for the winning move, 0 for a draw.
        c4_ended = c4.done & ~c4_prev_done
        expected_reward = jnp.where(c4.winner != 0, shaped_lib.REWARD_WIN, 0.0)
        flags["final_reward"] = c4_ended & (shaped_lib.shaped_reward(c4_prev, c4, action) != expected_reward)
        # The game protocol's rewards of the step agree with pgx's, player by player.
        ours = jnp.stack([c4.rewards[0], c4.rewards[1]])[jnp.where(first_id == 0, jnp.arange(2), 1 - jnp.arange(2))]
        flags["protocol_rewards"] = ~was_over & jnp.any(ours != px.rewards)
        flags["action_legal_in_pgx"] = illegal_in_pgx
        return (c4, px, pgx_winner, pgx_len), (flags, action)

    carry0 = (c4, px, jnp.int32(0), jnp.int32(0))
    (c4, px, pgx_winner, pgx_len), (flags, actions) = jax.lax.scan(
        ply, carry0, jax.random.split(play_key, PLIES)
    )
    final = {
        "c4_winner": c4.winner,
        "pgx_winner": pgx_winner,
        "c4_length": c4.num_moves,
        "pgx_length": pgx_len,
        "c4_done": c4.done,
        "pgx_terminated": px.terminated,
    }
    return flags, actions, final


@functools.lru_cache(maxsize=1)
def _lockstep():
    """Run the whole differential batch once (jit + vmap) and return numpy results."""
    keys = jax.random.split(jax.random.PRNGKey(SEED), N_GAMES)
    flags, actions, final = jax.jit(jax.vmap(_play_one))(keys)
    return jax.tree.map(np.asarray, (flags, actions, final))


@pytest.fixture(scope="module")
def lockstep():
    return _lockstep()


CHECKS = [
    "legal_mask",
    "done",
    "winner",
    "board_vs_observation",
    "board_vs_raw_pgx_board",
    "num_moves_vs_stones",
    "length_vs_pgx_step_count",
    "length_vs_plies_accepted",
    "final_reward",
    "action_legal_in_pgx",
    "from_board_legal_mask",
    "from_board_done",
    "from_board_winner",
    "from_board_num_moves",
]


def _replay_snippet(actions: np.ndarray, game: int, ply: int) -> str:
    moves = [int(a) for a in actions[game, : ply + 1]]
    return (
        f"game {game}, ply {ply} (0-based); columns played so far: {moves}\n"
        f"replay: s = env.init(); [s := env.step(s, a) for a in {moves}]"
    )


@pytest.mark.parametrize("check", CHECKS)
def test_lockstep_agrees_with_pgx(lockstep, check):
    """Every ply of every game: the named quantity agrees between c4jax and pgx."""
    flags, actions, _ = lockstep
    bad = flags[check]  # bool[N_GAMES, PLIES]
    assert bad.shape == (N_GAMES, PLIES)
    if bad.any():
        game, ply = np.argwhere(bad)[0]
        pytest.fail(
            f"{check}: {int(bad.any(axis=1).sum())} of {N_GAMES} games disagree with pgx; "
            f"first at {_replay_snippet(actions, int(game), int(ply))}"
        )


def test_final_outcomes_agree(lockstep):
    """At the end every game is over in both, with the same winner and length."""
    _, _, final = lockstep
    assert final["c4_done"].all() and final["pgx_terminated"].all()
    np.testing.assert_array_equal(final["c4_winner"], final["pgx_winner"])
    np.testing.assert_array_equal(final["c4_length"], final["pgx_length"])


def test_sample_covers_every_outcome(lockstep):
    """The random sample is not degenerate: both players win, and some games are drawn.

    Under uniform random play about 55% of games are first-player wins, 44% second-player
    wins and ~0.2% draws, so 20,000 games contain draws with overwhelming probability.
    """
    _, _, final = lockstep
    winners = final["c4_winner"]
    lengths = final["c4_length"]
    assert (winners == 1).sum() > N_GAMES // 4
    assert (winners == -1).sum() > N_GAMES // 4
    draws = winners == 0
    assert draws.sum() >= 1
    assert (lengths[draws] == env.MAX_MOVES).all()
    # First-player wins end on odd plies, second-player wins on even plies.
    assert (lengths[winners == 1] % 2 == 1).all()
    assert (lengths[winners == -1] % 2 == 0).all()
    assert lengths.min() >= 7
