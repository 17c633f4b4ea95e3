"""``python -m c4jax.play`` / ``c4jax-play`` / ``c4jax play``: serve the play UI on http://127.0.0.1:PORT/."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import sys
import threading
import webbrowser
from typing import Annotated

import tyro

from c4jax import games
from c4jax.io import cliargs, compile_cache, interrupt
from c4jax.io.cliargs import fail

DESCRIPTION = "Play in the browser against the c4jax agents (a local web server on 127.0.0.1)."
KEEP = 4  # --keep's default (docs/results/play_server.md, "Memory")


@dataclasses.dataclass(frozen=True)
class Args:
    port: int = 8000
    """Port to listen on (0 picks a free one)."""
    open: bool = False
    """Open the page in a web browser."""
    agent: Annotated[tuple[str, ...], tyro.conf.UseAppendAction, tyro.conf.arg(metavar="PATH[:sto|:det]")] = ()
    """Also offer the agent of this checkpoint directory."""
    agents: Annotated[tuple[str, ...] | None, tyro.conf.arg(metavar="NAME [NAME ...]",
                                                           help_behavior_hint="(default: every known agent)")] = None
    """Agent names to offer instead of every known agent, e.g. 'random 1steplA supervised' (commas work too).
    The default mode and the other one are both offered."""
    warm: Annotated[tuple[str, ...], tyro.conf.arg(metavar="NAME [NAME ...]")] = ("default",)
    """The agents compiled at the start and kept compiled: 'default' (each game's default opponent), 'all'
    (every agent: about 2 GB of memory, and minutes with a cold compilation cache) or names (commas work
    too). The others compile when first asked for."""
    keep: int = KEEP
    """At most this many agents besides those of --warm stay compiled: when one more compiles, the least
    recently used is released and compiles again when next asked for (0: no limit)."""
    verbose: bool = False
    """Log every request."""


def _field(game: str) -> str:
    return f"{game}_agents"


def args_class() -> type:
    """:class:`Args` with ``--<game>-agents NAMES`` for every other game that the play UI plays."""
    extra = [(_field(game), Annotated[tuple[str, ...] | None, tyro.conf.arg(
        metavar="NAME [NAME ...]", help=f"Agents to offer for {games.card_of(game).title} (space- or comma-separated).",
        help_behavior_hint=f"(default: those of the {games.card_of(games.DEFAULT).title} menu that can play it, "
                           f"random and pure MCTS, and the agents shipped for it: {game}/<name>)")], None)
             for game in games.with_views() if game != games.DEFAULT]
    return dataclasses.make_dataclass("Args", extra, bases=(Args,), frozen=True)


def _names(texts: tuple[str, ...] | None) -> list[str] | None:
    """The names of ``--agents a b,c`` (space- or comma-separated); None when the flag is absent."""
    if texts is None:
        return None
    return [n.strip() for text in texts for n in text.split(",") if n.strip()]


def main(argv: list[str] | None = None, prog: str = "c4jax-play") -> int:
    """Serve the UI until Ctrl-C; ``prog`` names the command in ``--help`` and in its error lines. Without
    ``argv`` (``c4jax-play``, ``python -m c4jax.play``) it reads the process' arguments and sets up the
    persistent compilation cache first (``c4jax play`` has done that already)."""
    if argv is None:
        argv = compile_cache.configure(sys.argv[1:])
    args = cliargs.parse(args_class(), argv, prog, description=DESCRIPTION)
    if not 0 <= args.port <= 65535:
        fail(f"--port must be in 0..65535, got {args.port}")
    if args.keep < 0:
        fail(f"--keep must be >= 0 (0: no limit), got {args.keep}")
    with interrupt.guard(on_interrupt=_stopped):  # Ctrl-C or SIGTERM: gone at once, also while warming up
        return _serve(args)


def _stopped(signum: int = signal.SIGINT) -> None:
    """End the server at once with the signal's exit status (130 for Ctrl-C, 143 for SIGTERM): the
    warm-up's compiles run in threads that the interpreter's exit would wait for."""
    print("\nc4jax play: stopped", flush=True)
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    os._exit(interrupt.EXIT_STATUSES.get(signum, 128 + signum))


def _serve(args) -> int:
    cliargs.starting("c4jax play: loading the agents ...")
    from c4jax.play import server

    names = _names(args.agents)
    game_agents = {game: _names(getattr(args, _field(game))) for game in games.with_views()
                   if getattr(args, _field(game), None) is not None}
    warm = _names(args.warm) or ["default"]
    named = [n for n in warm if n.lower() not in ("default", "all")]
    if named and len(named) < len(warm):
        fail(f"--warm takes 'default', 'all' or agent names, not both: {' '.join(args.warm)}")
    warm = named or (None if warm[0].lower() == "all" else server.DEFAULTS)
    err = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    try:
        catalogue = server.Catalogue(names, list(args.agent), log=err, game_agents=game_agents, load=False,
                                     warm=warm, keep=args.keep or None)
        if names is not None or args.agent or game_agents or named:  # asked for by name: load now, a bad one is exit 2
            print("c4jax play: loading agents ...", flush=True)
            catalogue.load()
    except Exception as e:  # an unknown agent name, an unreadable checkpoint
        fail(f"cannot load the agents: {e if isinstance(e, (ValueError, OSError)) else f'{type(e).__name__}: {e}'}")
    try:  # bind first, so that a busy port fails at once
        httpd = server.make_server(catalogue, port=args.port, verbose=args.verbose)
    except OSError as e:
        fail(f"cannot listen on 127.0.0.1:{args.port}: {e.strerror or e}")
    host, port = httpd.server_address[:2]
    url = f"http://{host}:{port}/"
    print(f"c4jax play: serving on {url}  (Ctrl-C to stop)", flush=True)
    # the page answers at once; agents still loading or compiling are listed on it as warming up
    catalogue.start(log=lambda m: print(m, flush=True))
    if args.open:
        threading.Timer(0.2, webbrowser.open, args=(url,)).start()
    try:
        httpd.serve_forever()
    finally:
        httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
