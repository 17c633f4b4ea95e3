"""Evaluation of agents with the tournament protocol of the thesis (SPEC §9, thesis §5.1).

A **match** between agents A and B is 100 games. There are 50 openings: the empty
board and the 49 boards after every pair ``(c1, c2)`` of first moves (``c1`` by the
first player, ``c2`` by the second). Each opening is played twice, once with A as
the first player (A moves first from the empty board; after ``(c1, c2)`` the stone
``c1`` is A's and A is to move) and once with B as the first player. From the
opening on, both agents play their own policies. A's win rate is
``(wins + 0.5 * draws) / games``, and is reported overall and per seat (A first,
B first).

All 100 games run in one jitted call of :func:`c4jax.selfplay.rollout` with the
agents passed as arguments, so a match between agents of already-seen types (for a
network agent: the same architecture, any weights) does not re-trace.

A **tournament** (:func:`round_robin`) plays one match between every unordered pair
of agents (``match`` already plays both seats) and gives the thesis' tables:
Table 5.2 (win rate of the row agent when it plays first), Table 5.3 (ranking by
mean win rate), Table 5.4 (mean game length). :func:`time_decisions` measures
Table 5.1 (seconds per decision). Ratings are in :mod:`c4jax.ratings`.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import json
import math
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from c4jax import env, selfplay

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
class Game:
    """One game of a match, replayable with ``env.step`` from ``env.init()`` over ``moves``."""

    opening: int  # index into openings(): 0 = empty board, 1 + 7*c1 + c2
    a_first: bool  # agent A is the first player (played the first stone of ``moves``)
    moves: tuple[int, ...]  # every column played, opening moves included
    outcome_a: int  # +1 A won, 0 draw, -1 A lost
    length: int  # stones on the final board (== len(moves) unless the last move was illegal)

    def swap(self) -> Game:
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
    games: tuple[Game, ...]  # [100]

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
    traj = selfplay.rollout(agent_a, agent_b, states, a_first, key)
    return {"actions": traj.actions, "valid": traj.valid, "outcome_a": traj.outcome_a,
            "length": traj.final.num_moves}


def _agent_name(agent) -> str:
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
        games.append(Game(
            opening=opening,
            a_first=bool(a_first[i]),
            moves=tuple(int(m) for m in moves[opening] if m >= 0) + tuple(int(m) for m in played),
            outcome_a=int(out["outcome_a"][i]),
            length=int(out["length"][i]),
        ))

    def seat(gs) -> SeatRecord:
        o = [g.outcome_a for g in gs]
        return SeatRecord(wins=o.count(1), draws=o.count(0), losses=o.count(-1))

    return MatchResult(agent_a=name_a, agent_b=name_b, a_first=seat(games[:NUM_OPENINGS]),
                       b_first=seat(games[NUM_OPENINGS:]), games=tuple(games))


def match(agent_a, agent_b, key: Array) -> MatchResult:
    """Play the 100-game protocol match of ``agent_a`` against ``agent_b``.

    Args:
      agent_a, agent_b: agents (:mod:`c4jax.agents`); pass the same agent twice for a
        self-match.
      key: PRNG key for the agents' sampling (ignored by deterministic agents).

    Returns:
      MatchResult from A's point of view; game ``i < 50`` is opening ``i`` with A first,
      game ``50 + i`` is opening ``i`` with B first.
    """
    both, a_first, moves = _protocol_states()
    out = jax.device_get(_play(agent_a, agent_b, both, jnp.asarray(a_first), key))
    return _result(out, a_first, moves, _agent_name(agent_a), _agent_name(agent_b))


@functools.partial(jax.jit, static_argnames=("b_batched",))
def _play_many(agent_a, agent_b, states: env.EnvState, a_first: Array, keys: Array, b_batched: bool) -> dict:
    play = lambda a, b, k: _play(agent_a=a, agent_b=b, states=states, a_first=a_first, key=k)  # noqa: E731
    return jax.vmap(play, in_axes=(0, 0 if b_batched else None, 0))(agent_a, agent_b, keys)


def match_many(agent_a, agent_b, keys: Array, *, b_batched: bool = False) -> list[MatchResult]:
    """K protocol matches in one jitted, ``vmap``-ed call.

    ``agent_a`` is a *batched* agent: an agent pytree whose array leaves (a network's
    params) carry a leading axis of K, e.g. the K seeds of a ``--vmap-seeds`` run.
    Match ``k`` plays ``agent_a`` with leaf slice ``k`` against ``agent_b`` (batched
    the same way when ``b_batched``, else shared) with ``keys[k]``; it is the match
    ``match(slice_k(agent_a), agent_b, keys[k])`` would play, up to floating-point
    rounding of the batched network evaluation.
    """
    keys = jnp.asarray(keys)
    if keys.ndim != 1:
        raise ValueError(f"match_many needs a 1-D array of K keys, got shape {keys.shape}")
    sizes = {x.shape[0] for x in jax.tree.leaves(agent_a)}
    if b_batched:
        sizes |= {x.shape[0] for x in jax.tree.leaves(agent_b)}
    if sizes != {keys.shape[0]}:
        raise ValueError(f"match_many: agents' leading axes {sorted(sizes)} do not match {keys.shape[0]} keys")
    both, a_first, moves = _protocol_states()
    out = jax.device_get(_play_many(agent_a, agent_b, both, jnp.asarray(a_first), keys, b_batched))
    name_a, name_b = _agent_name(agent_a), _agent_name(agent_b)
    return [_result({k: v[i] for k, v in out.items()}, a_first, moves, name_a, name_b)
            for i in range(keys.shape[0])]


def win_rate(agent, opponent, key: Array) -> float:
    """``agent``'s protocol win rate against ``opponent``: ``match(agent, opponent, key).win_rate``."""
    return match(agent, opponent, key).win_rate


def match_from_dict(d: dict) -> MatchResult:
    """Inverse of :meth:`MatchResult.to_dict` (``games=True``)."""

    def seat(r):
        return SeatRecord(wins=int(r["wins"]), draws=int(r["draws"]), losses=int(r["losses"]))

    games = tuple(Game(opening=int(g["opening"]), a_first=bool(g["a_first"]), moves=tuple(int(m) for m in g["moves"]),
                       outcome_a=int(g["outcome_a"]), length=int(g["length"])) for g in d.get("games", ()))
    return MatchResult(agent_a=str(d["agent_a"]), agent_b=str(d["agent_b"]), a_first=seat(d["a_first"]),
                       b_first=seat(d["b_first"]), games=games)


# ---------------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------------

MISSING = "–"


def _is_missing(v) -> bool:
    return v is None or (isinstance(v, (float, np.floating)) and math.isnan(v))


@dataclass(frozen=True)
class Table:
    """A small host-side table, written as markdown (reports) and CSV (analysis).

    ``rows`` hold raw values (str, int, float; ``None`` or ``nan`` = no value, shown as
    ``–`` in markdown and left empty in CSV). ``formats`` gives one format spec per
    column for markdown (``""``: ``str``); CSV keeps full precision.
    """

    name: str  # file stem, e.g. "table_5_2_first_player"
    title: str
    header: tuple[str, ...]
    rows: tuple[tuple, ...]
    formats: tuple[str, ...] = ()
    note: str = ""

    def _cell(self, v, fmt: str) -> str:
        if _is_missing(v):
            return MISSING
        if fmt and isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
            return format(v, fmt)
        return str(v).replace("|", "\\|")

    def to_markdown(self, title: bool = True) -> str:
        fmts = self.formats or ("",) * len(self.header)
        numeric = [any(isinstance(r[c], (int, float, np.integer, np.floating)) and not isinstance(r[c], bool)
                       for r in self.rows) for c in range(len(self.header))]
        lines = [f"### {self.title}", ""] if title else []
        lines.append("| " + " | ".join(h.replace("|", "\\|") for h in self.header) + " |")
        lines.append("| " + " | ".join("---:" if num else "---" for num in numeric) + " |")
        for r in self.rows:
            lines.append("| " + " | ".join(self._cell(v, f) for v, f in zip(r, fmts)) + " |")
        if self.note and title:
            lines += ["", self.note]
        return "\n".join(lines) + "\n"

    def to_csv(self, path: str | os.PathLike) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(self.header)
            for r in self.rows:
                w.writerow(["" if _is_missing(v) else (repr(float(v)) if isinstance(v, (float, np.floating)) else v)
                            for v in r])
        return path

    def to_dict(self) -> dict:
        return {"name": self.name, "title": self.title, "header": list(self.header),
                "rows": [[None if _is_missing(v) else (v.item() if isinstance(v, np.generic) else v) for v in r]
                         for r in self.rows]}


# ---------------------------------------------------------------------------------------------
# Round-robin tournament (thesis §5.2, Tables 5.2-5.4)
# ---------------------------------------------------------------------------------------------


def resolve_agents(agent_list: Sequence, names: Sequence[str] | None = None) -> tuple[list, list[str]]:
    """Agents (``agents.load`` for strings, all loaded before anything is played) and unique labels.

    Raises ``ValueError`` for an unknown name (listing the known ones) and for duplicate labels.
    """
    from c4jax import agents as registry

    loaded = [registry.load(a) if isinstance(a, str) else a for a in agent_list]
    labels = [str(n) for n in names] if names is not None else [_agent_name(a) for a in loaded]
    if len(labels) != len(loaded):
        raise ValueError(f"{len(loaded)} agents but {len(labels)} names")
    dup = sorted({n for n in labels if labels.count(n) > 1})
    if dup:
        raise ValueError(f"agents listed twice: {', '.join(dup)} (every tournament entry needs its own name)")
    return loaded, labels


@dataclass(frozen=True)
class Tournament:
    """All matches of a tournament, host side, and the thesis' tables computed from them.

    ``matches`` holds at most one :class:`MatchResult` per unordered pair of distinct
    agents (either orientation; 100 games, both seats). Pairs that never met show as
    ``–``. ``self_matches`` (optional, agent against itself) only fill the diagonal of
    the game-length table; they never count in win rates, rankings or ratings.
    """

    names: tuple[str, ...]
    matches: tuple[MatchResult, ...]
    self_matches: tuple[MatchResult, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "names", tuple(self.names))
        object.__setattr__(self, "matches", tuple(self.matches))
        object.__setattr__(self, "self_matches", tuple(self.self_matches))
        if len(set(self.names)) != len(self.names):
            raise ValueError(f"duplicate agent names in {self.names}")
        pos = {n: i for i, n in enumerate(self.names)}
        index: dict[tuple[int, int], tuple[MatchResult, bool]] = {}
        for m in self.matches:
            if m.agent_a not in pos or m.agent_b not in pos:
                raise ValueError(f"match {m.agent_a} vs {m.agent_b}: agent not in {self.names}")
            i, j = pos[m.agent_a], pos[m.agent_b]
            if i == j:
                raise ValueError(f"{m.agent_a} against itself belongs in self_matches")
            if (i, j) in index:
                raise ValueError(f"{m.agent_a} and {m.agent_b} met twice")
            index[i, j], index[j, i] = (m, False), (m, True)
        for m in self.self_matches:
            if m.agent_a != m.agent_b or m.agent_a not in pos:
                raise ValueError(f"self match {m.agent_a} vs {m.agent_b} is not an agent against itself")
            index[pos[m.agent_a], pos[m.agent_a]] = (m, False)
        object.__setattr__(self, "_index", index)

    # --- access --------------------------------------------------------------------------------

    @property
    def n(self) -> int:
        return len(self.names)

    def _i(self, agent: int | str) -> int:
        if isinstance(agent, str):
            try:
                return self.names.index(agent)
            except ValueError:
                raise KeyError(f"no agent {agent!r} in {self.names}") from None
        return int(agent)

    def result(self, a: int | str, b: int | str) -> MatchResult | None:
        """The match of ``a`` against ``b`` from ``a``'s point of view (``None``: never met)."""
        hit = self._index.get((self._i(a), self._i(b)))
        if hit is None:
            return None
        m, swapped = hit
        return m.swap() if swapped else m

    def _matrix(self, value, diagonal: bool = False) -> np.ndarray:
        out = np.full((self.n, self.n), np.nan)
        for i in range(self.n):
            for j in range(self.n):
                if i != j or diagonal:
                    m = self.result(i, j)
                    if m is not None:
                        out[i, j] = value(m)
        return out

    def first_player_matrix(self) -> np.ndarray:
        """Table 5.2: ``T[i, j]`` = win rate of agent i in the 50 games where i plays first
        against j (``nan`` on the diagonal and for pairs that never met).

        ``T[j, i]`` is j's first-player win rate against i, so i's overall win rate
        against j is ``(T[i, j] + 1 - T[j, i]) / 2``.
        """
        return self._matrix(lambda m: m.win_rate_a_first)

    def win_rate_matrix(self) -> np.ndarray:
        """``W[i, j]``: win rate of i against j over all 100 games (``W + W.T == 1`` off the diagonal)."""
        return self._matrix(lambda m: m.win_rate)

    def length_matrix(self) -> np.ndarray:
        """Table 5.4: mean game length (stones on the final board, openings included) of the
        100 games between i and j (symmetric); the diagonal holds self matches, if played."""
        return self._matrix(lambda m: m.mean_length, diagonal=True)

    def score_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """``wins[i, j]``: games i won against j; ``draws[i, j]`` (symmetric): drawn games."""
        wins = np.zeros((self.n, self.n), np.int64)
        draws = np.zeros((self.n, self.n), np.int64)
        for i in range(self.n):
            for j in range(self.n):
                m = self.result(i, j) if i != j else None
                if m is not None:
                    wins[i, j], draws[i, j] = m.wins, m.draws
        return wins, draws

    def games(self) -> Iterator[tuple[int, int, Game]]:
        """Every game between distinct agents once: ``(i, j, game)`` with the game from i's point of view."""
        pos = {n: k for k, n in enumerate(self.names)}
        for m in self.matches:
            for g in m.games:
                yield pos[m.agent_a], pos[m.agent_b], g

    def record(self, agent: int | str) -> SeatRecord:
        """All of an agent's games against the others."""
        i = self._i(agent)
        total = SeatRecord(0, 0, 0)
        for j in range(self.n):
            m = self.result(i, j) if j != i else None
            if m is not None:
                total = total + m.total
        return total

    def ranking(self) -> list[dict]:
        """Table 5.3: agents by mean win rate, the mean over opponents met of the 100-game win
        rate (best first; ties by name). Also the means as first and as second player."""
        wr, first = self.win_rate_matrix(), self.first_player_matrix()
        second = 1.0 - first.T  # i's win rate as second player against j = 1 - T[j, i]
        rows = []
        for i, name in enumerate(self.names):
            met = ~np.isnan(wr[i])
            rec = self.record(i)
            rows.append({
                "agent": name,
                "mean_win_rate": float(wr[i, met].mean()) if met.any() else float("nan"),
                "mean_first": float(first[i, met].mean()) if met.any() else float("nan"),
                "mean_second": float(second[i, met].mean()) if met.any() else float("nan"),
                "opponents": int(met.sum()),
                "wins": rec.wins, "draws": rec.draws, "losses": rec.losses, "games": rec.games,
            })
        rows.sort(key=lambda r: (-r["mean_win_rate"] if not math.isnan(r["mean_win_rate"]) else math.inf, r["agent"]))
        for k, r in enumerate(rows, 1):
            r["rank"] = k
        return rows

    # --- tables --------------------------------------------------------------------------------

    def table_5_2(self) -> Table:
        t = self.first_player_matrix()
        rows = tuple((a,) + tuple(float(x) for x in t[i]) for i, a in enumerate(self.names))
        return Table(
            name="table_5_2_first_player",
            title="Table 5.2: win rate of the row agent when it plays first",
            header=("row (first) \\ column",) + self.names,
            rows=rows,
            formats=("",) + (".2f",) * self.n,
            note=(f"{NUM_OPENINGS} games per cell (the {NUM_OPENINGS} openings, row agent first); "
                  "win rate = (wins + 0.5 draws) / games. The row agent's overall win rate against "
                  "the column agent is (T[row][col] + 1 - T[col][row]) / 2."),
        )

    def table_5_3(self) -> Table:
        rows = tuple((r["rank"], r["agent"], r["mean_win_rate"], r["mean_first"], r["mean_second"], r["opponents"],
                      r["wins"], r["draws"], r["losses"], r["games"]) for r in self.ranking())
        return Table(
            name="table_5_3_ranking",
            title="Table 5.3: ranking by mean win rate",
            header=("rank", "agent", "mean win rate", "as first", "as second", "opponents", "wins", "draws",
                    "losses", "games"),
            rows=rows,
            formats=("d", "", ".3f", ".3f", ".3f", "d", "d", "d", "d", "d"),
            note=(f"Mean over opponents of the {GAMES_PER_MATCH}-game win rate (both seats); "
                  "'as first' / 'as second': the same mean over the 50 games of each seat."),
        )

    def table_5_4(self) -> Table:
        lengths = self.length_matrix()
        rows = tuple((a,) + tuple(float(x) for x in lengths[i]) for i, a in enumerate(self.names))
        diag = "the diagonal is each agent against itself" if self.self_matches else "no self matches were played"
        return Table(
            name="table_5_4_game_length",
            title="Table 5.4: mean game length",
            header=("agent",) + self.names,
            rows=rows,
            formats=("",) + (".1f",) * self.n,
            note=(f"Stones on the final board (the two opening stones included), mean of the "
                  f"{GAMES_PER_MATCH} games of each match, so the table is symmetric; {diag}."),
        )

    def tables(self) -> list[Table]:
        return [self.table_5_2(), self.table_5_3(), self.table_5_4()]

    def to_markdown(self) -> str:
        """Tables 5.2-5.4 as markdown."""
        return "\n".join(t.to_markdown() for t in self.tables())

    def to_csv(self, directory: str | os.PathLike) -> list[Path]:
        """Write ``<table name>.csv`` for Tables 5.2-5.4 into ``directory``; returns the paths."""
        return [t.to_csv(Path(directory) / f"{t.name}.csv") for t in self.tables()]

    # --- JSON ----------------------------------------------------------------------------------

    def to_dict(self, games: bool = True) -> dict:
        """Everything, JSON-ready: names, every match (with every game's moves), the tables."""
        return {
            "names": list(self.names),
            "matches": [m.to_dict(games=games) for m in self.matches],
            "self_matches": [m.to_dict(games=games) for m in self.self_matches],
            "tables": {t.name: t.to_dict() for t in self.tables()},
        }

    @classmethod
    def from_dict(cls, d: dict) -> Tournament:
        return cls(names=tuple(d["names"]), matches=tuple(match_from_dict(m) for m in d["matches"]),
                   self_matches=tuple(match_from_dict(m) for m in d.get("self_matches", ())))

    def save_json(self, path: str | os.PathLike, **extra: Any) -> Path:
        """Write :meth:`to_dict` (plus ``extra`` top-level entries) to ``path``."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**extra, **self.to_dict()}, indent=1, allow_nan=False, default=_json_default))
        return path

    @classmethod
    def load_json(cls, path: str | os.PathLike) -> Tournament:
        return cls.from_dict(json.loads(Path(path).read_text()))


def _json_default(x):
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, Path):
        return str(x)
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def round_robin(agent_list: Sequence, key: Array, *, progress: bool = True, self_play: bool = False,
                names: Sequence[str] | None = None) -> Tournament:
    """Play one protocol :func:`match` (100 games, both seats) between every unordered pair.

    Args:
      agent_list: agents, or names for ``agents.load`` (``"2steplA"``, ``"supervised:sto"``,
        a checkpoint path, ...). All are loaded before the first game, so an unknown name
        fails fast. A stochastic agent listed as ``x:sto`` and ``x:det`` plays as two entries.
      key: PRNG key; match (i, j) uses ``fold_in(fold_in(key, i), j)``, so a tournament is
        reproducible for a given agent order.
      progress: a tqdm bar over matches.
      self_play: also play every agent against itself; those games only fill the diagonal
        of the game-length table (Table 5.4).
      names: labels for the entries (default: each agent's ``name``; must be unique).

    Returns:
      Tournament with the matches ``(i, j)``, ``i < j``, agent ``i`` as A.
    """
    from tqdm.auto import tqdm

    loaded, labels = resolve_agents(agent_list, names)
    if len(loaded) < 2:
        raise ValueError(f"a tournament needs at least two agents, got {labels}")
    n = len(loaded)
    jobs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    if self_play:
        jobs += [(i, i) for i in range(n)]
    matches, self_matches = [], []
    with tqdm(jobs, desc="tournament", unit="match", disable=not progress, dynamic_ncols=True) as bar:
        for i, j in bar:
            bar.set_postfix_str(f"{labels[i]} vs {labels[j]}", refresh=False)
            m = match(loaded[i], loaded[j], jax.random.fold_in(jax.random.fold_in(key, i), j))
            m = dataclasses.replace(m, agent_a=labels[i], agent_b=labels[j])
            (matches if i != j else self_matches).append(m)
    return Tournament(names=tuple(labels), matches=tuple(matches), self_matches=tuple(self_matches))


# ---------------------------------------------------------------------------------------------
# Decision timing (thesis Table 5.1)
# ---------------------------------------------------------------------------------------------

REFERENCES = ("1steplA", "2steplA")  # the agents Table 5.1's speed-ups are relative to


@jax.jit
def _decide(agent, boards: Array, key: Array) -> Array:
    return agent.act(boards, key)


@functools.partial(jax.jit, static_argnums=1)
def random_boards(key: Array, batch: int) -> Array:
    """int8[batch, 6, 7]: SPEC §3 random non-terminal positions (``env.random_initial_state``),
    from the mover's point of view."""
    states = jax.vmap(env.random_initial_state)(jax.random.split(key, batch))
    return jax.vmap(env.observe)(states)


@dataclass(frozen=True)
class DecisionTime:
    """Measured wall-clock seconds of single jitted ``act`` calls of one agent."""

    agent: str
    batch: int
    single: tuple[float, ...]  # seconds per call on one board (batch 1)
    batched: tuple[float, ...]  # seconds per call on ``batch`` boards

    @property
    def single_s(self) -> float:
        """Median seconds per decision at batch 1."""
        return statistics.median(self.single)

    @property
    def batched_call_s(self) -> float:
        """Median seconds per call at ``batch``."""
        return statistics.median(self.batched)

    @property
    def batched_s(self) -> float:
        """Median seconds per decision at ``batch`` (call time / batch)."""
        return self.batched_call_s / self.batch

    def to_dict(self) -> dict:
        return {"agent": self.agent, "batch": self.batch, "single_s": self.single_s,
                "batched_call_s": self.batched_call_s, "batched_s": self.batched_s,
                "single_samples": list(self.single), "batched_samples": list(self.batched)}


@dataclass(frozen=True)
class Timing:
    """Table 5.1: seconds per decision of every agent, and speed-ups over the references."""

    entries: tuple[DecisionTime, ...]
    batch: int
    references: tuple[str, ...]  # labels of the reference entries (1StepLA, 2StepLA)
    added: tuple[str, ...] = ()  # references timed although not in the agent list
    device: str = ""
    python_references: tuple[str, ...] = ()  # labels of plain-Python lookahead entries (c4jax.reference)

    def entry(self, agent: str) -> DecisionTime:
        for e in self.entries:
            if e.agent == agent:
                return e
        raise KeyError(f"no timing for {agent!r}; timed: {[e.agent for e in self.entries]}")

    def speedup(self, agent: str, reference: str, batched: bool = False) -> float:
        """``time(reference) / time(agent)`` per decision: > 1 when ``agent`` decides faster."""
        a, r = self.entry(agent), self.entry(reference)
        return r.batched_s / a.batched_s if batched else r.single_s / a.single_s

    def table(self) -> Table:
        refs = self.references
        header = ("agent", "s/decision (batch 1)", f"s/decision (batch {self.batch})",
                  f"decisions/s (batch {self.batch})")
        header += tuple(f"{r} time / agent time (batch 1)" for r in refs)
        header += tuple(f"{r} time / agent time (batch {self.batch})" for r in refs)
        py = self.python_references
        header += tuple(f"{r} time / agent time (batch 1)" for r in py)
        rows = []
        for e in self.entries:
            label = e.agent + (" (reference)" if e.agent in self.added else "")
            rows.append((label, e.single_s, e.batched_s, 1.0 / e.batched_s)
                        + tuple(self.speedup(e.agent, r) for r in refs)
                        + tuple(self.speedup(e.agent, r, batched=True) for r in refs)
                        + tuple(self.speedup(e.agent, r) for r in py))
        py_note = ""
        if py:
            n_py = self.entry(py[0])
            py_note = (f" The plain-Python rows are `c4jax.reference.act` (nested lists and recursion, one board "
                       f"per call, the thesis' kind of implementation; the same moves as the jitted lookahead): "
                       f"median of {len(n_py.single)} calls at batch 1, and a Python loop over {n_py.batch} boards "
                       f"in the batched column.")
        return Table(
            name="table_5_1_timing",
            title="Table 5.1: time to choose an action",
            header=header,
            rows=tuple(rows),
            formats=("", ".2e", ".2e", ",.0f") + (".3g",) * (2 * len(refs) + len(py)),
            note=(f"One jitted `act` call as a caller makes it (dispatch included), compile excluded, median of "
                  f"{len(self.entries[0].single) if self.entries else 0} calls at batch 1 and "
                  f"{len(self.entries[0].batched) if self.entries else 0} at batch {self.batch} (agents "
                  "interleaved), on SPEC §3 random non-terminal boards" + (f", {self.device}" if self.device else "")
                  + ". 'X time / agent time' > 1: the agent decides faster than X (thesis, batch 1 on a laptop: "
                  "trained agents ≈20× faster than 1StepLA and ≈70× faster than 2StepLA)." + py_note),
        )

    def to_dict(self) -> dict:
        return {"batch": self.batch, "references": list(self.references), "added": list(self.added),
                "python_references": list(self.python_references),
                "device": self.device, "entries": [e.to_dict() for e in self.entries],
                "table": self.table().to_dict()}


def time_decisions(agent_list: Sequence, key: Array, *, batch: int = 4096, repeats: int = 101,
                   batched_repeats: int = 5, names: Sequence[str] | None = None,
                   references: Sequence[str] = REFERENCES, python_lookahead: Sequence[int] = (1, 2),
                   python_boards: int = 32, progress: bool = False) -> Timing:
    """Measure Table 5.1: seconds per decision at batch 1 and at ``batch``.

    Every agent's ``act`` runs jitted (agent as an argument) on SPEC §3 random
    non-terminal boards: one warm-up call per shape (compilation excluded), then
    ``repeats`` timed calls on single boards (cycling through 16 boards) and
    ``batched_repeats`` on ``batch`` boards, each ended by ``block_until_ready``, with
    the agents interleaved call by call so that load drifts of a shared machine hit
    all of them alike. Reported: medians. The ``references`` (loaded by name) are timed
    too when not in the list, so that every speed-up column exists.

    ``python_lookahead``: depths N of the plain-Python lookahead (:mod:`c4jax.reference`,
    the thesis' kind of baseline) timed as extra rows ``"<N>steplA (plain Python)"``:
    ``repeats`` single-board calls (interleaved with the others) and one loop over
    ``python_boards`` boards as its "batched" time per decision.
    """
    from c4jax import reference
    from c4jax import agents as registry
    from tqdm.auto import tqdm

    loaded, labels = resolve_agents(agent_list, names)
    ref_labels, added = [], []
    for ref in references:
        ref_agent = registry.load(ref)
        label = _agent_name(ref_agent)
        if label not in labels:
            loaded.append(ref_agent)
            labels.append(label)
            added.append(label)
        ref_labels.append(label)
    board_key, act_key = jax.random.split(key)
    boards = random_boards(board_key, max(batch, 16))
    singles = [jax.block_until_ready(boards[k : k + 1]) for k in range(16)]
    big = jax.block_until_ready(boards[:batch])
    for a in loaded:  # compile and warm up both shapes
        for b in (singles[0], big):
            _decide(a, b, act_key).block_until_ready()
            _decide(a, b, act_key).block_until_ready()
    np_singles = [np.asarray(b[0]) for b in singles]
    py_single: list[list[float]] = [[] for _ in python_lookahead]
    single: list[list[float]] = [[] for _ in loaded]
    batched: list[list[float]] = [[] for _ in loaded]
    total = repeats + batched_repeats
    with tqdm(total=total, desc="timing", unit="round", disable=not progress, dynamic_ncols=True) as bar:
        for r in range(repeats):
            for k, a in enumerate(loaded):
                t0 = time.perf_counter()
                _decide(a, singles[r % 16], act_key).block_until_ready()
                single[k].append(time.perf_counter() - t0)
            for k, n in enumerate(python_lookahead):
                board = np_singles[r % 16]
                t0 = time.perf_counter()
                reference.act(board, n)
                py_single[k].append(time.perf_counter() - t0)
            bar.update()
        for _ in range(batched_repeats):
            for k, a in enumerate(loaded):
                t0 = time.perf_counter()
                _decide(a, big, act_key).block_until_ready()
                batched[k].append(time.perf_counter() - t0)
            bar.update()
    py_entries = []
    np_boards = np.asarray(boards[:python_boards])
    for n, s_times in zip(python_lookahead, py_single):
        t0 = time.perf_counter()
        for b in np_boards:
            reference.act(b, n)
        py_entries.append(DecisionTime(agent=f"{n}steplA (plain Python)", batch=len(np_boards), single=tuple(s_times),
                                       batched=(time.perf_counter() - t0,)))
    return Timing(
        entries=tuple(DecisionTime(agent=l, batch=batch, single=tuple(s), batched=tuple(b))
                      for l, s, b in zip(labels, single, batched)) + tuple(py_entries),
        batch=batch, references=tuple(ref_labels), added=tuple(added),
        device=device_description(), python_references=tuple(e.agent for e in py_entries),
    )


def device_description() -> str:
    """The JAX device the measurements ran on, e.g. ``cpu (x86_64, 2 cores)``."""
    import platform

    dev = jax.devices()[0]
    if dev.platform == "cpu":
        return f"cpu ({platform.machine()}, {os.cpu_count()} cores)"
    return f"{dev.platform} ({getattr(dev, 'device_kind', '')})"
