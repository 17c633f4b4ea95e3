"""Checkers (design.md "Checkers"): hand-made positions for every rule, the notation, and
property tests over random move sequences (hypothesis + chex). The comparison with OpenSpiel
is tests/games/checkers/test_checkers_openspiel.py."""

from __future__ import annotations

import chex
import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from c4jax.games import base, make
from c4jax.games.checkers import bitboard as bb
from c4jax.games.checkers import env, notation
from c4jax.games.checkers.game import GAME, OPENSPIEL_GAME, Checkers

STEP = jax.jit(GAME.step)
# compiled once: a method read off the game is a new object each time, and jit compiles it again
OBSERVE = jax.jit(GAME.observe)


def play(state, moves, game=GAME):
    """``state`` after the PDN moves (each a step or one jump), every one asserted legal first."""
    step = STEP if game is GAME else jax.jit(game.step)
    for text in moves:
        legal = notation.legal_moves(state)
        assert text in legal, f"{text} is not legal in\n{notation.render(state)}\nlegal: {sorted(legal)}"
        state = step(state, legal[text])
    return state


def over(state) -> bool:
    return bool(state.terminated | state.truncated)


# --------------------------------------------------------------------------- the protocol


def test_game_object_and_start_position():
    game = make("checkers")
    assert game is GAME and base.check_game(game) is game
    assert hash(GAME) == hash(Checkers()) and GAME == Checkers()
    assert (game.num_actions, game.num_players, game.observation_shape) == (256, 2, (8, 8, 2))
    state = GAME.init(jax.random.PRNGKey(0))
    assert int(state.current_player) == 0 and not over(state)
    assert notation.to_fen(state) == "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"
    assert sorted(notation.legal_moves(state)) == sorted(["9-13", "9-14", "10-14", "10-15", "11-15", "11-16", "12-16"])
    obs = np.asarray(GAME.observe(state))
    assert obs.shape == (8, 8, 2) and obs.dtype == np.int8
    # the mover's men on the bottom three rows, on the dark squares (row + column odd)
    expected = np.zeros((8, 8), np.int8)
    for r in range(8):
        for c in range(8):
            if (r + c) % 2:
                expected[r, c] = -1 if r < 3 else (1 if r > 4 else 0)
    np.testing.assert_array_equal(obs[..., 0], expected)
    assert not obs[..., 1].any()


def test_observation_is_seen_from_the_side_of_the_player_to_move():
    state = play(GAME.init(), ["11-15"])
    obs = np.asarray(GAME.observe(state))[..., 0]
    # white to move now: its men are +1 on the bottom rows, black's man from 11 stands on 15,
    # which white sees on row 3 (4th from the top)
    assert (obs[5:] >= 0).all() and (obs[5:] == 1).sum() == 12
    assert (obs[:3] == -1).sum() == 11 and (obs[3] == -1).sum() == 1
    # turning white's view by 180 degrees gives black's view with the signs swapped
    black = notation.from_fen(notation.to_fen(state).replace("W:", "B:", 1))
    np.testing.assert_array_equal(np.rot90(obs, 2), -np.asarray(GAME.observe(black))[..., 0])


# --------------------------------------------------------------------------- captures


def test_jumping_is_mandatory():
    state = notation.from_fen("B:W18:B1,14")
    assert notation.legal_moves(state).keys() == {"14x23"}  # not 1-5, 1-6, 14-17
    after = play(state, ["14x23"])
    # white's only piece is gone: white cannot move and has lost
    assert bool(after.terminated) and after.rewards.tolist() == [1.0, -1.0]
    assert notation.absolute_board(after)["white"] == []


def test_a_multi_jump_keeps_the_player_and_the_piece():
    state = notation.from_fen("B:W9,18,30:B5,3")
    assert notation.legal_moves(state).keys() == {"5x14"}
    mid = play(state, ["5x14"])
    assert int(mid.current_player) == 0 and not over(mid)
    assert mid.rewards.tolist() == [0.0, 0.0]
    assert notation.legal_moves(mid).keys() == {"14x23"}  # only the jumper, only its jump
    assert notation.absolute_board(mid)["white"] == [18, 30]
    jumper = np.asarray(GAME.observe(mid))[..., 1]
    assert jumper.sum() == 1 and np.asarray(GAME.observe(mid))[..., 0][jumper == 1] == 1
    assert "14 must jump on" in notation.render(mid)
    # another piece's move in the middle of the multi-jump is illegal
    bad = STEP(mid, notation.pdn_to_action(mid, "3-7"))
    assert bool(bad.terminated) and bad.rewards.tolist() == [-1.0, 1.0]
    done = play(mid, ["14x23"])
    assert int(done.current_player) == 1 and not over(done)
    assert notation.absolute_board(done)["white"] == [30]
    assert not np.asarray(GAME.observe(done))[..., 1].any()
    assert notation.parse_move(state, "5x14x23") == [notation.pdn_to_action(state, "5x14"),
                                                      notation.pdn_to_action(mid, "14x23")]


def test_crowning_ends_the_move_even_if_the_new_king_could_jump_on():
    state = notation.from_fen("B:W25,26:B21")
    crowned = play(state, ["21x30"])
    assert int(crowned.current_player) == 1  # white moves, although king 30 could take 26
    assert notation.absolute_board(crowned)["black_kings"] == [30]
    assert notation.legal_moves(crowned).keys() == {"26-22", "26-23"}
    # a crowned man's step also ends the move
    state = notation.from_fen("W:W6:B31")
    assert int(play(state, ["6-1"]).current_player) == 0
    assert notation.absolute_board(play(state, ["6-1"]))["white_kings"] == [1]


def test_men_capture_forwards_only_and_kings_both_ways():
    # a black man on 14 with a white man behind it on 10 (7 empty): no jump back
    man = notation.from_fen("B:W10:B14")
    assert notation.legal_moves(man).keys() == {"14-17", "14-18"}
    # a black king there must take it
    king = notation.from_fen("B:W10:BK14")
    assert notation.legal_moves(king).keys() == {"14x7"}
    # and a king steps in all four directions
    assert notation.legal_moves(notation.from_fen("B:W32:BK14")).keys() == {"14-9", "14-10", "14-17", "14-18"}
    # white's men move up the printed board (towards 1), white's kings both ways
    assert notation.legal_moves(notation.from_fen("W:W14:B1")).keys() == {"14-9", "14-10"}
    assert notation.legal_moves(notation.from_fen("W:W14:B18")).keys() == {"14-9", "14-10"}
    assert notation.legal_moves(notation.from_fen("W:WK14:B18")).keys() == {"14x23"}


# --------------------------------------------------------------------------- the end of the game


def test_a_blocked_side_loses():
    state = notation.from_fen("B:W5:B1,9")  # white's man on 5 can only go to 1
    assert notation.legal_moves(state).keys() == {"1-6", "9-13", "9-14"}
    assert not over(play(state, ["1-6"]))
    blocked = play(state, ["9-13"])
    assert bool(blocked.terminated) and not bool(blocked.truncated)
    assert blocked.rewards.tolist() == [1.0, -1.0]
    assert not np.asarray(blocked.legal_action_mask).any()
    # a position whose mover has no move is lost from the start, for either colour
    lost = notation.from_fen("W:W5:B1")
    assert bool(lost.terminated) and lost.rewards.tolist() == [1.0, -1.0]
    lost = notation.from_fen("B:W32:B28")  # black's man on 28 can neither step nor jump
    assert bool(lost.terminated) and lost.rewards.tolist() == [-1.0, 1.0]
    assert not bool(notation.from_fen("B:W32:BK28").terminated)  # a king there steps back
    lost = notation.from_fen("B:W:B")
    assert bool(lost.terminated) and lost.rewards.tolist() == [-1.0, 1.0]


def test_finished_games_are_absorbing():
    blocked = play(notation.from_fen("B:W5:B1,9"), ["9-13"])
    again = STEP(blocked, 0)
    chex.assert_trees_all_equal(again, blocked)


def test_threefold_repetition_draws():
    shuffle = ["1-6", "32-27", "6-1", "27-32"]
    state = notation.from_fen("B:WK32:BK1")
    twice = play(state, shuffle)  # the start position for the second time
    assert not over(twice) and notation.to_fen(twice) == notation.to_fen(state)
    nearly = play(twice, shuffle[:3])
    assert not over(nearly)
    drawn = play(nearly, shuffle[3:])  # the third time
    assert bool(drawn.terminated) and drawn.rewards.tolist() == [0.0, 0.0]
    # without the repetition rule the same moves go on
    game = Checkers(rules=env.Rules(repetition=False))
    free = play(notation.from_fen("B:WK32:BK1", game), shuffle * 2, game)
    assert not over(free)


def test_a_man_move_or_capture_wipes_the_repetition_history():
    # the kings repeat twice, then a man moves: the kings' next repetitions count afresh
    state = notation.from_fen("B:WK32,21:BK1,12")
    shuffle = ["1-6", "32-27", "6-1", "27-32"]
    state = play(state, shuffle + ["12-16", "21-17"] + shuffle)
    assert not over(state)


def test_fifty_move_rule_counts_plies_without_man_moves_or_captures():
    game = Checkers(rules=env.Rules(repetition=False))  # so that shuffling kings can go on
    shuffle = ["1-6", "32-27", "6-1", "27-32"]
    start = notation.from_fen("B:WK32,21:BK1,12", game)
    state = play(start, shuffle * 24 + shuffle[:3], game)  # 99 plies
    assert not over(state) and int(state.quiet) == 99
    drawn = play(state, shuffle[3:], game)  # the 100th: fifty moves of each player
    assert bool(drawn.terminated) and drawn.rewards.tolist() == [0.0, 0.0]
    # a man's move on ply 100 resets the count instead
    reset = play(state, ["21-17"], game)
    assert not over(reset) and int(reset.quiet) == 0
    # and so does a capture: white's king walks into black's man on 14, which must take it
    walk = play(notation.from_fen("B:WK32,29:BK1,14", game), ["1-6", "32-27", "6-1", "27-23", "1-6", "23-18"], game)
    assert int(walk.quiet) == 6 and notation.legal_moves(walk).keys() == {"14x23"}
    assert int(play(walk, ["14x23"], game).quiet) == 0


def test_the_fifty_move_draw_against_a_blocking_move():
    # black's king moves into 1 on the ply that reaches the limit and blocks white's man on 5
    for draw_first, rewards in ((False, [1.0, -1.0]), (True, [0.0, 0.0])):
        game = Checkers(rules=env.Rules(quiet_limit=1, repetition=False, quiet_draw_first=draw_first))
        state = play(notation.from_fen("B:W5:BK6", game), ["6-1"], game)
        assert bool(state.terminated) and state.rewards.tolist() == rewards


def test_openspiel_rules_do_not_reset_on_man_moves():
    state = play(OPENSPIEL_GAME.init(), ["11-15", "23-19"], OPENSPIEL_GAME)
    assert int(state.quiet) == 2
    assert int(play(GAME.init(), ["11-15", "23-19"]).quiet) == 0


def test_the_ply_cap_truncates():
    game = Checkers(rules=env.Rules(max_steps=4))
    state = play(game.init(), ["11-15", "23-19", "8-11", "22-17"], game)
    assert bool(state.truncated) and not bool(state.terminated)
    assert state.rewards.tolist() == [0.0, 0.0] and not np.asarray(state.legal_action_mask).any()
    assert not bool(play(game.init(), ["11-15", "23-19", "8-11"], game).truncated)
    chex.assert_trees_all_equal(jax.jit(game.step)(state, 0), state)


@pytest.mark.parametrize("action", [0, 7, 255, -1, 256, 10_000])
def test_an_illegal_action_loses(action):
    for state, rewards in ((GAME.init(), [-1.0, 1.0]), (play(GAME.init(), ["11-15"]), [1.0, -1.0])):
        if 0 <= action < 256:
            assert not bool(np.asarray(state.legal_action_mask)[action])
        after = STEP(state, action)
        assert bool(after.terminated) and after.rewards.tolist() == rewards
        assert notation.to_fen(after) == notation.to_fen(state)  # the board is left as it was


# --------------------------------------------------------------------------- notation


def test_notation_round_trips():
    state = play(GAME.init(), ["11-15", "22-18", "15x22"])
    assert notation.legal_moves(state).keys() == {"25x18", "26x17"}
    for text, action in notation.legal_moves(state).items():
        assert notation.pdn_to_action(state, text) == action
        assert notation.action_to_pdn(state, action) == text
    fen = notation.to_fen(state)
    again = notation.from_fen(fen)
    assert notation.to_fen(again) == fen
    np.testing.assert_array_equal(again.legal_action_mask, state.legal_action_mask)
    assert notation.from_fen("B:W21-32:B1-12").legal.tolist() == GAME.init().legal.tolist()
    with pytest.raises(ValueError):
        notation.pdn_to_action(state, "11-20")
    with pytest.raises(ValueError):
        notation.from_fen("B:W1,2:B2")
    with pytest.raises(ValueError):
        notation.action_to_pdn(state, 8 * 28 + 0)  # square 4 (q=28 for black): off the board up-left
    assert notation.render(GAME.init()).splitlines()[0] == "  b   b   b   b"
    assert notation.render(GAME.init()).splitlines()[-1] == "black to move"


def test_squares_follow_standard_numbering():
    # from black's (the first player's) frame: 4 and 29 are single corners, 1/5 and 28/32 double corners
    def neighbours(n):
        q = notation.canonical_square(n, 0)
        bit = np.uint32(1 << q)
        return sorted(notation.square_number(int(np.asarray(bb.shift(bit, d))).bit_length() - 1, 0)
                      for d in range(4) if int(np.asarray(bb.shift(bit, d))))

    assert neighbours(4) == [8] and neighbours(29) == [25]
    assert neighbours(1) == [5, 6] and neighbours(5) == [1, 9] and neighbours(32) == [27, 28]
    assert neighbours(15) == [10, 11, 18, 19]
    for n in range(1, 33):
        for player in (0, 1):
            assert notation.square_number(notation.canonical_square(n, player), player) == n


# --------------------------------------------------------------------------- property tests

PROPERTY_SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)
choices = st.lists(st.integers(min_value=0, max_value=2**16), min_size=1, max_size=200)


def _absolute(state):
    """(black's pieces, white's pieces, kings) as PDN square sets."""
    board = notation.absolute_board(state)
    return set(board["black"]), set(board["white"]), set(board["black_kings"]) | set(board["white_kings"])


@PROPERTY_SETTINGS
@given(choices)
def test_random_games_keep_the_invariants(seq):
    state = GAME.init()
    for c in seq:
        if over(state):
            break
        mask = np.asarray(state.legal_action_mask)
        assert mask.any()  # a game that is not over has a legal move
        action = int(np.flatnonzero(mask)[c % mask.sum()])
        text = notation.action_to_pdn(state, action)
        mover = int(state.current_player)
        black, white, kings = _absolute(state)
        after = STEP(state, action)
        black2, white2, kings2 = _absolute(after)
        own, own2, other, other2 = (black, black2, white, white2) if mover == 0 else (white, white2, black, black2)
        start, end = (int(x) for x in text.replace("x", "-").split("-"))
        assert own2 == (own - {start}) | {end}  # the piece moved, nothing else of the mover's
        if "x" in text:  # exactly the jumped piece is gone
            gone = other - other2
            assert len(gone) == 1 and len(other2) == len(other) - 1
        else:
            assert other2 == other
        assert len(black2) <= len(black) and len(white2) <= len(white)
        assert kings - kings2 <= (other - other2) | {start}  # kings only vanish by capture (or move)
        assert kings2 - kings <= {end}  # and only the moved piece can become one
        assert len(black2 | white2) == len(black2) + len(white2) and kings2 <= black2 | white2
        assert int(after.step_count) == int(state.step_count) + 1
        if int(after.current_player) == mover and not over(after):
            assert "x" in text  # only a jump lets the same player move again
        state = after


def _random_actions(key, steps):
    """A jitted game of ``steps`` random legal plies (illegal only once it is over)."""

    def ply(state, k):
        new = GAME.step(state, base.random_legal_action(k, state.legal_action_mask))
        return new, new

    return jax.lax.scan(ply, GAME.init(), jax.random.split(key, steps))


@settings(max_examples=4, deadline=None, derandomize=True)
@given(st.integers(min_value=0, max_value=2**31 - 1))
def test_jit_and_no_jit_agree(seed):
    """Random plies (and an illegal action at the end) stepped eagerly and jitted give the same
    states and observations."""
    rng = np.random.default_rng(seed)
    eager = jitted = GAME.init()
    for ply in range(9):
        mask = np.asarray(jitted.legal_action_mask)
        action = int(rng.choice(np.flatnonzero(mask))) if mask.any() and ply < 8 else 0
        with jax.disable_jit():
            eager = GAME.step(eager, action)
            eager_obs = GAME.observe(eager)
        jitted = STEP(jitted, action)
        chex.assert_trees_all_equal(eager, jitted)
        chex.assert_trees_all_equal(eager_obs, OBSERVE(jitted))
    assert bool(jitted.terminated)  # action 0 (square 0 stepping up-left, off the board) is illegal


# compiled once for every example below (a function jitted inside the test would compile again for each)
_BATCH_OF_GAMES = jax.jit(jax.vmap(lambda k: _random_actions(k, 150)))
_ONE_GAME = jax.jit(lambda k: _random_actions(k, 150))


@settings(max_examples=5, deadline=None, derandomize=True)
@given(st.integers(min_value=0, max_value=2**31 - 1))
def test_vmap_equals_a_loop_over_games(seed):
    keys = jax.random.split(jax.random.PRNGKey(seed), 8)
    final, trace = _BATCH_OF_GAMES(keys)
    for i in range(len(keys)):
        one_final, one_trace = _ONE_GAME(keys[i])
        chex.assert_trees_all_equal(jax.tree.map(lambda x: x[i], final), one_final)
        chex.assert_trees_all_equal(jax.tree.map(lambda x: x[i], trace), one_trace)
    obs = jax.vmap(GAME.observe)(final)
    chex.assert_shape(obs, (8, 8, 8, 2))
    for i in range(len(keys)):
        chex.assert_trees_all_equal(obs[i], GAME.observe(jax.tree.map(lambda x: x[i], final)))


def test_draws_match_a_plain_position_count():
    """Random king endgames: the game is drawn exactly when a plain count of the positions
    since the last man move or capture (PDN FEN, which names the player to move) reaches three
    for the new position, or after 100 such plies, unless the new mover has no move (a loss)."""
    rng = np.random.default_rng(7)
    repetitions = 0
    for _ in range(40):
        squares = [int(n) + 1 for n in rng.permutation(32)[:4]]
        men = int(rng.integers(0, 2))  # maybe one man each, on the far side of its own kings
        fen = f"{'BW'[rng.integers(2)]}:WK{squares[0]},K{squares[1]}:BK{squares[2]},K{squares[3]}"
        if men:
            fen = fen.replace(":BK", ":B1,K", 1).replace(":WK", ":W32,K", 1) if not {1, 32} & set(squares) else fen
        state = notation.from_fen(fen)
        seen = [notation.to_fen(state)]
        quiet = 0
        for _ in range(300):
            if over(state):
                break
            legal = notation.legal_moves(state)
            text = list(legal)[rng.integers(len(legal))]
            mover = int(state.current_player)
            man = text.split("x")[0].split("-")[0]
            board = notation.absolute_board(state)
            side = "black" if mover == 0 else "white"
            was_man = int(man) not in board[side + "_kings"]
            state = STEP(state, legal[text])
            if "x" in text or was_man:
                seen, quiet = [], 0
            else:
                quiet += 1
            if int(state.current_player) == mover and not over(state):
                continue  # the middle of a multi-jump
            fen_now = notation.to_fen(state)
            seen.append(fen_now)
            repeated = seen.count(fen_now) >= 3
            # whether the new mover has a move, asked only where it decides (rebuilding a state from its FEN
            # runs op by op)
            expect_draw = (repeated or quiet >= 100) and bool(notation.legal_moves(notation.from_fen(fen_now)))
            drawn = bool(state.terminated) and state.rewards.tolist() == [0.0, 0.0]
            assert drawn == expect_draw, (fen, text, fen_now, seen.count(fen_now), quiet)
            assert int(state.quiet) == quiet
            repetitions += drawn and repeated
    assert repetitions >= 5  # the test saw the rule at work
