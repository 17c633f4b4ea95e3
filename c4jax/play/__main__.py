"""``python -m c4jax.play`` / ``c4jax-play`` / ``c4jax play``: serve the play UI on http://127.0.0.1:PORT/."""

from __future__ import annotations

import argparse
import sys
import threading
import webbrowser

from c4jax import games


def _flag(game: str) -> str:
    return f"--{game.replace('_', '-')}-agents"


def build_parser(prog: str = "c4jax-play") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Play Connect Four or Checkers in the browser against the c4jax agents "
                    "(a local web server on 127.0.0.1).",
    )
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000; 0 picks a free one)")
    p.add_argument("--open", action="store_true", help="open the page in a web browser")
    p.add_argument("--agent", action="append", default=[], metavar="PATH[:sto|:det]",
                   help="also offer the agent of this checkpoint directory (repeatable)")
    p.add_argument("--agents", metavar="NAMES",
                   help="comma-separated agent names to offer instead of every known agent "
                        "(e.g. 'random,1steplA,supervised'; the default mode and the other one are both offered)")
    for game in games.VIEWS:
        if game != games.DEFAULT:
            p.add_argument(_flag(game), metavar="NAMES", dest=f"agents_for_{game}",
                           help=f"comma-separated agents to offer for {game} (default: those of the {games.DEFAULT} "
                                f"menu that can play it, random and pure MCTS, and the agents shipped for it: "
                                f"{game}/<name>)")
    p.add_argument("--verbose", action="store_true", help="log every request")
    return p


def main(argv: list[str] | None = None, prog: str = "c4jax-play") -> int:
    """Serve the UI until Ctrl-C; ``prog`` names the command in ``--help`` and in its error lines."""
    args = build_parser(prog).parse_args(argv)
    if not 0 <= args.port <= 65535:
        print(f"{prog}: --port must be in 0..65535, got {args.port}", file=sys.stderr)
        return 2
    from c4jax.play import server

    names = [n.strip() for n in args.agents.split(",") if n.strip()] if args.agents is not None else None
    game_agents = {game: [n.strip() for n in value.split(",") if n.strip()]
                   for game in games.VIEWS if (value := getattr(args, f"agents_for_{game}", None)) is not None}
    err = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    try:
        catalogue = server.Catalogue(names, args.agent, log=err, game_agents=game_agents, load=False)
        if names is not None or args.agent or game_agents:  # asked for by name: load now, a bad one is exit 2
            print("c4jax play: loading agents ...", flush=True)
            catalogue.load()
    except Exception as e:  # an unknown agent name, an unreadable checkpoint
        print(f"{prog}: cannot load the agents: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    try:  # bind first, so that a busy port fails at once
        httpd = server.make_server(catalogue, port=args.port, verbose=args.verbose)
    except OSError as e:
        print(f"{prog}: cannot listen on 127.0.0.1:{args.port}: {e}", file=sys.stderr)
        return 2
    host, port = httpd.server_address[:2]
    url = f"http://{host}:{port}/"
    print(f"c4jax play: serving on {url}  (Ctrl-C to stop)", flush=True)
    # the page answers at once; agents still loading or compiling are listed on it as warming up
    catalogue.start(log=lambda m: print(m, flush=True))
    if args.open:
        threading.Timer(0.2, webbrowser.open, args=(url,)).start()
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        print("\nc4jax play: stopped", flush=True)
    finally:
        httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
