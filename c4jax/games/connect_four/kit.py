"""Connect Four's kit (:class:`c4jax.games.kit.GameKit`): the rules of design.md §1 and its CNET
planes, mirror, random starts (§3), yardstick, players, shaped reward (§2) and dataset text."""

from __future__ import annotations


from c4jax.games.connect_four import env, minimax
from c4jax.games.connect_four.card import CARD
from c4jax.games.connect_four.interop import board_from_pgx
from c4jax.games.connect_four.rewards import shaped_reward
from c4jax.games.connect_four.board import legal_mask, mirror_boards, playable
from c4jax.games.connect_four.game import GAME
from c4jax.games.kit import GameKit, MatchRules, Player, Symmetry

MIRROR = Symmetry(name="mirror", observation=mirror_boards, actions=tuple(range(env.COLS - 1, -1, -1)))

# the thesis' protocol: the 49 two-move openings, (c1, c2) in order; both agents decide in
# every game at every ply (the sampling keys of docs/results' match tables); a game's length is the
# stones on its final board, the opening's two included
MATCH = MatchRules(openings=tuple((c1, c2) for c1 in range(env.COLS) for c2 in range(env.COLS)), alternating=True,
                   compact=False, length=lambda state: state.num_moves,
                   length_text="Stones on the final board (the two opening stones included)")

CENTRE_FIRST = (3, 2, 4, 1, 5, 0, 6)  # the tie-break of the lookahead and the perfect player
_HERE = "c4jax.games.connect_four"
PLAYERS = (
    # design.md §4 N-step lookahead, 1steplA .. 4steplA: ":det" (the default) centre first among the best
    Player(name="{n}steplA", numbers=(1, 4), scores=f"{_HERE}.lookahead:scores_and_best", tie_order=CENTRE_FIRST,
           kind="lookahead", label="depth-{n} minimax score of each {action} minus the current board's heuristic "
                                   "score (higher is better for the agent; 1e10 = a four)"),
    # seed 002's opponent, design.md §4a: ":det" (the default) the lowest of the best columns, as its loop
    Player(name="minimax{n}", numbers=(1, minimax.MAX_DEPTH), example="minimax4", scores=f"{_HERE}.minimax:scores_and_best",
           tie_order=tuple(range(env.COLS)), kind="lookahead", costly=5,  # 7**5 leaves a decision and more
           label="depth-{n} minimax value of each {action} with seed 002's window heuristic (higher is better "
                 "for the agent; 1e6 = a forced four)"),
    # the exact solver (the solver extra), deterministic only
    Player(name="perfect", scores=f"{_HERE}.perfect:scores_and_best", tie_order=CENTRE_FIRST, sampled=False,
           kind="perfect", costly=0, available=f"{_HERE}.perfect:solver_available",
           missing=f"{_HERE}.perfect:SolverMissingError",
           label="exact solver score of each {action}: > 0 a win (higher: sooner), 0 a draw, < 0 a loss "
                 "(lower: sooner)"),
    # OpenSpiel's C++ MCTS (the bench-search extra), stochastic only: its rollouts are random
    Player(name="openspiel-mcts{n}", numbers=(1, None), number="number of simulations", example="openspiel-mcts1000",
           policy=f"{_HERE}.openspiel_mcts:policy", available=f"{_HERE}.openspiel_mcts:openspiel_available",
           missing=f"{_HERE}.openspiel_mcts:OpenSpielMissingError"),
)

KIT = GameKit(
    game=GAME,
    **CARD.kit_fields(),  # title, yardstick, reference agents, teacher, view, the algorithms' defaults
    encoding="cnet_planes",  # own and opponent stones, playable cells marked
    observation_legal=legal_mask,  # a board's legal columns: those with an empty top cell
    symmetries=(MIRROR,),
    random_start=env.random_initial_state,
    uct_c=1.0,  # chosen against OpenSpiel's MCTSBot (docs/results/openspiel_mcts.md)
    other_observation=lambda state: -env.observe(state),  # the board from the other side: stones swapped
    match=MATCH,
    observation_range=(-1, 1),
    env="c4jax.games.connect_four.env",
    from_observation=env.from_board,  # a public board tells the whole state
    playable=playable,  # the agents' board API: validated boards, finished games replaced by the empty board
    position_words=lambda state: (state.cur.lo, state.cur.hi, state.opp.lo, state.opp.hi),  # its bitboards
    players=PLAYERS,  # N-step lookahead, minimax<D>, perfect, openspiel-mcts<N>
    from_pgx=board_from_pgx,  # pgx's two planes as a board
    plain_lookahead="c4jax.games.connect_four.reference:act",  # Table 5.1's plain-Python rows
    solver="c4jax.games.connect_four.perfect",  # the perfect player's solver (the solver extra)
    shaped_reward=shaped_reward,
    text_format="c4jax.games.connect_four.dataset",  # the reference thesis' dataset text
)
