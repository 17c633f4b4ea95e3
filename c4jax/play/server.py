"""The play UI's HTTP server: one static page and a small, stateless JSON API (Connect Four and Checkers).

Standard library only (``http.server.ThreadingHTTPServer``). The server holds no game:
every request carries the whole game (the move list, who moved first and the agent's
name), is validated by replaying it with :func:`c4jax.games.connect_four.env.step`, and is answered from
that replay, so a bad request can only ever get its own 4xx answer, and any number of games
costs the server no memory (there is nothing to evict).

Limits: a request body is at most :data:`MAX_BODY` bytes (413 beyond; 411 without a
Content-Length; 408 when it does not arrive within ``Handler.timeout`` seconds), and the
server holds at most ``max_connections`` connections (a thread each) at once: a connection
beyond them is answered 503 at once and closed (``experiments/bench_server.py`` measures
the server under load).

``GET /`` serves the page, whatever its query: ``/?agent=dqn&moves=3,3,4`` is a link that the
page opens at that position (:mod:`c4jax.play.links`) by replaying it with ``/api/history``.

API (all JSON; errors are ``{"error": "..."}`` with a 4xx status):

``GET /api/agents``
    ``{"agents": [{"name", "kind", "stochastic", "scores_label"}...], "default": name,
    "max_body": bytes, "hint": {"available": bool, "message": str}}``: every agent
    :func:`c4jax.agents.load` knows (``:sto``/``:det`` expanded where the agent has both
    modes; ``perfect`` when the ``solver`` extra is installed; every shipped checkpoint,
    AlphaZero's included) and the pure-MCTS agents of :data:`SEARCH_MENU`, plus the
    checkpoints given with ``--agent``, and whether ``/api/hint`` is on offer. ``kind`` is
    ``"search"`` for agents that play with tree search (pure MCTS, AlphaZero).
``POST /api/move`` ``{"agent": name, "moves": [int...], "human_first": bool}``
    Replays ``moves`` (columns, alternating from the first player). If the agent is then
    to move it plays, and its move is appended. Answers a :func:`game_view` with
    ``positions`` starting at the request's last position (the human's move, then the
    agent's answer), ``agent_move`` and ``agent_ms`` (its decision time on the server).
``POST /api/history`` (same body)
    The same view without playing, with ``positions`` for the whole game.
``POST /api/hint`` ``{"moves": [int...]}``
    The perfect player's verdict on every column of the position after ``moves`` (a game
    not over), for the player to move there: ``scores`` (exact solver scores, ``null`` for
    full columns), ``outcomes`` (``"win"``, ``"draw"``, ``"loss"`` or ``null``) and ``best``
    (the columns with the best score). Needs the ``solver`` extra; without it the answer is
    409 with the install hint, and ``GET /api/agents`` says so in ``hint``.

Scores: every position carries ``scores``, the opponent agent's ``scores`` (float32[7],
``null`` for full columns, all ``null`` once the game is over) of that position's board
seen by the player to move there; at the human's turn it is what the agent would score
each column if it were the one to move.

Search agents (``kind == "search"``): ``scores`` are the root visit shares (pure MCTS) or
the improved policy (AlphaZero) and every position also carries ``values`` (float32[7],
``null`` for full columns, all ``null`` once the game is over): each column's searched
value, the root Q-value of the same search (``search_stats``), from -1 (a loss) to +1 (a
win) for the player to move there. Other agents' positions have ``"values": null``.

Checkers (``"game": "checkers"`` in the body of ``/api/move`` and ``/api/history``; without
``game`` a request is Connect Four's, answered exactly as before): ``moves`` are action indices
0..255 (:mod:`c4jax.games.checkers.env`: one step or one jump each), at most ``max_steps``
(512), replayed from the start with ``CHECKERS.step`` under jit; an illegal one is a 400 that
names it in PDN with its ply and the legal moves. Turns follow the state's ``current_player``:
a multi-jump is several moves of the same side, so after a jump that goes on the human is to
move again, and an agent to move plays (``agent.act_states``) until the human is to move or
the game is over (``agent_moves``, every jump). :func:`checkers_view` lists the answer's fields:
boards in the human's view (+1 / +2 the human's man / king, -1 / -2 the agent's), ``legal`` (the
action indices) and ``legal_moves`` (PDN names, cells), ``scores`` per legal move (or null),
``record`` (the moves in PDN, multi-jumps joined) and, once over, ``draw_reason``. The
Checkers opponents are those of :class:`Catalogue`'s ``checkers`` (``GET /api/agents``'
``games`` lists each game's menu).
"""

from __future__ import annotations

import dataclasses
import json
import mimetypes
import os
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import urlsplit

import jax
import jax.numpy as jnp
import numpy as np

from c4jax import agents
from c4jax.agents import perfect
from c4jax.agents.baselines import NStepLookahead, RandomAgent
from c4jax.agents.guided import GuidedSearchAgent
from c4jax.agents.network import NetworkAgent
from c4jax.agents.network_search import AlphaZeroAgent
from c4jax.agents.search import MCTSAgent
from c4jax.games import base as games
from c4jax.games.checkers import bitboard as ck_bb
from c4jax.games.checkers import notation
from c4jax.games.checkers.game import GAME as CHECKERS
from c4jax.games.connect_four import env
from c4jax.games.connect_four.board import four_cells

MAX_BODY = 8 * 1024  # bytes; a longer request body gets 413
MAX_CONNECTIONS = 128  # connections served at once (a thread each); one more gets 503
STATIC_DIR = Path(__file__).resolve().parent / "static"
DEFAULT_AGENT = "1steplA:det"
HUMAN, AGENT = 1, -1  # the fixed colour view of the boards the API returns
# Pure-MCTS agents on the default menu besides agents.known_names() (each in both modes).
SEARCH_MENU = ("mcts200", "mcts1000")
CONNECT_FOUR_ID, CHECKERS_ID = "connect_four", CHECKERS.id
GAME_NAMES = {CONNECT_FOUR_ID: "Connect Four", CHECKERS_ID: "Checkers"}  # the games the UI plays
CHECKERS_DEFAULT = ("mcts200:det", "random")  # the Checkers menu's default: the first one on offer


class RequestError(Exception):
    """A bad request: answered with ``status`` and ``{"error": message}``."""

    def __init__(self, message: str, status: int = HTTPStatus.BAD_REQUEST):
        super().__init__(message)
        self.message, self.status = message, int(status)


# --------------------------------------------------------------------------- replay

@jax.jit
def _replay(moves: jax.Array, n: jax.Array):
    """Play the first ``n`` of ``moves`` (int32[42], padded) from the empty board.

    Returns, for positions 0..42 (position k: after k moves), the board seen by the player
    to move (int8[43, 6, 7]), ``done``, ``winner`` (+1 first player) and ``legal_mask``; and
    for moves 0..41 whether the game was already over and whether the column was legal.
    """

    def body(state, i):
        a = moves[i]
        active = i < n
        legal = (a >= 0) & (a < env.COLS) & state.legal_mask[jnp.clip(a, 0, env.COLS - 1)]
        new = env.step(state, a)
        new = jax.tree.map(lambda x, y: jnp.where(active, x, y), new, state)
        return new, (state.done, legal, env.observe(new), new.done, new.winner, new.legal_mask)

    s0 = env.init()
    _, (was_done, legal, boards, done, winner, mask) = jax.lax.scan(body, s0, jnp.arange(env.MAX_MOVES))
    cat = lambda first, rest: jnp.concatenate([first[None], rest])  # noqa: E731
    return (cat(env.observe(s0), boards), cat(s0.done, done), cat(s0.winner, winner),
            cat(s0.legal_mask, mask), was_done, legal)


@dataclass(frozen=True)
class Replay:
    moves: list[int]
    boards: np.ndarray  # int8[n+1, 6, 7], player-to-move view
    done: np.ndarray  # bool[n+1]
    winner: np.ndarray  # int32[n+1], +1 first player
    legal: np.ndarray  # bool[n+1, 7]


def replay(moves: list[int]) -> Replay:
    """Validate and replay a move list (already checked to be ints); :class:`RequestError` if illegal."""
    n = len(moves)
    padded = np.zeros(env.MAX_MOVES, np.int32)
    padded[:n] = moves
    out = jax.device_get(_replay(padded, np.int32(n)))
    boards, done, winner, legal, was_done, ok = (np.asarray(x) for x in out)
    for i in range(n):
        if was_done[i]:
            raise RequestError(f"move {i} (column {moves[i]}): the game is already over after {i} moves")
        if not ok[i]:
            raise RequestError(f"illegal move {i}: column {moves[i]} is full")
    return Replay(list(moves), boards[: n + 1], done[: n + 1], winner[: n + 1], legal[: n + 1])


# --------------------------------------------------------------------------- agents

@dataclass
class Entry:
    """One opponent of the menu of one game (``game``: an id of :data:`GAME_NAMES`)."""

    name: str
    agent: Any
    kind: str
    scores_label: str
    ready: bool = False  # its request path is compiled
    game: str = CONNECT_FOUR_ID
    _compiling: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def search(self) -> bool:
        """Whether the agent plays with tree search: its positions carry ``values``."""
        return self.kind == "search"

    @property
    def label(self) -> str:
        """The name in the warm-up's log: Checkers opponents are ``checkers/<name>``."""
        if self.game == CONNECT_FOUR_ID or self.name.lower().startswith(f"{self.game}/"):
            return self.name
        return f"{self.game}/{self.name}"

    def compile(self) -> bool:
        """Compile the agent's request path (``scores`` or ``search_stats``, ``act``; batch of 1) once:
        a caller that finds another thread compiling it waits for that. True if this call compiled it."""
        if self.ready:
            return False
        with self._compiling:
            if self.ready:
                return False
            if self.game == CHECKERS_ID:
                checkers_view(self, [], human_first=False, play=True)
            else:
                game_view(self, [], human_first=False, play=True)
            self.ready = True
            return True

    def describe(self) -> dict:
        return {"name": self.name, "kind": self.kind, "stochastic": bool(self.agent.stochastic),
                "scores_label": self.scores_label}


_VALUE_LABEL = ("; under it, the searched value of the column: the root Q-value of that search, "
                "from -1 (a loss) to +1 (a win) for the player to move")


def _kind(agent) -> tuple[str, str]:
    if isinstance(agent, MCTSAgent):
        return "search", (f"visit share of each column in a {agent.num_simulations}-simulation pure MCTS "
                          f"(random playouts){_VALUE_LABEL} (the mean result of the playouts through that move)")
    if isinstance(agent, AlphaZeroAgent):
        if agent.num_simulations == 0:
            return "policy", "policy probability of each column (the raw network policy, no search)"
        if agent.solve:
            return "search", (f"visit share of each column in a {agent.num_simulations}-simulation AlphaZero "
                              f"search (PUCT with proven values){_VALUE_LABEL} (network values backed up the tree; "
                              "+1 / -1 where a win or a loss is proven, 0 where never visited)")
        return "search", (f"improved policy of each column after a {agent.num_simulations}-simulation "
                          f"AlphaZero search (Gumbel MuZero){_VALUE_LABEL} (network values backed up the tree)")
    if isinstance(agent, GuidedSearchAgent):
        prior = "Q-values" if getattr(agent.network, "output", "policy") == "q" else "policy"
        return "search", (f"visit share of each column in a {agent.num_simulations}-simulation search guided by "
                          f"the network's {prior} (random playouts){_VALUE_LABEL} (the mean result of the playouts "
                          "through that move)")
    if callable(getattr(agent, "search_stats", None)):  # any other agent with search statistics
        return "search", f"the search's share of each column{_VALUE_LABEL}"
    if isinstance(agent, RandomAgent):
        return "random", "probability of each column (uniform over the free columns)"
    if isinstance(agent, NStepLookahead):
        return "lookahead", (f"depth-{agent.n} minimax score of each column minus the current board's "
                             "heuristic score (higher is better for the agent; 1e10 = a four)")
    if isinstance(agent, perfect.PerfectAgent):
        return "perfect", ("exact solver score of each column: > 0 a win (higher: sooner), 0 a draw, "
                           "< 0 a loss (lower: sooner)")
    if isinstance(agent, NetworkAgent):
        if agent.output == "q":
            return "q", "Q-value of each column (the network's expected return)"
        return "policy", "policy probability of each column"
    return "other", "the agent's score for each column"


def _mode_of(spec: str) -> str | None:
    _, sep, mode = spec.rpartition(":")
    return mode.lower() if sep and mode.lower() in ("sto", "det") else None


def _variants(spec: str) -> list:
    """The agents a menu name stands for, its default mode first: both modes where it has both."""
    default = agents.load(spec)
    if _mode_of(spec) is not None:
        return [default]
    found = [default]
    for mode in ("det", "sto"):
        if default.name.lower().endswith(f":{mode}"):
            continue
        try:
            found.append(agents.load(f"{spec}:{mode}"))
        except ValueError:  # no such mode: random:det, a Q-value agent's :sto
            pass
    return found


def _default_menu() -> list[str]:
    known = agents.known_names()
    return known + [n for n in SEARCH_MENU if n not in known]


def for_checkers(agent) -> Any | None:
    """``agent`` made to play Checkers, or None when it cannot.

    Agents trained on Checkers (``checkers/alphazero``, a Checkers run's checkpoint) play it as
    they are. Of the others, only agents without learned parameters can switch games: uniform
    random and pure MCTS (their classes have a ``game`` field and ``act_states``). Networks
    trained on Connect Four boards cannot play another board."""
    if agents.game_of(agent) == CHECKERS_ID:
        return agent if callable(getattr(agent, "act_states", None)) else None
    if not isinstance(agent, (RandomAgent, MCTSAgent)) or not callable(getattr(agent, "act_states", None)):
        return None
    if not dataclasses.is_dataclass(agent) or "game" not in {f.name for f in dataclasses.fields(agent)}:
        return None
    return agent.replace(game=CHECKERS)


def _checkers_kind(agent) -> tuple[str, str]:
    """``(kind, scores_label)`` of a Checkers opponent (its scores are per legal move)."""
    if isinstance(agent, RandomAgent):
        return "random", "probability of each legal move (uniform)"
    if callable(getattr(agent, "scores_states", None)):
        sims = getattr(agent, "num_simulations", None)
        if sims == 0:
            return "search", "probability of each legal move under its trained policy"
        if isinstance(agent, MCTSAgent):
            what = f"a {sims}-simulation pure MCTS (random playouts)"
        else:
            what = f"its {sims}-simulation search" if sims else "its search"
        return "search", f"visit share of each legal move in {what}"
    return "other", "no scores: the agent shows none for Checkers"


def _lookup(entries: dict[str, Entry], aliases: dict[str, str], name: Any, what: str = "agents") -> Entry:
    names = ", ".join(e.name for e in entries.values())
    if not isinstance(name, str) or not name.strip():
        raise RequestError(f"'agent' must be a non-empty string; known {what}: {names}")
    key = name.strip().lower()
    entry = entries.get(key) or entries.get(aliases.get(key, ""))
    if entry is None:
        raise RequestError(f"unknown agent {name[:80]!r}; known {what}: {names}")
    return entry


class Catalogue:
    """The opponents on offer, loaded once; lookup by name (case-insensitive) or alias.

    ``entries`` are the Connect Four opponents (``names``: agent names, every agent
    :func:`c4jax.agents.load` knows by default; ``paths``: checkpoints). ``checkers`` are the
    Checkers opponents: by default every one of ``entries`` that can play Checkers
    (:func:`for_checkers`: random and pure MCTS) and, with the default menu, the agents shipped
    for Checkers (``checkers/alphazero``), or those of the names given in ``checkers`` (loudly: a
    name that cannot play Checkers is an error).
    Checkers is offered when it has at least one opponent.
    """

    def __init__(self, names: Iterable[str] | None = None, paths: Iterable[str] = (), log=print,
                 checkers: Iterable[str] | None = None):
        self.entries: dict[str, Entry] = {}
        self.background: threading.Thread | None = None  # warm_up's compiler of the search agents
        self.aliases: dict[str, str] = {}
        self.checkers: dict[str, Entry] = {}
        self.checkers_aliases: dict[str, str] = {}
        builtin = list(names) if names is not None else _default_menu()
        for spec in builtin:
            try:
                self._add(spec)
            except Exception as e:  # e.g. a checkpoint still being written: offer the others
                if names is not None:  # asked for by name: fail loudly
                    raise
                log(f"c4jax play: skipping agent {spec!r}: {type(e).__name__}: {e}")
        for path in paths:  # checkpoints given on the command line: fail loudly
            self._add(path)
        if not self.entries:
            raise ValueError("no agents to play against")
        self.default = DEFAULT_AGENT if DEFAULT_AGENT.lower() in self.entries else next(iter(self.entries.values())).name
        if checkers is None:
            for entry in self.entries.values():
                self._add_checkers(entry.agent)
            trained = agents.known_names(CHECKERS_ID) if names is None else []  # the default menu: Checkers' own
            for name in trained:
                if name.split("/", 1)[1] not in ("random", "mcts1000"):
                    try:
                        for agent in _variants(name):
                            self._add_checkers(agent)
                    except Exception as e:  # a damaged checkpoint: offer the others
                        log(f"c4jax play: skipping agent {name!r}: {type(e).__name__}: {e}")
            for alias, key in self.aliases.items():  # "mcts200" -> its default mode, when offered
                if key in self.checkers:
                    self.checkers_aliases.setdefault(alias, key)
        else:
            for spec in checkers:
                variants = _variants(spec)
                for agent in sorted(variants, key=lambda a: a.name):
                    if not self._add_checkers(agent):
                        raise ValueError(f"agent {agent.name!r} cannot play Checkers: only random, pure MCTS "
                                         "(mcts<N>) and agents trained on Checkers (checkers/<name>) can")
                if _mode_of(spec) is None:
                    self.checkers_aliases.setdefault(spec.strip().lower(), variants[0].name.lower())
        self.checkers_default = next((n for n in CHECKERS_DEFAULT if n in self.checkers),
                                     next(iter(self.checkers), None))

    def _add_checkers(self, agent) -> bool:
        """Offer ``agent`` for Checkers if it can play it; False if it cannot."""
        playing = for_checkers(agent)
        if playing is None:
            return False
        self.checkers.setdefault(playing.name.lower(), Entry(playing.name, playing, *_checkers_kind(playing),
                                                             game=CHECKERS_ID))
        return True

    def games(self) -> list[str]:
        """The ids of the games on offer (Connect Four first)."""
        return [CONNECT_FOUR_ID] + ([CHECKERS_ID] if self.checkers else [])

    def _add(self, spec: str) -> None:
        variants = _variants(spec)
        for agent in sorted(variants, key=lambda a: a.name):
            key = agent.name.lower()
            if key not in self.entries:
                self.entries[key] = Entry(agent.name, agent, *_kind(agent))
        if _mode_of(spec) is None:  # "supervised" -> its default mode, "supervised:det"
            self.aliases.setdefault(spec.strip().lower(), variants[0].name.lower())

    def names(self) -> list[str]:
        return [e.name for e in self.entries.values()]

    def get(self, name: Any, game: str = CONNECT_FOUR_ID) -> Entry:
        """The opponent ``name`` of ``game``'s menu; :class:`RequestError` if there is none."""
        if game == CONNECT_FOUR_ID:
            return _lookup(self.entries, self.aliases, name)
        if game == CHECKERS_ID and self.checkers:
            return _lookup(self.checkers, self.checkers_aliases, name, "Checkers agents")
        raise RequestError(f"game {game[:40]!r} is not served here: no opponent plays it")

    def describe(self) -> dict:
        """``GET /api/agents``: the Connect Four menu at the top level (as before Checkers) and
        every game's menu under ``games``."""
        menus = [(CONNECT_FOUR_ID, self.entries, self.default)]
        if self.checkers:
            menus.append((CHECKERS_ID, self.checkers, self.checkers_default))
        return {"agents": [e.describe() for e in self.entries.values()], "default": self.default,
                "max_body": MAX_BODY, "hint": hint_status(),
                "games": [{"id": gid, "name": GAME_NAMES[gid], "agents": [e.describe() for e in entries.values()],
                           "default": default, "max_moves": CHECKERS.max_steps if gid == CHECKERS_ID else env.MAX_MOVES}
                          for gid, entries, default in menus]}

    def warm_up(self, log=print, workers: int | None = None, search: str = "background") -> float:
        """Compile every agent's request path before serving; returns the seconds until ready.

        XLA compiles outside the GIL, so a few threads compile several agents at once.
        Search agents compile slowly (tens of seconds each on 2 CPU cores): with
        ``search="background"`` (the default) they are compiled one at a time by a daemon
        thread after this returns, while the server already serves the others; a request for
        one before its turn compiles it at once (:meth:`Entry.compile`). ``search="now"``
        compiles them here too.
        """
        if search not in ("now", "background"):
            raise ValueError(f"search must be 'now' or 'background', got {search!r}")
        t0 = time.perf_counter()
        _key(True), _key(False)
        game_view(next(iter(self.entries.values())), [], human_first=True, play=False)  # the replay
        if self.checkers:
            checkers_view(next(iter(self.checkers.values())), [], human_first=True, play=False)
        done = [0]
        lock = threading.Lock()
        entries = list(self.entries.values()) + list(self.checkers.values())
        later = [e for e in entries if e.search] if search == "background" else []
        now = [e for e in entries if e not in later]

        def one(entry: Entry, background: bool = False) -> None:
            t = time.perf_counter()
            if entry.compile():
                end = time.perf_counter()
                note = f", in the background, {end - t0:.0f} s after the warm-up began" if background else ""
                with lock:
                    done[0] += 1
                    log(f"  [{done[0]}/{len(entries)}] {entry.label:<24} ready ({end - t:.1f} s{note})")

        workers = workers or min(4, os.cpu_count() or 1)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(one, now))
        seconds = time.perf_counter() - t0
        if later:
            log(f"  compiling {len(later)} search agents in the background: "
                f"{', '.join(e.label for e in later)} (a first move before then waits for its compile)")

            def background() -> None:
                for entry in later:
                    try:
                        one(entry, background=True)
                    except Exception as e:  # a bug: the first request for it will report it
                        log(f"  {entry.label}: background compile failed: {type(e).__name__}: {e}")

            self.background = threading.Thread(target=background, name="c4jax-play-warm-up", daemon=True)
            self.background.start()
        return seconds


# --------------------------------------------------------------------------- game logic

_FIXED_KEY = None


def _key(stochastic: bool):
    """A fresh key from the OS for sampling agents (never from client data); a fixed one otherwise."""
    global _FIXED_KEY
    if stochastic:
        return jax.random.key(int.from_bytes(os.urandom(4), "little"))
    if _FIXED_KEY is None:
        _FIXED_KEY = jax.random.key(0)
    return _FIXED_KEY


def _scores_json(values) -> list:
    # float32 values, printed with the 7 significant digits they hold; -inf (full column) -> null
    return [float(f"{v:.7g}") if np.isfinite(v) else None for v in np.asarray(values, np.float64).reshape(-1)]


def _agent_scores(entry: Entry, board: np.ndarray) -> tuple[list, list | None]:
    """The agent's ``scores`` of one board and, for a search agent, the searched values (else None)."""
    if entry.search:
        shares, values = entry.agent.search_stats(board[None])
        return _scores_json(shares[0]), _scores_json(values[0])
    return _scores_json(entry.agent.scores(board[None])[0]), None


def _winning_cells(board: np.ndarray) -> list[list[int]]:
    return [list(c) for c in four_cells(board)]


def _position(rep: Replay, ply: int, human_first: bool, entry: Entry, known: tuple | None = None) -> dict:
    """One position of a game, boards in the fixed colour view (1 = human, -1 = agent); ``known``:
    its ``(scores, values)`` when already computed."""
    human_to_move = (ply % 2 == 0) == human_first
    board = rep.boards[ply].astype(np.int64) * (HUMAN if human_to_move else AGENT)
    if rep.done[ply]:
        w = int(rep.winner[ply])
        status = "draw" if w == 0 else ("human_won" if (w == 1) == human_first else "agent_won")
        to_move, scores = None, [None] * env.COLS
        values = [None] * env.COLS if entry.search else None
    else:
        status = "human_turn" if human_to_move else "agent_turn"
        to_move = "human" if human_to_move else "agent"
        scores, values = known if known is not None else _agent_scores(entry, rep.boards[ply])
    return {
        "ply": ply,
        "board": board.tolist(),
        "to_move": to_move,
        "status": status,
        "last_move": rep.moves[ply - 1] if ply else None,
        "legal": [int(c) for c in np.flatnonzero(rep.legal[ply])],
        "scores": scores,
        "values": values,
        "winning_cells": _winning_cells(board) if status in ("human_won", "agent_won") else [],
    }


def parse_game(body: Any, catalogue: Catalogue) -> tuple[Entry, list[int], bool]:
    """Check a request body ``{"game", "agent", "moves", "human_first"}`` (``game`` optional:
    Connect Four); :class:`RequestError` if malformed. The game is ``entry.game``."""
    if not isinstance(body, dict):
        raise RequestError("the body must be a JSON object {\"agent\": ..., \"moves\": [...], \"human_first\": ...}")
    unknown = sorted(set(body) - {"game", "agent", "moves", "human_first"})
    if unknown:
        raise RequestError(f"unknown field(s): {', '.join(repr(k)[:40] for k in unknown[:5])}")
    game = body.get("game", CONNECT_FOUR_ID)
    if not isinstance(game, str) or game not in GAME_NAMES:
        raise RequestError(f"unknown game {json.dumps(game)[:40]}; games: {', '.join(catalogue.games())}")
    if "agent" not in body:
        raise RequestError("missing field 'agent'")
    entry = catalogue.get(body["agent"], game)
    if game == CHECKERS_ID:
        moves = parse_checkers_moves(body.get("moves", []))
    else:
        moves = parse_moves(body.get("moves", []))
    human_first = body.get("human_first")
    if not isinstance(human_first, bool):
        raise RequestError("'human_first' must be true or false")
    return entry, moves, human_first


def parse_moves(moves: Any) -> list[int]:
    """Check a game's move list (columns 0..6, at most 42); :class:`RequestError` if malformed."""
    if not isinstance(moves, list):
        raise RequestError("'moves' must be a list of columns (integers 0..6)")
    if len(moves) > env.MAX_MOVES:
        raise RequestError(f"'moves' has {len(moves)} moves; a game has at most {env.MAX_MOVES}")
    for i, m in enumerate(moves):
        if isinstance(m, bool) or not isinstance(m, int):
            raise RequestError(f"move {i} is {json.dumps(m)[:40]}; moves must be integers 0..6")
        if not 0 <= m < env.COLS:
            raise RequestError(f"illegal move {i}: column {m} is outside 0..6")
    return moves


def hint_status() -> dict:
    """Whether the solver hint is on offer (``GET /api/agents``' ``hint``)."""
    if perfect.solver_available():
        return {"available": True, "message": "the perfect player's verdict on each column"}
    return {"available": False, "message": f"no hint: {perfect.MISSING_SOLVER}"}


def hint_view(body: Any) -> dict:
    """The answer of ``POST /api/hint``: the solver's verdict on each column after ``body["moves"]``."""
    t0 = time.perf_counter()
    if not isinstance(body, dict):
        raise RequestError("the body must be a JSON object {\"moves\": [...]}")
    unknown = sorted(set(body) - {"moves"})
    if unknown:
        raise RequestError(f"unknown field(s): {', '.join(repr(k)[:40] for k in unknown[:5])}")
    if not perfect.solver_available():
        raise RequestError(perfect.MISSING_SOLVER, HTTPStatus.CONFLICT)
    rep = replay(parse_moves(body.get("moves", [])))
    n = len(rep.moves)
    if rep.done[n]:
        raise RequestError(f"the game is over after {n} moves: there is nothing to hint")
    try:
        scores = perfect.solve_scores(rep.boards[n])
    except perfect.SolverMissingError as e:  # installed but not importable
        raise RequestError(str(e), HTTPStatus.CONFLICT) from None
    legal = scores != perfect.ILLEGAL
    best = int(scores[legal].max())
    outcome = {1: "win", 0: "draw", -1: "loss"}
    return {
        "moves": rep.moves,
        "ply": n,
        "scores": [int(v) if ok else None for v, ok in zip(scores, legal)],
        "outcomes": [outcome[int(np.sign(v))] if ok else None for v, ok in zip(scores, legal)],
        "best": [int(c) for c in np.flatnonzero(legal & (scores == best))],
        "server_ms": round((time.perf_counter() - t0) * 1e3, 3),
    }


def game_view(entry: Entry, moves: list[int], human_first: bool, *, play: bool) -> dict:
    """Replay a game; when ``play`` and the agent is to move, let it move. The API's answer."""
    t0 = time.perf_counter()
    rep = replay(moves)
    first = len(moves) if play else 0
    known: dict[int, tuple] = {}
    agent_move = agent_ms = None
    n = len(moves)
    agent_to_move = not rep.done[n] and (n % 2 == 0) != human_first
    if play and agent_to_move:
        board = rep.boards[n][None]
        t = time.perf_counter()
        known[n] = _agent_scores(entry, rep.boards[n])
        agent_move = int(np.asarray(entry.agent.act(board, _key(entry.agent.stochastic)))[0])
        agent_ms = (time.perf_counter() - t) * 1e3
        rep = replay(moves + [agent_move])
    positions = [_position(rep, k, human_first, entry, known.get(k)) for k in range(first, len(rep.moves) + 1)]
    last = positions[-1]
    return {
        "agent": entry.name,
        "human_first": human_first,
        "moves": rep.moves,
        "agent_move": agent_move,
        "agent_ms": None if agent_ms is None else round(agent_ms, 3),
        "status": last["status"],
        "to_move": last["to_move"],
        "board": last["board"],
        "legal": last["legal"],
        "scores": last["scores"],
        "values": last["values"],
        "winning_cells": last["winning_cells"],
        "positions": positions,
        "server_ms": round((time.perf_counter() - t0) * 1e3, 3),
    }


# --------------------------------------------------------------------------- Checkers
#
# The same stateless protocol for Checkers (``"game": "checkers"``): ``moves`` are action
# indices 0..255 (c4jax.games.checkers.env: one step or one jump each, so a multi-jump is
# several moves of the same player) replayed from the start with ``CHECKERS.step`` under jit.
# Turns follow ``current_player``, never the parity of the ply. Boards are in the human's view
# (the human's side at the bottom): +1 / +2 the human's man / king, -1 / -2 the agent's, 0
# empty; cells are ``[row, column]`` of that view.

@jax.jit
def _replay_checkers(moves: jax.Array, n: jax.Array):
    """Play the first ``n`` of ``moves`` (int32[max_steps], padded) from the start position.

    Returns the states of positions 0..max_steps (a State with a leading axis; position k: after
    k moves) and, for moves 0..max_steps-1, whether the game was already over and whether the
    action was legal."""

    def body(state, i):
        a = moves[i]
        top = CHECKERS.num_actions - 1
        legal = (a >= 0) & (a <= top) & state.legal_action_mask[jnp.clip(a, 0, top)]
        new = CHECKERS.step(state, a)
        new = jax.tree.map(lambda x, y: jnp.where(i < n, x, y), new, state)
        return new, (games.done(state), legal, new)

    s0 = CHECKERS.init()
    _, (was_done, legal, states) = jax.lax.scan(body, s0, jnp.arange(CHECKERS.max_steps))
    states = jax.tree.map(lambda first, rest: jnp.concatenate([first[None], rest]), s0, states)
    return states, was_done, legal


_checkers_step = jax.jit(CHECKERS.step)


@jax.jit
def _act_states(agent, states, key):
    return agent.act_states(states, key)


def _legal_actions(state) -> np.ndarray:
    """The legal actions of one host-side state (``8 * q + kind`` for each bit of ``legal[kind]``)."""
    words = np.asarray(state.legal, np.uint32)
    bits = (words[None, :] >> np.arange(32, dtype=np.uint32)[:, None]) & 1  # [square, kind]
    return np.flatnonzero(bits.reshape(-1)).astype(int)


def _bit_index(word) -> int:
    return int(word).bit_length() - 1


@dataclass(frozen=True)
class CheckersReplay:
    moves: list[int]
    states: Any  # env.State with a leading axis [n+1], NumPy arrays

    def state(self, ply: int):
        return jax.tree.map(lambda x: x[ply], self.states)


def _side(player: int) -> str:
    return notation.PLAYER_NAMES[player]


def _move_name(state, action: int) -> str:
    try:
        return f"{notation.action_to_pdn(state, action)} (action {action})"
    except ValueError:
        return f"action {action} (off the board)"


def replay_checkers(moves: list[int]) -> CheckersReplay:
    """Validate and replay a Checkers move list (already checked to be ints in 0..255);
    :class:`RequestError` naming the move in PDN and its ply if one is illegal."""
    n = len(moves)
    padded = np.zeros(CHECKERS.max_steps, np.int32)
    padded[:n] = moves
    states, was_done, ok = jax.device_get(_replay_checkers(padded, np.int32(n)))
    replay = CheckersReplay(list(moves), jax.tree.map(lambda x: np.asarray(x)[: n + 1], states))
    for i in range(n):
        if was_done[i] or not ok[i]:
            state = replay.state(i)
            name = _move_name(state, moves[i])
            if was_done[i]:
                raise RequestError(f"move at ply {i}, {name}: the game is already over after {i} plies "
                                   f"({_result_text(state)})")
            legal = [notation.action_to_pdn(state, a) for a in _legal_actions(state)]
            jumper = int(state.jumper)
            why = (f" ({notation.square_number(_bit_index(jumper), int(state.current_player))} must jump on)"
                   if jumper else " (a jump is mandatory)" if any("x" in m for m in legal) else "")
            raise RequestError(f"illegal move at ply {i}: {name} is not legal for {_side(int(state.current_player))}"
                               f"{why}; legal moves: {', '.join(legal)}")
    return replay


def _outcome(state, human_player: int) -> tuple[str, str | None]:
    """``(status, draw_reason)`` of a finished state: ``human_won`` / ``agent_won`` / ``draw``
    with ``repetition``, ``fifty_moves`` (design.md: 100 plies without a capture or a man's move)
    or ``cap`` (the game reached ``max_steps`` plies)."""
    if bool(state.truncated):
        return "draw", "cap"
    reward = float(np.asarray(state.rewards)[human_player])
    if reward > 0:
        return "human_won", None
    if reward < 0:
        return "agent_won", None
    return "draw", "fifty_moves" if int(state.quiet) >= CHECKERS.rules.quiet_limit else "repetition"


def _result_text(state) -> str:
    status, reason = _outcome(state, 0)
    if status == "draw":
        return {"cap": f"a draw at the {CHECKERS.max_steps}-ply cap", "repetition": "a draw by threefold repetition",
                "fifty_moves": "a draw by the fifty-move rule"}[reason]
    return f"{_side(0 if status == 'human_won' else 1)} won"


def _checkers_cell(number: int, human_player: int) -> list[int]:
    """``[row, column]`` in the human's view of PDN square ``number``: the printed diagram
    (:func:`notation.render`: square 1 top left, white at the bottom) for white, turned by 180
    degrees for black."""
    r = (number - 1) // 4
    c = 2 * ((number - 1) % 4) + (1 if r % 2 == 0 else 0)
    return [7 - r, 7 - c] if human_player == 0 else [r, c]


def _checkers_squares(human_player: int) -> list[list[int | None]]:
    """The PDN number of every cell of the human's view (None on the light squares)."""
    grid: list[list[int | None]] = [[None] * 8 for _ in range(8)]
    for number in range(1, 33):
        r, c = _checkers_cell(number, human_player)
        grid[r][c] = number
    return grid


def _checkers_move(state, action: int, human_player: int) -> dict:
    """One action of the player to move of ``state``: its PDN name and cells."""
    player = int(state.current_player)
    number = lambda word: notation.square_number(_bit_index(word), player)  # noqa: E731
    over = int(ck_bb.ACTION_OVER[action])
    return {"action": int(action), "pdn": notation.action_to_pdn(state, action),
            "from": _checkers_cell(number(ck_bb.ACTION_START[action]), human_player),
            "to": _checkers_cell(number(ck_bb.ACTION_END[action]), human_player),
            "captured": _checkers_cell(number(over), human_player) if over else None,
            "by": "human" if player == human_player else "agent"}


def _checkers_scores(entry: Entry, state, legal: np.ndarray) -> list | None:
    """The agent's score of each legal move (aligned with ``legal``), or None if it has none."""
    if len(legal) == 0:
        return []
    if entry.kind == "random":
        return [float(f"{1.0 / len(legal):.7g}")] * len(legal)
    if entry.kind == "search":
        batch = jax.tree.map(lambda x: x[None], state)
        return _scores_json(np.asarray(entry.agent.scores_states(batch))[0][legal])
    return None


def _checkers_position(rep: CheckersReplay, ply: int, human_player: int, entry: Entry,
                       known: list | None = None) -> dict:
    """One position of a Checkers game in the human's view; ``known``: its scores if computed."""
    state = rep.state(ply)
    player = int(state.current_player)
    board = [[0] * 8 for _ in range(8)]
    pieces = notation.absolute_board(state)
    for owner, color in enumerate(notation.PLAYER_NAMES):
        sign = 1 if owner == human_player else -1
        kings = set(pieces[color + "_kings"])
        for number in pieces[color]:
            r, c = _checkers_cell(number, human_player)
            board[r][c] = sign * (2 if number in kings else 1)
    finished = bool(state.terminated) or bool(state.truncated)
    legal = _legal_actions(state)
    if finished:
        (status, reason), to_move, side = _outcome(state, human_player), None, None
    else:
        status, reason = ("human_turn" if player == human_player else "agent_turn"), None
        to_move, side = ("human" if player == human_player else "agent"), _side(player)
    jumper = int(state.jumper)
    return {
        "ply": ply,
        "board": board,
        "to_move": to_move,
        "side": side,
        "status": status,
        "draw_reason": reason,
        "last_move": _checkers_move(rep.state(ply - 1), rep.moves[ply - 1], human_player) if ply else None,
        "legal": [int(a) for a in legal],
        "legal_moves": [_checkers_move(state, a, human_player) for a in legal],
        "jumper": _checkers_cell(notation.square_number(_bit_index(jumper), player), human_player) if jumper else None,
        "scores": known if known is not None else _checkers_scores(entry, state, legal),
        "values": None,
        "quiet": int(state.quiet),
        "fen": notation.to_fen(state),
    }


def _checkers_record(rep: CheckersReplay, human_player: int) -> list[dict]:
    """The game's moves as a checkers player writes them: a multi-jump's actions joined
    (``15x22x29``), numbered by black's moves (``number``), with the plies they span."""
    record: list[dict] = []
    number = 0
    for ply, action in enumerate(rep.moves):
        before = rep.state(ply)
        player = int(before.current_player)
        name = notation.action_to_pdn(before, action)
        if ply and int(rep.state(ply - 1).current_player) == player and record:  # the same jump goes on
            last = record[-1]
            last["text"] += name[name.index("x"):]
            last["plies"][1] = ply
            continue
        number += player == 0
        record.append({"number": max(number, 1), "side": _side(player),
                       "by": "human" if player == human_player else "agent", "text": name, "plies": [ply, ply]})
    return record


def checkers_view(entry: Entry, moves: list[int], human_first: bool, *, play: bool) -> dict:
    """Replay a Checkers game; when ``play`` and the agent is to move, let it move until the
    human is to move or the game is over (every jump of its multi-jump). The API's answer."""
    t0 = time.perf_counter()
    rep = replay_checkers(moves)
    human_player = 0 if human_first else 1
    n = len(moves)
    known: dict[int, list | None] = {}
    agent_moves: list[int] = []
    agent_ms = None
    state = rep.state(n)
    if play and not bool(games.done(state)) and int(state.current_player) != human_player:
        t = time.perf_counter()
        while not bool(games.done(state)) and int(state.current_player) != human_player:
            legal = _legal_actions(state)
            known[n + len(agent_moves)] = _checkers_scores(entry, state, legal)
            batch = jax.tree.map(lambda x: x[None], state)
            action = int(np.asarray(_act_states(entry.agent, batch, _key(entry.agent.stochastic)))[0])
            if action not in legal:  # a bug in the agent, not the request's fault: 500
                raise RuntimeError(f"{entry.label} chose the illegal action {action}")
            agent_moves.append(action)
            state = jax.device_get(_checkers_step(state, np.int32(action)))
        agent_ms = (time.perf_counter() - t) * 1e3
        rep = replay_checkers(moves + agent_moves)
    first = n if play else 0
    positions = [_checkers_position(rep, k, human_player, entry, known.get(k))
                 for k in range(first, len(rep.moves) + 1)]
    last = positions[-1]
    return {
        "game": CHECKERS_ID,
        "agent": entry.name,
        "human_first": human_first,
        "human_side": _side(human_player),
        "moves": rep.moves,
        "pdn": [notation.action_to_pdn(rep.state(k), a) for k, a in enumerate(rep.moves)],
        "record": _checkers_record(rep, human_player),
        "agent_move": agent_moves[0] if agent_moves else None,
        "agent_moves": agent_moves,
        "agent_ms": None if agent_ms is None else round(agent_ms, 3),
        "status": last["status"],
        "draw_reason": last["draw_reason"],
        "to_move": last["to_move"],
        "board": last["board"],
        "legal": last["legal"],
        "scores": last["scores"],
        "values": None,
        "squares": _checkers_squares(human_player),
        "positions": positions,
        "server_ms": round((time.perf_counter() - t0) * 1e3, 3),
    }


def parse_checkers_moves(moves: Any) -> list[int]:
    """Check a Checkers move list (actions 0..255, at most ``max_steps``); :class:`RequestError` if malformed."""
    top = CHECKERS.num_actions - 1
    if not isinstance(moves, list):
        raise RequestError(f"'moves' must be a list of Checkers actions (integers 0..{top})")
    if len(moves) > CHECKERS.max_steps:
        raise RequestError(f"'moves' has {len(moves)} moves; a Checkers game has at most {CHECKERS.max_steps} plies")
    for i, m in enumerate(moves):
        if isinstance(m, bool) or not isinstance(m, int):
            raise RequestError(f"move at ply {i} is {json.dumps(m)[:40]}; Checkers moves must be integers 0..{top}")
        if not 0 <= m <= top:
            raise RequestError(f"illegal move at ply {i}: action {m} is outside 0..{top}")
    return moves


# --------------------------------------------------------------------------- HTTP

def _static_files() -> dict[str, Path]:
    return {p.name: p for p in STATIC_DIR.iterdir() if p.is_file()} if STATIC_DIR.is_dir() else {}


class Handler(BaseHTTPRequestHandler):
    server_version = "c4jax-play/1"
    protocol_version = "HTTP/1.1"
    timeout = 30  # seconds a client may take to send its request
    catalogue: Catalogue  # set by make_server
    static: dict[str, Path]
    verbose = False

    # ---- plumbing
    def log_message(self, format, *args):  # noqa: A002 (the base class' name)
        if self.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, payload: bytes, content_type: str, close: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", "default-src 'self'; img-src 'self' data:")
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _json(self, status: int, obj: Any, close: bool = False) -> None:
        self._send(status, json.dumps(obj, allow_nan=False).encode(), "application/json; charset=utf-8", close)

    def _error(self, status: int, message: str, close: bool = False) -> None:
        self._json(status, {"error": message}, close=close)

    def _guard(self, fn) -> None:
        try:
            fn()
        except RequestError as e:
            self._error(e.status, e.message, close=True)  # the body may be unread: start afresh
            self._linger()
        except Exception as e:  # a bug: answer 500, keep serving
            print(f"c4jax play: internal error on {self.command} {self.path}: {e!r}", file=sys.stderr)
            self._error(500, f"internal server error: {type(e).__name__}", close=True)

    def _linger(self) -> None:
        """Before closing on an error, let the client read the answer: closing a socket with unread
        input sends a TCP reset, which can destroy the answer in flight (a 413 for a big body)."""
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(0.5)
            deadline, drained = time.monotonic() + 1.0, 0
            while time.monotonic() < deadline and drained < (1 << 20):
                chunk = self.connection.recv(65536)
                if not chunk:
                    break
                drained += len(chunk)
        except OSError:
            pass

    def _read_json(self) -> Any:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raise RequestError("chunked bodies are not supported; send Content-Length", HTTPStatus.LENGTH_REQUIRED)
        length = self.headers.get("Content-Length")
        if length is None:
            raise RequestError("a JSON body with a Content-Length header is required", HTTPStatus.LENGTH_REQUIRED)
        try:
            size = int(length)
            if size < 0:
                raise ValueError
        except ValueError:
            raise RequestError(f"bad Content-Length {length[:20]!r}") from None
        if size > MAX_BODY:
            raise RequestError(f"request body of {size} bytes is over the {MAX_BODY}-byte limit",
                               HTTPStatus.REQUEST_ENTITY_TOO_LARGE)
        try:
            raw = self.rfile.read(size)
        except TimeoutError:  # a client that announced more than it sends
            raise RequestError(f"the {size}-byte body did not arrive within {self.timeout} s",
                               HTTPStatus.REQUEST_TIMEOUT) from None
        try:
            return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
        except (UnicodeDecodeError, ValueError) as e:
            raise RequestError(f"the body is not valid JSON: {str(e)[:120]}") from None

    # ---- routes
    def do_GET(self):  # noqa: N802
        self._guard(self._get)

    def do_HEAD(self):  # noqa: N802
        self._guard(self._get)

    def do_POST(self):  # noqa: N802
        self._guard(self._post)

    def _not_allowed(self):
        self._error(HTTPStatus.METHOD_NOT_ALLOWED, f"method {self.command} is not allowed", close=True)
        self._linger()

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_allowed  # noqa: N815

    def _get(self):
        path = urlsplit(self.path).path
        if path == "/api/agents":
            return self._json(200, self.catalogue.describe())
        if path in ("/", "/index.html"):
            path = "/static/index.html"
        if path == "/favicon.ico":
            return self._send(204, b"", "image/x-icon")
        if path.startswith("/static/") and path[len("/static/"):] in self.static:
            f = self.static[path[len("/static/"):]]
            ctype = mimetypes.guess_type(f.name)[0] or "application/octet-stream"
            if ctype.startswith("text/") or ctype == "application/javascript":
                ctype += "; charset=utf-8"
            return self._send(200, f.read_bytes(), ctype)
        if path.startswith("/api/"):
            raise RequestError(f"unknown endpoint GET {path[:80]}", HTTPStatus.NOT_FOUND)
        raise RequestError(f"not found: {path[:80]}", HTTPStatus.NOT_FOUND)

    def _post(self):
        path = urlsplit(self.path).path
        if path not in ("/api/move", "/api/history", "/api/hint"):
            raise RequestError(f"unknown endpoint POST {path[:80]}", HTTPStatus.NOT_FOUND)
        body = self._read_json()
        if path == "/api/hint":
            return self._json(200, hint_view(body))
        entry, moves, human_first = parse_game(body, self.catalogue)
        if not entry.ready and self.catalogue.background is not None:
            entry.compile()  # a search agent the background warm-up has not compiled yet: now, once
        view = checkers_view if entry.game == CHECKERS_ID else game_view
        self._json(200, view(entry, moves, human_first, play=path == "/api/move"))


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


_BUSY = json.dumps({"error": "the server is busy: too many connections; try again"}).encode()


class PlayServer(ThreadingHTTPServer):
    """A thread per connection, at most ``max_connections`` at once."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128  # the listen backlog

    def __init__(self, *args, max_connections: int = MAX_CONNECTIONS, **kwargs):
        if max_connections < 1:
            raise ValueError(f"max_connections must be >= 1, got {max_connections}")
        self.max_connections, self.active = max_connections, 0
        self._count = threading.Lock()
        super().__init__(*args, **kwargs)

    def process_request(self, request, client_address):
        with self._count:
            full = self.active >= self.max_connections
            if not full:
                self.active += 1
        if full:
            self._refuse(request)
            return
        try:
            super().process_request(request, client_address)  # starts the connection's thread
        except BaseException:
            with self._count:
                self.active -= 1
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._count:
                self.active -= 1

    def _refuse(self, request) -> None:
        """Answer 503 without a thread (this is the accepting thread: a few hundred ms at most)."""
        try:
            request.settimeout(0.2)
            request.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"
                            b"Retry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % len(_BUSY) + _BUSY)
            request.shutdown(socket.SHUT_WR)
            deadline, drained = time.monotonic() + 0.5, 0  # unread input would turn the close into a reset
            while time.monotonic() < deadline and drained < (1 << 20):
                chunk = request.recv(65536)
                if not chunk:
                    break
                drained += len(chunk)
        except OSError:
            pass
        finally:
            self.shutdown_request(request)

    def handle_error(self, request, client_address):  # a client that hung up: no traceback spam
        exc = sys.exc_info()[1]
        if not isinstance(exc, (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def make_server(catalogue: Catalogue, port: int = 8000, host: str = "127.0.0.1", verbose: bool = False,
                max_connections: int = MAX_CONNECTIONS) -> PlayServer:
    """Bind the server (``port=0``: a free port; see ``server.server_address``); call ``serve_forever``."""
    handler = type("BoundHandler", (Handler,), {"catalogue": catalogue, "static": _static_files(), "verbose": verbose})
    return PlayServer((host, port), handler, max_connections=max_connections)

