"""Connect Four's kit (:class:`c4jax.games.kit.GameKit`): the rules of design.md §1 and what
else is Connect Four's: the CNET's input planes, the legal columns read from a board, the
left-right mirror, design.md §3's random start positions, the UCT constant of pure MCTS, the
perfect-play yardstick, the thesis' reference opponent 1StepLA, the public boards as observations
that tell the whole state (the agents' board API), its own agents (N-step lookahead, the perfect
player, OpenSpiel's MCTS: :mod:`c4jax.games.connect_four.agents`), the shaped reward of design.md
§2, and 1StepLA as the teacher of design.md §6's supervised stage, with the thesis' dataset text
format.

The algorithms' own defaults are Connect Four's (the thesis'); AlphaZero's evaluations here also
grade the network on the yardstick, which chooses ``best/`` (2,866 fixed positions: far less noisy
than a 100-game match), and play 2StepLA."""

from __future__ import annotations

from types import MappingProxyType

from c4jax.games.connect_four import env
from c4jax.games.connect_four.rewards import shaped_reward
from c4jax.games.connect_four.board import legal_mask, mirror_boards, playable
from c4jax.games.connect_four.game import GAME
from c4jax.games.kit import GameKit, MatchRules, Symmetry

MIRROR = Symmetry(name="mirror", observation=mirror_boards, actions=tuple(range(env.COLS - 1, -1, -1)))

# the thesis' protocol: the 49 two-move openings, (c1, c2) in order; both agents decide in
# every game at every ply (the sampling keys of docs/results' match tables); a game's length is the
# stones on its final board, the opening's two included
MATCH = MatchRules(openings=tuple((c1, c2) for c1 in range(env.COLS) for c2 in range(env.COLS)), alternating=True,
                   compact=False, length=lambda state: state.num_moves,
                   length_text="Stones on the final board (the two opening stones included)")

KIT = GameKit(
    game=GAME,
    title="Connect Four",
    encoding="cnet_planes",  # own and opponent stones, playable cells marked
    cnet=True,
    observation_legal=legal_mask,  # a board's legal columns: those with an empty top cell
    symmetries=(MIRROR,),
    random_start=env.random_initial_state,
    uct_c=1.0,  # chosen against OpenSpiel's MCTSBot (docs/results/openspiel_mcts.md)
    yardstick=True,
    reference_agents=("random", "1steplA"),
    reference="1steplA",  # the thesis' yardstick of training progress
    other_observation=lambda state: -env.observe(state),  # the board from the other side: stones swapped
    match=MATCH,
    observation_range=(-1, 1),
    env="c4jax.games.connect_four.env",
    view="c4jax.games.connect_four.view",
    from_observation=env.from_board,  # a public board tells the whole state
    playable=playable,  # the agents' board API: validated boards, finished games replaced by the empty board
    position_words=lambda state: (state.cur.lo, state.cur.hi, state.opp.lo, state.opp.hi),  # its bitboards
    agents="c4jax.games.connect_four.agents:register",  # N-step lookahead, perfect, openspiel-mcts<N>
    plain_lookahead="c4jax.games.connect_four.reference:act",  # Table 5.1's plain-Python rows
    solver="c4jax.games.connect_four.perfect",  # the perfect player's solver (the solver extra)
    shaped_reward=shaped_reward,
    teacher="1steplA",  # the supervised stage imitates 1StepLA
    text_format="c4jax.games.connect_four.dataset",  # the reference thesis' dataset text
    defaults=MappingProxyType({"alphazero": MappingProxyType({"run": MappingProxyType(dict(
        eval_yardstick=True, eval_opponents=("2steplA",), select_by="yardstick"))})}),
)
