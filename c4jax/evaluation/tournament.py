"""Round-robin tournament of the thesis (§5.2): every pair plays one protocol match; Tables 5.2-5.4."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import jax
import numpy as np
from jax import Array

from c4jax import games
from c4jax.agents import registry
from c4jax.evaluation import lockstep
from c4jax.evaluation.field import default_agents  # noqa: F401
from c4jax.io import devices as devs
from c4jax.io.progress import bar as progress_bar
from c4jax.evaluation.protocol import (
    GAMES_PER_MATCH,
    NUM_OPENINGS,
    GameRecord,
    MatchResult,
    SeatRecord,
    agent_name,
    match,
    match_from_dict,
)
from c4jax.io.jsonutil import json_default
from c4jax.io.tables import Table


def resolve_agents(agent_list: Sequence, names: Sequence[str] | None = None) -> tuple[list, list[str]]:
    """Agents (``agents.load`` for strings, all loaded before anything is played) and unique labels.

    Raises ``ValueError`` for an unknown name (listing the known ones) and for duplicate labels.
    """
    loaded = [registry.load(a) if isinstance(a, str) else a for a in agent_list]
    labels = [str(n) for n in names] if names is not None else [agent_name(a) for a in loaded]
    if len(labels) != len(loaded):
        raise ValueError(f"{len(loaded)} agents but {len(labels)} names")
    dup = sorted({n for n in labels if labels.count(n) > 1})
    if dup:
        raise ValueError(f"agents listed twice: {', '.join(dup)} (every tournament entry needs its own name)")
    return loaded, labels


@dataclass(frozen=True)
class Tournament:
    """All matches of a tournament, host side, and the thesis' tables computed from them.

    ``matches``: at most one :class:`MatchResult` per unordered pair of distinct agents (either
    orientation); ``self_matches`` only fill the diagonal of the game-length table. ``ValueError``
    for duplicate names, unknown agents or a pair met twice.
    """

    names: tuple[str, ...]
    matches: tuple[MatchResult, ...]
    self_matches: tuple[MatchResult, ...] = ()
    game: str = dataclasses.field(kw_only=True)  # the game every agent plays (c4jax.games.GAMES id)

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
        """Table 5.2: ``T[i, j]`` = win rate of agent i in the 50 games where i plays first against j
        (``nan`` on the diagonal and for pairs that never met)."""
        return self._matrix(lambda m: m.win_rate_a_first)

    def win_rate_matrix(self) -> np.ndarray:
        """``W[i, j]``: win rate of i against j over all 100 games (``W + W.T == 1`` off the diagonal)."""
        return self._matrix(lambda m: m.win_rate)

    def length_matrix(self) -> np.ndarray:
        """Table 5.4: mean game length of the 100 games between i and j (symmetric; the diagonal: self matches)."""
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

    def games(self) -> Iterator[tuple[int, int, GameRecord]]:
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
        """Table 5.3: agents by mean win rate over the opponents met (best first; ties by name), with
        the means as first and as second player and the game counts."""
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
            note=(f"{games.kit_of(self.game).match.length_text}, mean of the "
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
            "game": self.game,
            "names": list(self.names),
            "matches": [m.to_dict(games=games) for m in self.matches],
            "self_matches": [m.to_dict(games=games) for m in self.self_matches],
            "tables": {t.name: t.to_dict() for t in self.tables()},
        }

    @classmethod
    def from_dict(cls, d: dict) -> Tournament:
        return cls(names=tuple(d["names"]), matches=tuple(match_from_dict(m) for m in d["matches"]),
                   self_matches=tuple(match_from_dict(m) for m in d.get("self_matches", ())),
                   game=d["game"])

    def save_json(self, path: str | os.PathLike, **extra: Any) -> Path:
        """Write :meth:`to_dict` (plus ``extra`` top-level entries) to ``path``."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**extra, **self.to_dict()}, indent=1, allow_nan=False, default=json_default))
        return path

    @classmethod
    def load_json(cls, path: str | os.PathLike) -> Tournament:
        return cls.from_dict(json.loads(Path(path).read_text()))


def round_robin(agent_list: Sequence, key: Array, *, progress: bool = True, self_play: bool = False,
                names: Sequence[str] | None = None, devices: int = 1, per_match: bool = False) -> Tournament:
    """Play one protocol :func:`match` (100 games, both seats) between every unordered pair.

    Args:
      agent_list: agents, or names for ``agents.load``, all loaded before the first game.
      key: PRNG key; per match, match (i, j) uses ``fold_in(fold_in(key, i), j)``.
      progress: show a progress bar.
      self_play: also play every agent against itself (only Table 5.4's diagonal).
      names: labels for the entries (default: each agent's ``name``; must be unique).
      devices: the first N devices (0 = all) play at once; the same games as on one device.
      per_match: one jitted match after another instead of all in one program (:mod:`lockstep
        <c4jax.evaluation.lockstep>`); stochastic agents then sample other games.

    Returns:
      Tournament with the matches ``(i, j)``, ``i < j``, agent ``i`` as A. ``ValueError`` for fewer
      than two agents, duplicate labels or agents of different games.
    """
    loaded, labels = resolve_agents(agent_list, names)
    if len(loaded) < 2:
        raise ValueError(f"a tournament needs at least two agents, got {labels}")
    game = game_of(loaded, labels)
    n = len(loaded)
    jobs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    if self_play:
        jobs += [(i, i) for i in range(n)]
    matches, self_matches = [], []
    n_devices = len(devs.select(devices))
    if lockstep.fits(game) and not per_match:  # turns alternate: one program
        with progress_bar(desc=f"tournament ({len(jobs)} matches at once)", unit="ply",
                          disable=not progress) as bar:

            def advance(plies: int, steps: int, over: int, n_games: int) -> None:
                bar.total = steps
                bar.set_postfix_str(f"{over}/{n_games} games over", refresh=False)
                bar.update(plies - bar.n)

            for (i, j), m in zip(jobs, lockstep.play_pairs(loaded, jobs, key, labels, progress=advance,
                                                                    devices=n_devices)):
                (matches if i != j else self_matches).append(m)
        return Tournament(names=tuple(labels), matches=tuple(matches), self_matches=tuple(self_matches), game=game)
    mesh = contextlib.nullcontext() if n_devices == 1 else jax.set_mesh(devs.make_mesh(n_devices))
    with mesh, progress_bar(total=len(jobs), desc="tournament", unit="match", disable=not progress) as bar:
        for i, j in jobs:
            bar.set_postfix_str(f"{labels[i]} vs {labels[j]}", refresh=False)
            m = match(loaded[i], loaded[j], jax.random.fold_in(jax.random.fold_in(key, i), j))
            m = dataclasses.replace(m, agent_a=labels[i], agent_b=labels[j])
            (matches if i != j else self_matches).append(m)
            bar.update(1)
    return Tournament(names=tuple(labels), matches=tuple(matches), self_matches=tuple(self_matches), game=game)


def game_of(loaded: Sequence, labels: Sequence[str]) -> str:
    """The game that every agent of ``loaded`` plays; ``ValueError`` naming them when they differ."""
    played = [registry.game_of(a) for a in loaded]
    if len(set(played)) > 1:
        raise ValueError("the agents play different games: " + ", ".join(f"{n} ({g})" for n, g in zip(labels, played)))
    return played[0]


