"""The opponents on offer in the play UI: one menu per game of :func:`c4jax.games.with_views`, its
entries under their canonical names (what ``agents.load`` takes), aliases (a name without a mode, without
the ``<game>/`` prefix), a default, and the warm-up that compiles every entry's request path.

The default game's menu holds the agents named (by default every agent ``agents.load`` knows,
:data:`SEARCH_MENU` and :data:`MINIMAX_MENU`) and the checkpoints given; another game's menu the names given
for it (a name that cannot play it is an error), by default those of the default menu that can play it
(:func:`c4jax.agents.for_game`) and the agents shipped for it. Loading and compiling can run in the
background (:meth:`Catalogue.start`) while the server answers; a request for an agent still loading waits.
At most ``keep`` agents outside the warm set stay compiled (:class:`Bound`)."""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from c4jax import agents
from c4jax import games as registry
from c4jax.agents.base import ScoreInfo
from c4jax.play.answers import RequestError, describe, game_answer, key, observable
from c4jax.play.programs import Programs, give_back_memory, programs_for

SEARCH_MENU = ("mcts200", "mcts1000")  # pure-MCTS agents on the default menu besides agents.known_names()
# seed 002's minimax (design.md §4a) besides known_names()'s minimax4: depth 1 (what its DQN beat) and 7 (its deepest)
MINIMAX_MENU = ("minimax1", "minimax7")
LOAD_WAIT = 300.0  # seconds a request for an agent not on the menu waits for the loading to finish
DEFAULTS = "defaults"  # warm=DEFAULTS: warm up each game's default opponent (Menu.default)


class Bound:
    """The compiled agents outside the warm set, least recently used first: at most ``keep`` of
    them (None: no limit) stay compiled; :meth:`used` releases the ones beyond."""

    def __init__(self, keep: int | None = None):
        if keep is not None and keep < 1:
            raise ValueError(f"keep must be >= 1 (or None: no limit), got {keep}")
        self.keep = keep
        self._order: OrderedDict[int, Entry] = OrderedDict()
        self._lock = threading.Lock()
        self.released = 0  # how many times an agent was released

    def used(self, entry: Entry) -> None:
        """``entry`` answered: it is the most recently used; release the least recently used beyond ``keep``."""
        if entry.pinned:
            return
        released = 0
        with self._lock:
            if entry._programs is None:  # released by another request meanwhile: it compiles again when asked
                return
            self._order[id(entry)] = entry
            self._order.move_to_end(id(entry))
            while self.keep is not None and len(self._order) > self.keep:
                _, victim = self._order.popitem(last=False)
                victim._programs, victim.ready = None, False  # a request using them holds its own reference
                released += 1
            self.released += released
        if released:
            give_back_memory()

    def compiled(self) -> list[str]:
        """The names of the agents it holds compiled, least recently used first."""
        with self._lock:
            return [e.name for e in self._order.values()]


@dataclass
class Entry:
    """One opponent of one game's menu (``view``: the game's view module)."""

    name: str  # canonical: what agents.load takes
    agent: Any
    view: Any
    info: ScoreInfo
    ready: bool = False  # its request path is compiled
    pinned: bool = False  # in the warm set: compiled by the warm-up and never released
    bound: Bound | None = field(default=None, repr=False, compare=False)  # None: never released
    keep_programs: bool = True  # its programs are held for the process (a catalogue without a bound)
    _programs: Programs | None = field(default=None, repr=False, compare=False)
    _compiling: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def game(self) -> str:
        return self.view.GAME.id

    @property
    def kind(self) -> str:
        return self.info.kind

    @property
    def scores_label(self) -> str:
        return self.info.label

    def acquire(self) -> tuple[Programs, bool]:
        """``(programs, compiled)``: the agent's request path, compiled by this call if it was not
        (``compiled``), marked as the most recently used. The caller's reference keeps the programs alive."""
        with self._compiling:
            programs, compiled = self._programs, False
            if programs is None:
                programs = programs_for(self.agent, self.info.values, observable(self.view), keep=self.keep_programs)
                game_answer(self, [], human_first=False, play=True, programs=programs)
                self._programs, self.ready, compiled = programs, True, True
        if self.bound is not None:
            self.bound.used(self)
        return programs, compiled

    def compile(self) -> bool:
        """Compile the agent's request path once (:meth:`acquire`); True if this call compiled it."""
        if self.ready:
            return False
        return self.acquire()[1]

    def describe(self) -> dict:
        return {"name": self.name, "kind": self.kind, "stochastic": bool(self.agent.stochastic),
                "scores_label": self.scores_label, "ready": self.ready}


@dataclass
class Menu:
    """The opponents of one game: ``entries`` by lower-case canonical name, ``aliases`` -> an entry's key."""

    view: Any
    entries: dict[str, Entry] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)

    @property
    def game(self) -> str:
        return self.view.GAME.id

    @property
    def default(self) -> str | None:
        """The first of the game's preferred opponents on offer, else the first one."""
        return next((self.entries[n.lower()].name for n in self.view.DEFAULT_OPPONENTS if n.lower() in self.entries),
                    next((e.name for e in self.entries.values()), None))

    def lookup(self, name: str) -> Entry | None:
        k = name.strip().lower()
        keys = [k] if self.game == registry.DEFAULT or k.startswith(f"{self.game}/") else [k, f"{self.game}/{k}"]
        for k in keys:
            entry = self.entries.get(k) or self.entries.get(self.aliases.get(k, ""))
            if entry is not None:
                return entry
        return None

    def describe(self) -> dict:
        entries = list(self.entries.values())
        return {"id": self.game, "name": self.view.NAME, "agents": [e.describe() for e in entries],
                "default": self.default, "max_moves": self.view.GAME.max_steps, "page": self.view.PAGE,
                "warming_up": [e.name for e in entries if e.pinned and not e.ready]}


def mode_of(spec: str) -> str | None:
    """``"sto"`` / ``"det"`` when ``spec`` names its mode, else None."""
    _, sep, mode = spec.rpartition(":")
    return mode.lower() if sep and mode.lower() in ("sto", "det") else None


def variants(spec: str) -> list:
    """The agents a menu name stands for, its default mode first: both modes where it has both."""
    default = agents.load(spec)
    if mode_of(spec) is not None:
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


def default_menu() -> list[str]:
    """The default game's names on the default menu: every agent ``agents.load`` knows, :data:`SEARCH_MENU`
    and :data:`MINIMAX_MENU`."""
    known = agents.known_names()
    return known + [n for n in SEARCH_MENU + MINIMAX_MENU if n not in known]


class Catalogue:
    """The opponents on offer; lookup by name (case-insensitive) or alias.

    ``names``: the default game's agent names (None: :func:`default_menu`); ``paths``: checkpoints;
    ``game_agents``: per other game id, the names offered for it (None: its default menu); ``load=False``
    leaves the loading to :meth:`load` or :meth:`start`. ``warm``: the agents the warm-up compiles and that
    stay compiled: None (all), :data:`DEFAULTS` (each game's default opponent) or names; ``keep``: at most
    this many others stay compiled (None: no limit, their programs held for the process)."""

    def __init__(self, names: Iterable[str] | None = None, paths: Iterable[str] = (), log=print,
                 game_agents: Mapping[str, Iterable[str]] | None = None, *, load: bool = True,
                 warm: Iterable[str] | str | None = None, keep: int | None = None):
        self.warm = warm if warm is None or warm == DEFAULTS else list(warm)
        if isinstance(warm, str) and warm != DEFAULTS:
            raise ValueError(f"warm must be None, {DEFAULTS!r} or a list of names, got {warm!r}")
        self.bound = Bound(keep)
        self.specs = None if names is None else list(names)
        self.paths = list(paths)
        self.game_agents = {g: list(v) for g, v in (game_agents or {}).items() if v is not None}
        unknown = sorted(set(self.game_agents) - set(registry.with_views()) | ({registry.DEFAULT} & set(self.game_agents)))
        if unknown:
            raise ValueError(f"no other game {unknown[0]!r} to offer agents for; games: {', '.join(registry.with_views())}")
        self.log = log
        self.menus: dict[str, Menu] = {gid: Menu(registry.view(gid)) for gid in registry.with_views()}
        self.background: threading.Thread | None = None  # the thread that warms the agents up
        self.loaded = threading.Event()
        self._lock = threading.Lock()
        if load:
            self.load()

    # ---- loading

    @property
    def entries(self) -> dict[str, Entry]:
        """The default game's entries."""
        return self.menus[registry.DEFAULT].entries

    def _offer(self, menu: Menu, agent) -> bool:
        """Add ``agent`` to ``menu`` if it can play the game; False if it cannot."""
        playing = agents.for_game(agent, menu.view.GAME)
        if playing is None:
            return False
        name = agents.canonical_name(playing)
        entry = Entry(name, playing, menu.view, describe(playing, menu.view), pinned=self.warm is None,
                      bound=self.bound, keep_programs=self.bound.keep is None)
        with self._lock:
            menu.entries.setdefault(name.lower(), entry)
        return True

    def _alias(self, menu: Menu, spec: str, agent) -> None:
        """``spec`` without a mode names ``agent``, its default mode, in ``menu``."""
        if mode_of(spec) is None:
            alias = spec.strip().lower()
            if menu.game != registry.DEFAULT and not alias.startswith(f"{menu.game}/"):
                alias = f"{menu.game}/{alias}"
            playing = agents.for_game(agent, menu.view.GAME)
            if playing is not None:
                menu.aliases.setdefault(alias, agents.canonical_name(playing).lower())

    def _add(self, menu: Menu, spec: str, strict: bool) -> None:
        """Offer every mode of ``spec`` in ``menu``; a ``ValueError`` if ``strict`` and one cannot play the game."""
        found = variants(spec)
        for agent in sorted(found, key=lambda a: a.name):
            if not self._offer(menu, agent) and strict:
                gid = menu.game
                raise ValueError(f"agent {agent.name!r} cannot play {menu.view.NAME}: only random, pure MCTS "
                                 f"(mcts<N>) and agents trained on {menu.view.NAME} ({gid}/<name>) can")
        self._alias(menu, spec, found[0])

    def load(self) -> None:
        """Load every menu (names asked for fail loudly; an agent of the default menu that does not
        load is logged and skipped)."""
        if self.loaded.is_set():
            return
        main = self.menus[registry.DEFAULT]
        for spec in self.specs if self.specs is not None else default_menu():
            try:
                self._add(main, spec, strict=True)
            except Exception as e:  # e.g. a checkpoint still being written: offer the others
                if self.specs is not None:  # asked for by name: fail loudly
                    raise
                self.log(f"c4jax play: skipping agent {spec!r}: {type(e).__name__}: {e}")
        for path in self.paths:  # checkpoints given on the command line: fail loudly
            self._add(main, path, strict=True)
        if not main.entries:
            raise ValueError("no agents to play against")
        for gid, menu in self.menus.items():
            if gid == registry.DEFAULT:
                continue
            if gid in self.game_agents:
                for spec in self.game_agents[gid]:
                    self._add(menu, spec, strict=True)
                continue
            for entry in list(main.entries.values()):
                self._offer(menu, entry.agent)
            for alias, target in main.aliases.items():
                self._alias(menu, alias, main.entries[target].agent)
            for name in agents.known_names(gid) if self.specs is None else []:  # the default menu: the game's own
                try:
                    self._add(menu, name, strict=False)
                except Exception as e:  # a damaged checkpoint: offer the others
                    self.log(f"c4jax play: skipping agent {name!r}: {type(e).__name__}: {e}")
        self._pin()
        self.loaded.set()

    def _pin(self) -> None:
        """Pin the agents of ``warm``; ``ValueError`` for a name on no menu."""
        if self.warm is None:
            return
        if self.warm == DEFAULTS:
            found = [self.menus[g].entries[self.menus[g].default.lower()] for g in self.games()]
        else:
            found = []
            for name in self.warm:
                entry = next((e for e in (self.menus[g].lookup(name) for g in self.games()) if e is not None), None)
                if entry is None:
                    raise ValueError(f"cannot warm up {name!r}: no menu offers it; agents: {', '.join(self._names_all())}")
                found.append(entry)
        for entry in found:
            entry.pinned = True

    def _names_all(self) -> list[str]:
        return [e.name for e in self._all()]

    def warm_set(self) -> list[str]:
        """The names of the agents the warm-up compiles and that are never released (once loaded)."""
        return [e.name for e in self._all() if e.pinned]

    # ---- lookup

    def games(self) -> list[str]:
        """The ids of the games on offer (the default game first, then those with an opponent)."""
        return [gid for gid, m in self.menus.items() if gid == registry.DEFAULT or m.entries]

    def names_of(self, game: str = registry.DEFAULT) -> list[str]:
        with self._lock:
            return [e.name for e in self.menus[game].entries.values()]

    def names(self) -> list[str]:
        return self.names_of(registry.DEFAULT)

    def menu(self, game: str) -> Menu:
        return self.menus[game]

    def get(self, name: Any, game: str = registry.DEFAULT) -> Entry:
        """The opponent ``name`` of ``game``'s menu (waiting for the loading if need be);
        :class:`RequestError` if there is none."""
        menu = self.menus.get(game)
        if menu is not None and not menu.entries and not self.loaded.is_set():
            self.loaded.wait(LOAD_WAIT)
        if menu is None or (game != registry.DEFAULT and not menu.entries):
            raise RequestError(f"game {str(game)[:40]!r} is not served here: no opponent plays it")
        what = "agents" if game == registry.DEFAULT else f"{menu.view.NAME} agents"
        if not isinstance(name, str) or not name.strip():
            raise RequestError(f"'agent' must be a non-empty string; known {what}: {', '.join(self.names_of(game))}")
        entry = menu.lookup(name)
        if entry is None and not self.loaded.is_set():
            self.loaded.wait(LOAD_WAIT)
            entry = menu.lookup(name)
        if entry is None:
            raise RequestError(f"unknown agent {name[:80]!r}; known {what}: {', '.join(self.names_of(game))}")
        return entry

    def describe(self) -> dict:
        """``GET /api/agents``' menus: the default game's at the top level, every game's under
        ``games``, the warm set's agents not compiled yet and whether more are loading."""
        with self._lock:
            menus = [self.menus[gid].describe() for gid in self.games()]
        main = menus[0]
        return {"agents": main["agents"], "default": main["default"], "games": menus,
                "warming_up": [n for m in menus for n in m["warming_up"]], "loading": not self.loaded.is_set()}

    # ---- warm-up

    def _all(self) -> list[Entry]:
        with self._lock:
            return [e for m in self.menus.values() for e in m.entries.values()]

    def warm_up(self, log=print, workers: int | None = None, search: str = "background") -> float:
        """Compile the request path of every agent of the warm set; returns the seconds it took.
        A few threads compile at once, default opponents first; with ``search="background"`` search agents
        compile one at a time in a daemon thread (``background``) after this returns."""
        if search not in ("now", "background"):
            raise ValueError(f"search must be 'now' or 'background', got {search!r}")
        t0 = time.perf_counter()
        key(True), key(False)
        entries = [e for e in self._all() if e.pinned]
        defaults = {self.menus[g].default for g in self.games()}
        entries.sort(key=lambda e: e.name not in defaults)
        later = [e for e in entries if e.kind == "search"] if search == "background" else []
        now = [e for e in entries if e not in later]
        done = [0]
        lock = threading.Lock()

        def one(entry: Entry, background: bool = False) -> None:
            t = time.perf_counter()
            if entry.compile():
                end = time.perf_counter()
                note = f", in the background, {end - t0:.0f} s after the warm-up began" if background else ""
                with lock:
                    done[0] += 1
                    log(f"  [{done[0]}/{len(entries)}] {entry.name:<24} ready ({end - t:.1f} s{note})")

        with ThreadPoolExecutor(max_workers=workers or min(4, os.cpu_count() or 1)) as pool:
            list(pool.map(one, now))
        for gid in self.games():  # the game's replay, with a warm agent (compiled by now; the default opponent first)
            menu = self.menus[gid]
            first = sorted((e for e in menu.entries.values() if e.pinned),
                           key=lambda e: (e in later, e.name != menu.default))
            if first:
                game_answer(first[0], [], human_first=True, play=False)
        seconds = time.perf_counter() - t0
        if later:
            log(f"  compiling {len(later)} search agents in the background: "
                f"{', '.join(e.name for e in later)} (a first move before then waits for its compile)")

            def background() -> None:
                for entry in later:
                    try:
                        one(entry, background=True)
                    except Exception as e:  # a bug: the first request for it will report it
                        log(f"  {entry.name}: background compile failed: {type(e).__name__}: {e}")

            self.background = threading.Thread(target=background, name="c4jax-play-warm-up", daemon=True)
            self.background.start()
        return seconds

    def start(self, log=print) -> threading.Thread:
        """Load the menus and compile the warm set in a daemon thread while the server answers;
        logs ``c4jax play: ready in X s`` at the end."""
        t0 = time.perf_counter()

        def run() -> None:
            try:
                self.load()
            except Exception as e:
                self.loaded.set()  # requests stop waiting: they get "unknown agent"
                log(f"c4jax play: cannot load the agents: {type(e).__name__}: {e}")
                return
            warm, others = self.warm_set(), len(self._all()) - len(self.warm_set())
            if others:
                bound = "" if self.bound.keep is None else f"; at most {self.bound.keep} of them stay compiled"
                log(f"c4jax play: compiling {len(warm)} agents (batch of 1): {', '.join(warm)}; the other {others} "
                    f"compile when first asked for{bound} ...")
            else:
                log(f"c4jax play: compiling {len(warm)} agents (batch of 1) so that no move waits for jit ...")
            try:
                self.warm_up(log=log, search="now")
            except Exception as e:  # a bug: the first request for that agent will report it
                log(f"c4jax play: the warm-up failed: {type(e).__name__}: {e}")
                return
            log(f"c4jax play: ready in {time.perf_counter() - t0:.1f} s")  # experiments/bench_*.py read this line

        self.background = threading.Thread(target=run, name="c4jax-play-start", daemon=True)
        self.background.start()
        return self.background
