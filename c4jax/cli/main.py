"""``c4jax``: one command for the lab's programs. Each subcommand hands the rest of its command line
to the module that the script of the same name in ``experiments/`` runs (docs/guide/README.md), so the
flags, defaults and ``--help`` are that script's. A user's mistake is one ``error:`` line and exit status
2; Ctrl-C is one ``interrupted`` line and exit status 130."""

from __future__ import annotations

import functools
import importlib
import sys
from typing import Sequence

from c4jax._version import __version__
from c4jax.io import compile_cache, host_devices, interrupt

# algorithm -> what it trains (c4jax.cli.training's trainers, and c4jax.cli.supervised)
TRAINERS: dict[str, str] = {
    "ppo": "PPO self-play (design.md §7)",
    "dqn": "Vanilla DQN self-play (design.md §7)",
    "dueling_dqn": "Dueling DQN self-play (design.md §7)",
    "reinforce": "REINFORCE with baseline, self-play (design.md §7)",
    "alphazero": "AlphaZero: self-play with search (design.md §8)",
    "supervised": "CNET128 imitating 1StepLA (design.md §6)",
}
# subcommand -> (module, its entry point, what it does); "train" takes an algorithm of TRAINERS first
COMMANDS: dict[str, tuple[str, str, str]] = {
    "train": ("", "", "train an agent: c4jax train {" + ",".join(TRAINERS) + "} [ARGS]"),
    "tournament": ("c4jax.cli.tournament", "cli", "round-robin tournament: tables, ratings, heatmap, report"),
    "play": ("c4jax.play.__main__", "main", "play the agents in the browser (a local web server)"),
    "yardstick": ("c4jax.cli.yardstick", "cli", "grade agents against perfect play"),
    "export-onnx": ("c4jax.cli.export_onnx", "cli", "export a network agent to ONNX and check it"),
    "export-web": ("c4jax.cli.export_web", "cli", "build a static site that plays the agents in any browser"),
    "watch": ("c4jax.cli.watch", "cli", "play one game between two agents: text, SVG, GIF"),
    "match": ("c4jax.cli.match", "cli", "protocol matches between two agents: win rate per key and mean"),
}

EVERY_CORE = ("tournament", "yardstick")  # commands that split their games over one CPU device per core


def usage() -> str:
    """The text of ``c4jax --help``."""
    width = max(map(len, COMMANDS))
    lines = [f"usage: c4jax {{{','.join(COMMANDS)}}} [ARGS]", "",
             "The c4jax lab's programs; `c4jax COMMAND --help` shows a command's flags.", "", "commands:"]
    lines += [f"  {name:<{width}}  {text}" for name, (_, _, text) in COMMANDS.items()]
    indent = " " * (width + 4)
    lines += ["", f"  --version{' ' * (width - 7)}print the version and exit",
              f"  {compile_cache.FLAG}", f"{indent}(any command) compile every program anew, without the persistent",
              f"{indent}compilation cache ({compile_cache.default_folder()}; {compile_cache.ENV}=DIR or off)"]
    return "\n".join(lines)


def train_usage() -> str:
    """The text of ``c4jax train --help``."""
    width = max(map(len, TRAINERS))
    lines = [f"usage: c4jax train {{{','.join(TRAINERS)}}} [ARGS]", "",
             "Train an agent; `c4jax train ALGORITHM --help` shows its flags.", "", "algorithms:"]
    return "\n".join(lines + [f"  {name:<{width}}  {text}" for name, text in TRAINERS.items()])


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``c4jax ARGV`` (default: this process' arguments); returns the exit status (a subcommand's own
    exits leave as ``SystemExit``). Sets up the persistent compilation cache first."""
    try:
        return _dispatch(compile_cache.configure(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:
        print("\n" + interrupt.message(), file=sys.stderr, flush=True)
        return interrupt.EXIT_STATUS


def _dispatch(argv: list[str]) -> int:
    if not argv:
        print(usage(), file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    if command in ("-h", "--help"):
        print(usage())
        return 0
    if command == "--version":
        print(f"c4jax {__version__}")
        return 0
    if command not in COMMANDS:
        return _error(f"c4jax: unknown command {command!r}; choose one of: {', '.join(COMMANDS)} (c4jax --help)")
    if command in EVERY_CORE:
        host_devices.use_every_core()  # before the module imports JAX
    if command == "train":
        if rest[:1] in (["-h"], ["--help"]):
            print(train_usage())
            return 0
        if not rest or rest[0] not in TRAINERS:
            got = f"unknown algorithm {rest[0]!r}" if rest else "no algorithm given"
            return _error(f"c4jax train: {got}; choose one of: {', '.join(TRAINERS)}")
        name, prog, rest = rest[0], f"c4jax train {rest[0]}", rest[1:]
        if name == "supervised":
            run = importlib.import_module("c4jax.cli.supervised").cli
        else:
            run = functools.partial(importlib.import_module("c4jax.cli.training").cli, name)
    else:
        module, entry, _ = COMMANDS[command]
        run, prog = getattr(importlib.import_module(module), entry), f"c4jax {command}"
    result = run(rest, prog=prog)
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    sys.exit(main())
