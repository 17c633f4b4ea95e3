"""Evaluation of agents with the tournament protocol of the thesis (design.md §9, thesis §5.1).

A **match** between agents A and B is 100 games. There are 50 openings: the empty
board and the 49 boards after every pair ``(c1, c2)`` of first moves (``c1`` by the
first player, ``c2`` by the second). Each opening is played twice, once with A as
the first player (A moves first from the empty board; after ``(c1, c2)`` the stone
``c1`` is A's and A is to move) and once with B as the first player. From the
opening on, both agents play their own policies. A's win rate is
``(wins + 0.5 * draws) / games``, and is reported overall and per seat (A first,
B first).

All 100 games run in one jitted call of :func:`c4jax.agents.arena.rollout` with the
agents passed as arguments, so a match between agents of already-seen types (for a
network agent: the same architecture, any weights) does not re-trace. Called under a mesh
with a batch axis (``jax.set_mesh``, as ``--devices N`` of the trainers and the tournament
sets), the games are split over its devices when N divides them; the results are the same.

Tournaments are in :mod:`c4jax.evaluation.tournament`, decision timing in
:mod:`c4jax.evaluation.timing`, ratings in :mod:`c4jax.evaluation.ratings`.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from c4jax.agents import arena
from c4jax.games.connect_four import env
from c4jax.games.connect_four.game import GAME as CONNECT_FOUR
from c4jax.io.devices import to_host

NUM_OPENINGS = 50  # the empty board + 7 * 7 two-move openings
GAMES_PER_MATCH = 2 * NUM_OPENINGS  # every opening once per seat


# ---------------------------------------------------------------------------------------------
# Openings
# ---------------------------------------------------------------------------------------------


@jax.jit
def _build_openings(moves: Array) -> env.EnvState:
    """EnvState [N] after the moves int32[N, K] from the empty board (-1: no move)."""

    def _one(m):
        s = env.init()
        for col in m:
            s = jax.tree.map(lambda new, old: jnp.where(col >= 0, new, old), env.step(s, col), s)
        return s

    return jax.vmap(_one)(moves)


@functools.cache
def _openings() -> tuple[env.EnvState, np.ndarray]:
    moves = np.full((NUM_OPENINGS, 2), -1, np.int32)
    moves[1:] = [(c1, c2) for c1 in range(env.COLS) for c2 in range(env.COLS)]
    # Evaluated eagerly even when first called under a trace, so the cache never holds tracers.
    with jax.ensure_compile_time_eval():
        states = _build_openings(jnp.asarray(moves))
    moves.setflags(write=False)
    return states, moves


def openings() -> tuple[env.EnvState, Array]:
    """The 50 protocol openings (cached).

    Returns:
      states: EnvState [50]: opening ``0`` is the empty board; opening ``1 + 7*c1 + c2``
        is the board after the first player played ``c1`` and the second ``c2``
        (first player to move again).
      moves: int32[50, 2]: the opening moves ``(c1, c2)``; ``-1`` pads opening 0.
    """
    states, moves = _openings()
    return states, jnp.asarray(moves)


# ---------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeatRecord:
    """Games of A from one seat (or in total): counts from A's point of view."""

    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def win_rate(self) -> float:
        """(wins + 0.5 * draws) / games (``nan`` for no games)."""
        return (self.wins + 0.5 * self.draws) / self.games if self.games else float("nan")

    def swap(self) -> SeatRecord:
        """The same games from the opponent's point of view."""
        return SeatRecord(wins=self.losses, draws=self.draws, losses=self.wins)

    def __add__(self, other: SeatRecord) -> SeatRecord:
        return SeatRecord(self.wins + other.wins, self.draws + other.draws, self.losses + other.losses)

    def to_dict(self) -> dict:
        return {"wins": self.wins, "draws": self.draws, "losses": self.losses, "games": self.games,
                "win_rate": self.win_rate}


@dataclass(frozen=True)
class GameRecord:
    """The record of one game of a match (not a game's rules: those are :class:`c4jax.games.base.Game`),
    replayable with the game's ``step`` from its start position over ``moves``."""

    opening: int  # index into openings(): 0 = empty board, 1 + 7*c1 + c2
    a_first: bool  # agent A is the first player (played the first stone of ``moves``)
    moves: tuple[int, ...]  # every column played, opening moves included
    outcome_a: int  # +1 A won, 0 draw, -1 A lost
    length: int  # stones on the final board (== len(moves) unless the last move was illegal)

    def swap(self) -> GameRecord:
        """The same game with A and B exchanged."""
        return dataclasses.replace(self, a_first=not self.a_first, outcome_a=-self.outcome_a)

    def to_dict(self) -> dict:
        return {"opening": self.opening, "a_first": self.a_first, "moves": list(self.moves),
                "outcome_a": self.outcome_a, "length": self.length}


@dataclass(frozen=True)
class MatchResult:
    """A 100-game protocol match of ``agent_a`` against ``agent_b``, from A's point of view.

    ``games[:50]`` are the openings 0..49 with A first, ``games[50:]`` the same
    openings with B first.
    """

    agent_a: str
    agent_b: str
    a_first: SeatRecord  # the 50 games where A is the first player (counts sum to 50)
    b_first: SeatRecord  # the 50 games where B is the first player (counts sum to 50)
    games: tuple[GameRecord, ...]  # [100]

    @property
    def total(self) -> SeatRecord:
        """Both seats together (counts sum to 100)."""
        return self.a_first + self.b_first

    @property
    def wins(self) -> int:
        return self.total.wins

    @property
    def draws(self) -> int:
        return self.total.draws

    @property
    def losses(self) -> int:
        return self.total.losses

    @property
    def win_rate(self) -> float:
        """A's win rate over all games, (wins + 0.5 * draws) / games."""
        return self.total.win_rate

    @property
    def win_rate_a_first(self) -> float:
        return self.a_first.win_rate

    @property
    def win_rate_b_first(self) -> float:
        return self.b_first.win_rate

    @property
    def mean_length(self) -> float:
        """Mean number of stones on the final boards (opening moves included)."""
        return float(np.mean([g.length for g in self.games]))

    def __repr__(self) -> str:
        """One line (the dataclass' own repr would list all 100 games): the agents, A's win rate, its
        wins-draws-losses and the number of games."""
        t = self.total
        return (f"MatchResult({self.agent_a!r} vs {self.agent_b!r}: win rate {self.win_rate:.3f}, "
                f"W-D-L {t.wins}-{t.draws}-{t.losses}, {t.games} games)")

    def swap(self) -> MatchResult:
        """The result from B's point of view: equals ``match(agent_b, agent_a)`` for
        deterministic agents (games reordered so that the new A's first-seat games come first)."""
        half = len(self.games) // 2
        games = tuple(g.swap() for g in self.games[half:] + self.games[:half])
        return MatchResult(agent_a=self.agent_b, agent_b=self.agent_a, a_first=self.b_first.swap(),
                           b_first=self.a_first.swap(), games=games)

    def to_dict(self, games: bool = True) -> dict:
        """JSON-ready summary (and, with ``games``, every game's record)."""
        out = {
            "agent_a": self.agent_a,
            "agent_b": self.agent_b,
            "win_rate": self.win_rate,
            "win_rate_a_first": self.win_rate_a_first,
            "win_rate_b_first": self.win_rate_b_first,
            "mean_length": self.mean_length,
            "total": self.total.to_dict(),
            "a_first": self.a_first.to_dict(),
            "b_first": self.b_first.to_dict(),
        }
        if games:
            out["games"] = [g.to_dict() for g in self.games]
        return out


# ---------------------------------------------------------------------------------------------
# Matches
# ---------------------------------------------------------------------------------------------


@jax.jit
def _play(agent_a, agent_b, states: env.EnvState, a_first: Array, key: Array) -> dict:
    traj = arena.rollout(agent_a, agent_b, states, a_first, key)
    return {"actions": traj.actions, "valid": traj.valid, "outcome_a": traj.outcome_a,
            "length": traj.final.num_moves}


def agent_name(agent) -> str:
    return str(getattr(agent, "name", type(agent).__name__))


def _protocol_states() -> tuple[env.EnvState, Array, np.ndarray]:
    """The 100 start states of a match (openings twice), A's seat per game, opening moves."""
    states, moves = _openings()
    both = jax.tree.map(lambda x: jnp.concatenate([x, x]), states)
    a_first = np.arange(GAMES_PER_MATCH) < NUM_OPENINGS
    return both, a_first, moves


def _result(out: dict, a_first: np.ndarray, moves: np.ndarray, name_a: str, name_b: str) -> MatchResult:
    """A MatchResult from the host copy of one match's ``_play`` output."""
    games = []
    for i in range(GAMES_PER_MATCH):
        opening = i % NUM_OPENINGS
        played = out["actions"][i][out["valid"][i]]
        games.append(GameRecord(
            opening=opening,
            a_first=bool(a_first[i]),
            moves=tuple(int(m) for m in moves[i % NUM_OPENINGS] if m >= 0) + tuple(int(m) for m in played),
            outcome_a=int(out["outcome_a"][i]),
            length=int(out["length"][i]),
        ))

    def seat(gs) -> SeatRecord:
        o = [g.outcome_a for g in gs]
        return SeatRecord(wins=o.count(1), draws=o.count(0), losses=o.count(-1))

    return MatchResult(agent_a=name_a, agent_b=name_b, a_first=seat(games[:NUM_OPENINGS]),
                       b_first=seat(games[NUM_OPENINGS:]), games=tuple(games))


@functools.lru_cache(maxsize=None)
def game_openings(game) -> tuple[np.ndarray, np.ndarray]:
    """The 50 openings of another game than Connect Four, as the thesis' protocol has them for
    Connect Four: the start position (``game.init(key(0))``) and 49 positions after two plies,
    every pair of first moves when the game has 49 (Checkers: 7 first moves, 7 replies to each),
    else 49 spread evenly over the pairs in order (repeated when there are fewer). Returns
    ``(moves int32[50, 2], a_to_move bool[50])``: the opening plies (``-1`` pads opening 0) and
    whether the player to move after them is the one who moved first."""
    start = game.init(jax.random.key(0))
    step = jax.jit(game.step)  # one compiled step: a game's step run op by op costs seconds per call
    pairs = []
    for a1 in np.flatnonzero(np.asarray(start.legal_action_mask)):
        after = step(start, jnp.int32(a1))
        if bool(after.terminated) or bool(after.truncated):
            continue
        pairs += [(int(a1), int(a2)) for a2 in np.flatnonzero(np.asarray(after.legal_action_mask))]
    if not pairs:
        raise ValueError(f"{game.id} has no two-ply openings: a match needs them")
    pick = np.linspace(0, len(pairs) - 1, NUM_OPENINGS - 1).round().astype(int) if len(pairs) != NUM_OPENINGS - 1 \
        else np.arange(NUM_OPENINGS - 1)
    moves = np.full((NUM_OPENINGS, 2), -1, np.int32)
    moves[1:] = [pairs[i] for i in pick]
    first = int(start.current_player)
    same = [True]
    for a1, a2 in moves[1:]:
        state = step(step(start, jnp.int32(a1)), jnp.int32(a2))
        same.append(int(state.current_player) == first)
    moves.setflags(write=False)
    return moves, np.asarray(same)


def _game_states(game, moves: Array) -> tuple:
    """The 100 start states of a match of ``game`` (the openings twice) from ``moves`` [50, 2]."""
    start = game.init(jax.random.key(0))

    def play(pair):
        s1 = game.step(start, jnp.maximum(pair[0], 0))
        s2 = game.step(s1, jnp.maximum(pair[1], 0))
        return jax.tree.map(lambda o, x: jnp.where(pair[0] < 0, o, x), start, s2)

    states = jax.vmap(play)(moves)
    return jax.tree.map(lambda x: jnp.concatenate([x, x]), states)


@functools.partial(jax.jit, static_argnames=("game", "compact"))
def _play_game(agent_a, agent_b, key: Array, moves: Array, a_to_move: Array, game, compact: bool = True) -> dict:
    """One match of ``game``; ``compact``: each agent is asked only where it is to move
    (``arena.rollout``'s ``compact``: a match of searches several times faster; off under ``vmap``)."""
    states = _game_states(game, moves)
    traj = arena.rollout(agent_a, agent_b, states, a_to_move, key, game=game, compact=compact)
    return {"actions": traj.actions, "valid": traj.valid, "outcome_a": traj.outcome_a, "length": traj.length}


def _game_seats(game) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(moves [50, 2], a_first bool[100], a_to_move bool[100])`` of a match of ``game``: A holds the
    first player's seat in games 0..49 and the second's in 50..99."""
    moves, same = game_openings(game)
    a_first = np.arange(GAMES_PER_MATCH) < NUM_OPENINGS
    return moves, a_first, np.where(np.concatenate([same, same]), a_first, ~a_first)


def _game_match(agent_a, agent_b, key: Array, game) -> MatchResult:
    """The 100 games of a match of ``game`` (:func:`game_openings`, each once per seat)."""
    moves, a_first, a_to_move = _game_seats(game)
    out = to_host(_play_game(agent_a, agent_b, key, jnp.asarray(moves), jnp.asarray(a_to_move), game))
    return _result(out, a_first, moves, agent_name(agent_a), agent_name(agent_b))


def match(agent_a, agent_b, key: Array, *, game=None) -> MatchResult:
    """Play the 100-game protocol match of ``agent_a`` against ``agent_b``.

    Args:
      agent_a, agent_b: agents (:mod:`c4jax.agents`); pass the same agent twice for a
        self-match.
      key: PRNG key for the agents' sampling (ignored by deterministic agents).
      game: the game (default: the agents' game, Connect Four). Connect Four plays the
        thesis' protocol (below); any other game the same protocol over its own 50 openings
        (:func:`game_openings`: the start position and its two-ply openings).

    Returns:
      MatchResult from A's point of view; game ``i < 50`` is opening ``i`` with A first,
      game ``50 + i`` is opening ``i`` with B first.
    """
    game = getattr(agent_a, "game", None) if game is None else game
    if game is not None and game.id != CONNECT_FOUR.id:
        return _game_match(agent_a, agent_b, key, game)
    both, a_first, moves = _protocol_states()
    out = to_host(_play(agent_a, agent_b, both, jnp.asarray(a_first), key))
    return _result(out, a_first, moves, agent_name(agent_a), agent_name(agent_b))


@functools.partial(jax.jit, static_argnames=("b_batched",))
def _play_many(agent_a, agent_b, states: env.EnvState, a_first: Array, keys: Array, b_batched: bool) -> dict:
    play = lambda a, b, k: _play(agent_a=a, agent_b=b, states=states, a_first=a_first, key=k)  # noqa: E731
    return jax.vmap(play, in_axes=(0, 0 if b_batched else None, 0))(agent_a, agent_b, keys)


def match_many(agent_a, agent_b, keys: Array, *, b_batched: bool = False, game=None) -> list[MatchResult]:
    """K protocol matches in one jitted, ``vmap``-ed call.

    ``agent_a`` is a *batched* agent: an agent pytree whose array leaves (a network's
    params) carry a leading axis of K, e.g. the K seeds of a ``--vmap-seeds`` run.
    Match ``k`` plays ``agent_a`` with leaf slice ``k`` against ``agent_b`` (batched
    the same way when ``b_batched``, else shared) with ``keys[k]``; it is the match
    ``match(slice_k(agent_a), agent_b, keys[k])`` would play, up to floating-point
    rounding of the batched network evaluation; for another game than Connect Four, stochastic
    agents sample with other keys than there (:func:`match` asks each agent only where it is to
    move, which a ``vmap`` cannot). ``game``: as :func:`match`'s.
    """
    keys = jnp.asarray(keys)
    if keys.ndim != 1:
        raise ValueError(f"match_many needs a 1-D array of K keys, got shape {keys.shape}")
    sizes = {x.shape[0] for x in jax.tree.leaves(agent_a)}
    if b_batched:
        sizes |= {x.shape[0] for x in jax.tree.leaves(agent_b)}
    if sizes != {keys.shape[0]}:
        raise ValueError(f"match_many: agents' leading axes {sorted(sizes)} do not match {keys.shape[0]} keys")
    name_a, name_b = agent_name(agent_a), agent_name(agent_b)
    game = getattr(agent_a, "game", None) if game is None else game
    if game is not None and game.id != CONNECT_FOUR.id:
        moves, a_first, a_to_move = _game_seats(game)
        out = to_host(_play_game_many(agent_a, agent_b, keys, jnp.asarray(moves), jnp.asarray(a_to_move), game,
                                      b_batched))
        return [_result({k: v[i] for k, v in out.items()}, a_first, moves, name_a, name_b)
                for i in range(keys.shape[0])]
    both, a_first, moves = _protocol_states()
    out = to_host(_play_many(agent_a, agent_b, both, jnp.asarray(a_first), keys, b_batched))
    return [_result({k: v[i] for k, v in out.items()}, a_first, moves, name_a, name_b)
            for i in range(keys.shape[0])]


@functools.partial(jax.jit, static_argnames=("game", "b_batched"))
def _play_game_many(agent_a, agent_b, keys: Array, moves: Array, a_to_move: Array, game, b_batched: bool) -> dict:
    play = lambda a, b, k: _play_game(a, b, k, moves, a_to_move, game, compact=False)  # noqa: E731
    return jax.vmap(play, in_axes=(0, 0 if b_batched else None, 0))(agent_a, agent_b, keys)


def win_rate(agent, opponent, key: Array) -> float:
    """``agent``'s protocol win rate against ``opponent``: ``match(agent, opponent, key).win_rate``."""
    return match(agent, opponent, key).win_rate


def match_from_dict(d: dict) -> MatchResult:
    """Inverse of :meth:`MatchResult.to_dict` (``games=True``)."""

    def seat(r):
        return SeatRecord(wins=int(r["wins"]), draws=int(r["draws"]), losses=int(r["losses"]))

    games = tuple(GameRecord(opening=int(g["opening"]), a_first=bool(g["a_first"]), moves=tuple(int(m) for m in g["moves"]),
                       outcome_a=int(g["outcome_a"]), length=int(g["length"])) for g in d.get("games", ()))
    return MatchResult(agent_a=str(d["agent_a"]), agent_b=str(d["agent_b"]), a_first=seat(d["a_first"]),
                       b_first=seat(d["b_first"]), games=games)
