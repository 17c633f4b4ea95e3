"""The tournament protocol of the thesis (design.md §9, thesis §5.1): a **match** between A and B is
100 games, the 50 openings (:func:`game_openings`) each played once with A and once with B as the
first player; A's win rate is ``(wins + 0.5 * draws) / games``. A match is one jitted call of
:func:`c4jax.agents.arena.rollout` with the agents as arguments (no re-trace for agents of a seen
type); under a mesh the games are split over its devices, with the same results.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from c4jax import games
from c4jax.agents import arena
from c4jax.io.devices import to_host

NUM_OPENINGS = 50  # the start position + 49 two-ply openings
GAMES_PER_MATCH = 2 * NUM_OPENINGS  # every opening once per seat


# --- openings -------------------------------------------------------------------------------------


def game_of(agent_a, game=None):
    """The game of a match: ``game`` when given, else ``agent_a.game``."""
    return agent_a.game if game is None else game


@functools.lru_cache(maxsize=None)
def game_openings(game) -> tuple[np.ndarray, np.ndarray]:
    """The 50 openings of ``game``'s protocol matches: the start position (``game.init(key(0))``) and
    49 two-ply openings: its kit's (:class:`c4jax.games.kit.MatchRules`), else 49 spread evenly over
    the pairs of first moves, in order. Returns read-only ``(moves int32[50, 2], a_to_move bool[50])``:
    the opening plies (``-1`` pads opening 0) and whether the first player is to move after them.
    ``ValueError`` for malformed kit openings or a game without two-ply openings. Cached, never tracers."""
    with jax.ensure_compile_time_eval():
        return _game_openings(game)


def _game_openings(game) -> tuple[np.ndarray, np.ndarray]:
    start = game.init(jax.random.key(0))
    step = jax.jit(game.step)  # one compiled step: a game's step run op by op costs seconds per call
    given = games.kit_of(game).match.openings
    if given is not None:
        pairs = [tuple(int(a) for a in pair) for pair in given]
        if len(pairs) != NUM_OPENINGS - 1 or any(len(pair) != 2 for pair in pairs):
            raise ValueError(f"{game.id}: its kit's openings must be {NUM_OPENINGS - 1} pairs of first moves")
        pick = np.arange(NUM_OPENINGS - 1)
    else:
        pairs = []
        for a1 in np.flatnonzero(np.asarray(start.legal_action_mask)):
            after = step(start, jnp.int32(a1))
            if bool(after.terminated) or bool(after.truncated):
                continue
            pairs += [(int(a1), int(a2)) for a2 in np.flatnonzero(np.asarray(after.legal_action_mask))]
        if not pairs:
            raise ValueError(f"{game.id} has no two-ply openings: a match needs them")
        pick = np.linspace(0, len(pairs) - 1, NUM_OPENINGS - 1).round().astype(int) \
            if len(pairs) != NUM_OPENINGS - 1 else np.arange(NUM_OPENINGS - 1)
    moves = np.full((NUM_OPENINGS, 2), -1, np.int32)
    moves[1:] = [pairs[i] for i in pick]
    first = int(start.current_player)
    same = [True]
    for a1, a2 in moves[1:]:
        state = step(step(start, jnp.int32(a1)), jnp.int32(a2))
        same.append(int(state.current_player) == first)
    moves.setflags(write=False)
    same = np.asarray(same)
    same.setflags(write=False)
    return moves, same


def opening_states(game, moves: Array) -> object:
    """The states [50] of ``game`` after the openings ``moves`` [50, 2] (``-1``: the start position)."""
    start = game.init(jax.random.key(0))

    def play(pair):
        s1 = game.step(start, jnp.maximum(pair[0], 0))
        s2 = game.step(s1, jnp.maximum(pair[1], 0))
        return jax.tree.map(lambda o, x: jnp.where(pair[0] < 0, o, x), start, s2)

    return jax.vmap(play)(moves)


@functools.lru_cache(maxsize=None)
def _opening_states(game) -> object:
    moves, _ = game_openings(game)
    # evaluated eagerly even when first called under a trace, so the cache never holds tracers
    with jax.ensure_compile_time_eval():
        return jax.jit(opening_states, static_argnums=0)(game, jnp.asarray(moves))


def openings(game) -> tuple[object, Array]:
    """``(states [50], moves int32[50, 2])`` of ``game``'s protocol openings (:func:`game_openings`; cached)."""
    return _opening_states(game), jnp.asarray(game_openings(game)[0])


# --- results --------------------------------------------------------------------------------------


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
    """The record of one game of a match, replayable with the game's ``step`` from its start over ``moves``."""

    opening: int  # index into openings(): 0 = the start position, 1 + k after the kit's k-th opening
    a_first: bool  # agent A is the first player (played the first move of ``moves``)
    moves: tuple[int, ...]  # every action played, opening moves included
    outcome_a: int  # +1 A won, 0 draw, -1 A lost
    length: int  # the game's match length (its kit's MatchRules.length; without one: the plies after the opening)

    def swap(self) -> GameRecord:
        """The same game with A and B exchanged."""
        return dataclasses.replace(self, a_first=not self.a_first, outcome_a=-self.outcome_a)

    def to_dict(self) -> dict:
        return {"opening": self.opening, "a_first": self.a_first, "moves": list(self.moves),
                "outcome_a": self.outcome_a, "length": self.length}


@dataclass(frozen=True)
class MatchResult:
    """A 100-game protocol match from A's point of view: ``games[:50]`` are the openings 0..49 with A
    first, ``games[50:]`` the same openings with B first."""

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
        """One line: the agents, A's win rate, W-D-L and the number of games."""
        t = self.total
        return (f"MatchResult({self.agent_a!r} vs {self.agent_b!r}: win rate {self.win_rate:.3f}, "
                f"W-D-L {t.wins}-{t.draws}-{t.losses}, {t.games} games)")

    def swap(self) -> MatchResult:
        """The result from B's point of view: ``match(agent_b, agent_a)`` for deterministic agents."""
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


# --- matches --------------------------------------------------------------------------------------


def agent_name(agent) -> str:
    return str(getattr(agent, "name", type(agent).__name__))


def match_states(game, moves: Array) -> object:
    """The 100 start states of a match of ``game``: the openings ``moves`` [50, 2] twice."""
    return jax.tree.map(lambda x: jnp.concatenate([x, x]), opening_states(game, moves))


def seats(game) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(moves [50, 2], a_first bool[100], a_to_move bool[100])`` of a match of ``game``: A is the first
    player in games 0..49; ``a_to_move``: A is to move after the opening."""
    moves, same = game_openings(game)
    a_first = np.arange(GAMES_PER_MATCH) < NUM_OPENINGS
    return moves, a_first, np.where(np.concatenate([same, same]), a_first, ~a_first)


def game_lengths(game, final, valid: Array) -> Array:
    """int32[B]: each finished game's reported length: the kit's ``match.length`` of its final state,
    else its plies after the opening (``valid`` bool[B, T])."""
    length = games.kit_of(game).match.length
    return jax.vmap(length)(final).astype(jnp.int32) if length is not None else valid.sum(axis=-1, dtype=jnp.int32)


@functools.partial(jax.jit, static_argnames=("game", "compact", "gather_searches"))
def _play_game(agent_a, agent_b, key: Array, moves: Array, a_to_move: Array, game, compact: bool = True,
               gather_searches: bool = False) -> dict:
    """One match of ``game``; ``compact`` and ``gather_searches`` are ``arena.rollout``'s (off under ``vmap``)."""
    states = match_states(game, moves)
    traj = arena.rollout(agent_a, agent_b, states, a_to_move, key, game=game, compact=compact,
                         gather_searches=gather_searches)
    return {"actions": traj.actions, "valid": traj.valid, "outcome_a": traj.outcome_a,
            "length": game_lengths(game, traj.final, traj.valid)}


def match_result(out: dict, a_first: np.ndarray, moves: np.ndarray, name_a: str, name_b: str) -> MatchResult:
    """A MatchResult from the host copy of one match: ``actions``, ``valid`` [100, T], ``outcome_a``, ``length`` [100]."""
    return result_of_games([game_record(out, i, a_first, moves) for i in range(GAMES_PER_MATCH)], name_a, name_b)


def game_record(out: dict, i: int, a_first: np.ndarray, moves: np.ndarray) -> GameRecord:
    """The record of game ``i`` of a match from the host copy of its games (:func:`match_result`)."""
    played = out["actions"][i][out["valid"][i]]
    return GameRecord(
        opening=i % NUM_OPENINGS,
        a_first=bool(a_first[i]),
        moves=tuple(int(m) for m in moves[i % NUM_OPENINGS] if m >= 0) + tuple(int(m) for m in played),
        outcome_a=int(out["outcome_a"][i]),
        length=int(out["length"][i]),
    )


def result_of_games(records, name_a: str, name_b: str) -> MatchResult:
    """The MatchResult of a match's 100 game records (A first in the first 50); ``ValueError`` otherwise."""
    records = tuple(records)
    if len(records) != GAMES_PER_MATCH:
        raise ValueError(f"a match has {GAMES_PER_MATCH} games, got {len(records)}")

    def seat(gs) -> SeatRecord:
        o = [g.outcome_a for g in gs]
        return SeatRecord(wins=o.count(1), draws=o.count(0), losses=o.count(-1))

    return MatchResult(agent_a=name_a, agent_b=name_b, a_first=seat(records[:NUM_OPENINGS]),
                       b_first=seat(records[NUM_OPENINGS:]), games=records)


def match(agent_a, agent_b, key: Array, *, game=None) -> MatchResult:
    """The 100-game protocol match of ``agent_a`` against ``agent_b`` (the same agent twice for a
    self-match), from A's point of view; ``key`` for the agents' sampling, ``game`` default
    ``agent_a.game``."""
    game = game_of(agent_a, game)
    moves, a_first, a_to_move = seats(game)
    out = to_host(_play_game(agent_a, agent_b, key, jnp.asarray(moves), jnp.asarray(a_to_move), game,
                             games.kit_of(game).match.compact, gather_searches=True))
    return match_result(out, a_first, moves, agent_name(agent_a), agent_name(agent_b))


def match_many(agent_a, agent_b, keys: Array, *, b_batched: bool = False, game=None) -> list[MatchResult]:
    """K protocol matches in one jitted, ``vmap``-ed call.

    ``agent_a``'s array leaves carry a leading axis of K (``agent_b``'s too when ``b_batched``); match
    ``k`` plays slice ``k`` with ``keys[k]``: :func:`match`'s games up to float rounding (stochastic
    agents of a game with compact matches sample other games). ``ValueError`` for mismatched K.
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
    game = game_of(agent_a, game)
    moves, a_first, a_to_move = seats(game)
    out = to_host(_play_game_many(agent_a, agent_b, keys, jnp.asarray(moves), jnp.asarray(a_to_move), game,
                                  b_batched))
    return [match_result({k: v[i] for k, v in out.items()}, a_first, moves, name_a, name_b)
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

    games_ = tuple(game_from_dict(g) for g in d.get("games", ()))
    return MatchResult(agent_a=str(d["agent_a"]), agent_b=str(d["agent_b"]), a_first=seat(d["a_first"]),
                       b_first=seat(d["b_first"]), games=games_)


def game_from_dict(d: dict) -> GameRecord:
    """Inverse of :meth:`GameRecord.to_dict`."""
    return GameRecord(opening=int(d["opening"]), a_first=bool(d["a_first"]), moves=tuple(int(m) for m in d["moves"]),
                      outcome_a=int(d["outcome_a"]), length=int(d["length"]))
