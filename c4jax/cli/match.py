"""Play protocol matches between two agents and print A's win rate per match key and their mean.

    python experiments/match.py mcts1000:det openspiel-mcts1000 --keys 5
    c4jax match checkers/alphazero checkers/mcts500 --json runs/az_vs_mcts500.json

A and B are agent names as ``c4jax.agents.load`` takes them (or checkpoint directories); the game is
theirs (``checkers/...`` names play Checkers). Each match is the 100-game tournament protocol
(design.md §9: every opening once with each agent first; other games than Connect Four use their own
openings), played with key ``k`` of ``--keys`` keys split from ``--seed``; the win rate counts a draw
as half a win. Deterministic agents play the same match for every key: more keys only average the
sampling of stochastic ones. ``--json`` writes every match's record (per seat, per game).
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import sys
import time
from typing import Annotated, Sequence

import jax
import tyro

from c4jax import agents
from c4jax.evaluation import protocol
from c4jax.io import cliargs, interrupt
from c4jax.io.cliargs import fail


@dataclasses.dataclass(frozen=True)
class Args:
    agent_a: Annotated[str, tyro.conf.Positional, tyro.conf.arg(metavar="A")]
    """Agent A, whose win rate is reported (a name as in agents.load, or a checkpoint directory)."""
    agent_b: Annotated[str, tyro.conf.Positional, tyro.conf.arg(metavar="B")]
    """Agent B, the opponent."""
    keys: int = 1
    """Matches to play, one per key split from --seed."""
    seed: int = 0
    """Seed of the match keys (the agents' sampling)."""
    json: cliargs.OptionalPath = None
    """Write every match's record to this JSON file (its directory is created)."""


def main(args: Args) -> dict:
    if args.keys < 1:
        fail(f"--keys must be at least 1, got {args.keys}")
    try:
        agent_a, agent_b = agents.load(args.agent_a), agents.load(args.agent_b)
    except (ValueError, ImportError, OSError) as e:
        fail(str(e))
    game_a, game_b = agents.game_of(agent_a), agents.game_of(agent_b)
    if game_a != game_b:
        fail(f"{args.agent_a!r} plays {game_a} and {args.agent_b!r} plays {game_b}")
    if args.json is not None:
        if args.json.is_dir():
            fail(f"--json {str(args.json)!r} is a directory; give the path of a file")
        try:
            args.json.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            fail(f"cannot write --json {str(args.json)!r}: {e.strerror or e}")
    game = getattr(agent_a, "game", None)
    rates, records = [], []
    print(f"{args.agent_a} vs {args.agent_b} ({game_a}), {args.keys} match(es) of "
          f"{protocol.GAMES_PER_MATCH} games, seed {args.seed}")
    for k, key in enumerate(jax.random.split(jax.random.key(args.seed), args.keys)):
        t0 = time.perf_counter()
        result = protocol.match(agent_a, agent_b, key, game=game)
        seconds = time.perf_counter() - t0
        total = result.total
        rates.append(result.win_rate)
        records.append(result.to_dict(games=True))
        print(f"key {k}: win rate {result.win_rate:.3f}  (W {total.wins} D {total.draws} L {total.losses}; "
              f"A first {result.a_first.win_rate:.2f}, B first {result.b_first.win_rate:.2f})  {seconds:.0f} s")
    mean = statistics.fmean(rates)
    spread = f" ± {statistics.stdev(rates):.3f} (sd over keys)" if len(rates) > 1 else ""
    print(f"mean win rate of A: {mean:.3f}{spread}")
    out = {"agent_a": args.agent_a, "agent_b": args.agent_b, "game": game_a, "seed": args.seed,
           "win_rates": rates, "mean": mean, "matches": records}
    if args.json is not None:
        try:
            args.json.write_text(json.dumps(out, indent=1) + "\n")
        except OSError as e:
            fail(f"cannot write --json {str(args.json)!r}: {e.strerror or e}")
        print(f"wrote {args.json}")
    return out


def cli(argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Parse ``argv`` (default: this process' arguments) and run; ``prog`` names the command in ``--help``
    (``c4jax match``; default: the script's file name)."""
    args = cliargs.parse(Args, sys.argv[1:] if argv is None else argv, prog, description=__doc__.split("\n")[0])
    with interrupt.guard():
        return main(args)
