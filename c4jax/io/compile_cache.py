"""JAX's persistent compilation cache for the command-line programs, set at their start by
:func:`configure` (``import c4jax`` never does) by the first rule of :func:`decide` that applies:
``--no-compile-cache`` (off, also for child processes); ``JAX_COMPILATION_CACHE_DIR`` set (JAX's own
settings); ``C4JAX_COMPILE_CACHE`` (a folder, or ``off``/``0``/``false``/``no``); else
``$XDG_CACHE_HOME/c4jax/jax`` (``~/.cache/c4jax/jax``). An uncreatable folder means no cache and a warning.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.util
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

FLAG = "--no-compile-cache"
ENV = "C4JAX_COMPILE_CACHE"
JAX_ENV = "JAX_COMPILATION_CACHE_DIR"
OFF_WORDS = frozenset({"0", "off", "false", "no"})


@dataclass(frozen=True)
class Decision:
    """What :func:`configure` does with JAX's cache: ``"on"`` (in ``folder``), ``"off"``, or ``"jax"``
    (JAX's own settings, from ``JAX_COMPILATION_CACHE_DIR``, left alone); ``why`` says which rule chose it."""

    mode: Literal["on", "off", "jax"]
    folder: Path | None
    why: str


def default_folder(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/c4jax/jax``, or ``~/.cache/c4jax/jax`` without ``XDG_CACHE_HOME``."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "c4jax" / "jax"


def decide(argv: Sequence[str], environ: Mapping[str, str] | None = None) -> tuple[Decision, list[str]]:
    """The cache setting of a command with arguments ``argv`` in ``environ`` (default: this process'
    environment), and ``argv`` without :data:`FLAG`. Changes nothing."""
    env = os.environ if environ is None else environ
    rest = [a for a in argv if a != FLAG]
    if len(rest) < len(argv):
        return Decision("off", None, FLAG), rest
    if env.get(JAX_ENV):
        return Decision("jax", None, JAX_ENV), rest
    own = env.get(ENV, "").strip()
    if own.lower() in OFF_WORDS:
        return Decision("off", None, f"{ENV}={own}"), rest
    if own:
        return Decision("on", Path(own).expanduser(), ENV), rest
    return Decision("on", default_folder(env), "default"), rest


def configure(argv: Sequence[str]) -> list[str]:
    """Set JAX's persistent compilation cache as :func:`decide` says for a program's arguments ``argv``;
    returns them without :data:`FLAG`. Call it before anything compiles; it does not import JAX."""
    decision, rest = decide(argv)
    if decision.mode == "off":
        _with_jax(lambda jax: jax.config.update("jax_enable_compilation_cache", False))
        os.environ[ENV] = "off"  # the processes this one starts (experiments/reproduce.py's stages)
    elif decision.mode == "on":
        try:
            decision.folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            print(f"warning: no compilation cache: cannot create {str(decision.folder)!r} "
                  f"({e.strerror or e}); set {ENV} to another folder, or pass {FLAG}", file=sys.stderr, flush=True)
            return rest
        folder = str(decision.folder)  # JAX_ENABLE_COMPILATION_CACHE=false wins
        _with_jax(lambda jax: jax.config.update("jax_compilation_cache_dir", folder))
    return rest


def configure_script() -> None:
    """:func:`configure` for a script run as ``python experiments/NAME.py ARGS``: drops :data:`FLAG`
    from ``sys.argv`` so that the script's own parser never sees it."""
    sys.argv[1:] = configure(sys.argv[1:])


class _AfterJaxLoads(importlib.abc.MetaPathFinder):
    """An import hook that runs its ``settings`` (``jax module -> None``) once ``jax`` has been executed."""

    def __init__(self) -> None:
        self.settings: list[Callable[[Any], None]] = []

    def find_spec(self, name, path, target=None):
        if name != "jax":
            return None
        sys.meta_path.remove(self)  # the hook's work is done once: the real finders find jax
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        execute, settings = spec.loader.exec_module, self.settings

        def exec_module(module) -> None:
            execute(module)
            for setting in settings:
                setting(module)

        spec.loader.exec_module = exec_module
        return spec


def _with_jax(setting: Callable[[Any], None]) -> None:
    """Run ``setting(jax)`` now if JAX is imported, else as soon as it is (:class:`_AfterJaxLoads`)."""
    if "jax" in sys.modules:
        setting(sys.modules["jax"])
        return
    hook = next((f for f in sys.meta_path if isinstance(f, _AfterJaxLoads)), None)
    if hook is None:
        hook = _AfterJaxLoads()
        sys.meta_path.insert(0, hook)
    hook.settings.append(setting)


def persistent() -> bool:
    """Whether this process writes compiled programs to a persistent cache (however it was set up)."""
    import jax

    return bool(jax.config.jax_enable_compilation_cache and jax.config.jax_compilation_cache_dir)


def compiling(what: str) -> str:
    """``compiling WHAT ...``, with ``(first run only, then cached)`` when the persistent cache is on."""
    return f"compiling {what} (first run only, then cached) ..." if persistent() else f"compiling {what} ..."


ANNOUNCE_AFTER = 5.0  # seconds a program may take to come out of the cache (a big one: over a second) before it counts as compiling
_REQUEST = "/jax/compilation_cache/compile_requests_use_cache"  # a compile that looks in the cache first
_HIT = "/jax/compilation_cache/cache_hits"  # ... found it there
_COMPILED = "/jax/core/compile/backend_compile_duration"  # a compile (or a cache read) ended


class _Announcer:
    """Calls ``say(line)`` once, when a compile request is still unanswered ``after`` seconds on."""

    def __init__(self, line: str, say: Callable[[str], None], after: float):
        self.line, self.say, self.after = line, say, after
        self.said = False
        self.timer: threading.Timer | None = None
        self.lock = threading.Lock()

    def event(self, event: str, **_: object) -> None:
        if event == _REQUEST:
            with self.lock:
                if self.said:
                    return
                if self.timer is not None:
                    self.timer.cancel()
                self.timer = threading.Timer(self.after, self.fire)
                self.timer.daemon = True
                self.timer.start()
        elif event == _HIT:
            self.cancel()

    def duration(self, event: str, _seconds: float, **_: object) -> None:
        if event == _COMPILED:
            self.cancel()

    def cancel(self) -> None:
        with self.lock:
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None

    def fire(self) -> None:
        with self.lock:
            if self.said:
                return
            self.said = True
        self.say(self.line)


def _print(line: str) -> None:
    print(line, flush=True)


@contextlib.contextmanager
def announce(what: str, say: Callable[[str], None] = _print, after: float = ANNOUNCE_AFTER) -> Iterator[None]:
    """Within the block, ``say`` (default: print) :func:`compiling(what) <compiling>` once: at the start
    with the persistent cache off; with it on, only when a compile request is still unanswered
    ``after`` seconds on (JAX's monitoring events)."""
    line = compiling(what)
    if not persistent():
        say(line)
        yield
        return
    from jax import monitoring

    announcer = _Announcer(line, say, after)
    monitoring.register_event_listener(announcer.event)
    monitoring.register_event_duration_secs_listener(announcer.duration)
    try:
        yield
    finally:
        announcer.cancel()
        monitoring.unregister_event_listener(announcer.event)
        monitoring.unregister_event_duration_listener(announcer.duration)
