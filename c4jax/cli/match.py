"""Play protocol matches between two agents and print A's win rate per match key and their mean.

``c4jax match`` and ``python experiments/match.py`` run this module (docs/guide/evaluate.md). Each match is
the 100-game protocol (design.md §9) with one of ``--keys`` keys split from ``--seed``; a draw counts half.
``--out DIR`` keeps the matches as they are played, so that ``--resume`` continues a stopped match to the
result it would have had uninterrupted."""

from __future__ import annotations

import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Annotated, Sequence

import tyro

from c4jax import agents
from c4jax.evaluation import match_files
from c4jax.io import atomic, cliargs, interrupt, outdir
from c4jax.io.cliargs import fail

CONFIG_FILE = "match_config.json"  # in --out: the agents and flags of the match, checked by --resume
RESULT_FILE = "match.json"  # in --out: every match's record, written at the end
# what a folder of matches holds (io.outdir's kinds of output)
MATCHES = outdir.Kind(
    noun="match",
    found=lambda d: sorted(p.name for p in (d / n for n in (RESULT_FILE, match_files.PAIRS_FILE,
                                                            match_files.IN_FLIGHT_FILE)) if p.is_file()),
    owned=(RESULT_FILE, CONFIG_FILE, match_files.PAIRS_FILE, match_files.IN_FLIGHT_FILE),
)


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
    out: cliargs.OptionalPath = None
    """Keep the matches in this folder as they are played (each opening pair's games as they end, the match
    in flight), so that an interrupted match continues with --resume; match.json holds the records at the end."""
    resume: bool = False
    """Continue the matches kept in --out (the same agents and flags), with the result of an uninterrupted run."""
    overwrite: bool = False
    """Replace the matches that --out holds."""


def _claim(args: Args, config: dict) -> Path | None:
    """--out made ready for the matches (``None``: no --out); a one-line error for a wrong --resume."""
    if args.out is None:
        if args.resume or args.overwrite:
            fail(f"--{'resume' if args.resume else 'overwrite'} needs --out (the folder that keeps the matches)")
        return None
    try:
        out = outdir.claim(args.out, MATCHES, resume=args.resume, overwrite=args.overwrite)
    except outdir.OutputError as e:
        fail(str(e))
    saved_path = out / CONFIG_FILE
    if args.resume:
        if not saved_path.is_file():
            fail(f"--resume: {str(out)!r} holds no match to continue ({CONFIG_FILE} is missing)")
        try:
            saved = json.loads(saved_path.read_text())
        except (OSError, ValueError) as e:
            fail(f"--resume: cannot read {str(saved_path)!r}: {e}")
        names = {"agent_a": "A", "agent_b": "B"}
        diff = [k for k in config if k in saved and saved[k] != config[k]]
        if diff:
            was = ", ".join(f"{names.get(k, outdir.flag_name(k))} {saved[k]!r}" for k in diff)
            fail(f"--resume: the match in {str(out)!r} was started with other settings ({was}); resume it with "
                 "those, or start a new match (another --out, or --overwrite)")
    else:
        atomic.write_text_atomic(saved_path, json.dumps(config, indent=1) + "\n")
    return out


def _note(out: Path, done: int, total: int) -> None:
    interrupt.set_note(f"{out} holds {done} of {total} opening pairs; the same command with --resume continues "
                       "the match")


def main(args: Args) -> dict:
    if args.keys < 1:
        fail(f"--keys must be at least 1, got {args.keys}")
    cliargs.starting(f"match: {args.agent_a} vs {args.agent_b} ...")
    import jax

    from c4jax.evaluation import protocol, resumable

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
    out_dir = _claim(args, {"agent_a": args.agent_a, "agent_b": args.agent_b, "game": game_a, "keys": args.keys,
                            "seed": args.seed})
    game = getattr(agent_a, "game", None)
    rates, records = [], []
    print(f"{args.agent_a} vs {args.agent_b} ({game_a}), {args.keys} match(es) of "
          f"{protocol.GAMES_PER_MATCH} games, seed {args.seed}")
    total_pairs = args.keys * protocol.NUM_OPENINGS
    for k, key in enumerate(jax.random.split(jax.random.key(args.seed), args.keys)):
        t0 = time.perf_counter()
        if out_dir is None:
            interrupt.set_note(f"nothing of match {k + 1} of {args.keys} is kept (--out DIR keeps a match as it is "
                               "played, for --resume)")
            result = protocol.match(agent_a, agent_b, key, game=game)
        else:
            before = k * protocol.NUM_OPENINGS
            try:
                result = resumable.play(agent_a, agent_b, key, out_dir, index=k, game=game,
                                        on_progress=lambda done: _note(out_dir, before + done, total_pairs))
            except resumable.FolderError as e:
                fail(str(e))
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
    text = json.dumps(out, indent=1) + "\n"
    for path, flag in ((args.json, "--json"), (None if out_dir is None else out_dir / RESULT_FILE, "--out")):
        if path is None:
            continue
        try:
            atomic.write_text_atomic(path, text)
        except OSError as e:
            fail(f"cannot write {flag} {str(path)!r}: {e.strerror or e}")
        print(f"wrote {path}")
    return out


def cli(argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Parse ``argv`` (default: this process' arguments) and run (:mod:`c4jax.cli`)."""
    args = cliargs.parse(Args, sys.argv[1:] if argv is None else argv, prog, description=__doc__.split("\n")[0])
    with interrupt.guard():
        return main(args)
