"""Export a network agent's scores to ONNX and check the file against the JAX agent.

``c4jax export-onnx ARGS`` and ``python experiments/export_onnx.py ARGS`` run this module (the same flags
and ``--help``; docs/guide/export.md describes the graph's inputs and outputs and the check). A file that
does not reproduce the agent is removed and the exit code is 1. Needs the ``onnx`` extra."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Annotated, Sequence

import tyro

from c4jax import agents
from c4jax.agents.onnx_opsets import DEFAULT_OPSET, OPSETS
from c4jax.io import cliargs, interrupt
from c4jax.io.cliargs import fail
from c4jax.io.runlog import display_path


@dataclasses.dataclass(frozen=True)
class Args:
    agent: Annotated[str, tyro.conf.Positional, tyro.conf.arg(metavar="AGENT")]
    """Network agent to export (a name as in agents.load, a run directory or a checkpoint path)."""
    out: Path
    """The .onnx file to write (its directory is created)."""
    boards: int = 1000
    """Random positions of the agent's game (its kit's random_start) the written file is checked on."""
    seed: int = 0
    """PRNG seed of the check positions."""
    opset: int = DEFAULT_OPSET
    """ONNX opset of the graph (17..23)."""


def _writable(path: Path) -> None:
    """Fail now (exit 2) if ``path`` cannot be written, before the export does any work."""
    if path.is_dir():
        fail(f"--out {str(path)!r} is a directory; give the path of an .onnx file")
    existing = next(p for p in path.absolute().parents if p.exists())
    if not existing.is_dir():
        fail(f"cannot write --out {str(path)!r}: {str(existing)!r} is not a directory")
    probe = path.with_name(f".{path.name}.probe")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        probe.open("wb").close()
        probe.unlink()
    except OSError as e:
        fail(f"cannot write --out {str(path)!r}: {e.strerror or e}")


def main(args: Args) -> dict:
    if args.boards < 1:
        fail(f"--boards must be positive, got {args.boards}")
    if args.opset not in OPSETS:
        fail(f"--opset must be in {OPSETS.start}..{OPSETS.stop - 1}, got {args.opset}")
    cliargs.starting(f"export-onnx: {args.agent} into {args.out} ...")
    import jax

    from c4jax.agents import onnx_export

    try:
        agent = onnx_export.exportable(agents.load(args.agent))
    except (ValueError, ImportError, OSError) as e:
        fail(f"cannot export agent {args.agent!r}: {str(e).split('; known agents')[0]}")
    out = Path(args.out)
    _writable(out)
    try:
        model = onnx_export.to_model(agent, opset=args.opset)
        onnx_export.save(model, out)
    except onnx_export.OnnxUnavailable as e:
        fail(str(e))
    except OSError as e:
        fail(f"cannot write --out {str(out)!r}: {e.strerror or e}")
    size_kb = out.stat().st_size / 1024
    game = agent.game
    print(f"wrote {display_path(out)} ({size_kb:.0f} KiB): {agent.name} ({game.id}), {onnx_export.describe(agent)}")
    key = jax.random.key(args.seed)
    positions = onnx_export.check_positions(game, key, args.boards)
    result = onnx_export.check(agent, out, positions)
    print(f"onnxruntime vs JAX on {result.summary()}")
    if not result.ok:
        out.unlink(missing_ok=True)
        fail(f"the ONNX graph does not reproduce {agent.name}'s scores ({result.summary()}); "
             f"{display_path(out)} was removed", code=1)
    print("check passed")
    return {"path": str(out), "agent": agent.name, "metadata": onnx_export.metadata(agent),
            "check": dataclasses.asdict(result)}


def cli(argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Parse ``argv`` (default: this process' arguments) and run; ``prog`` names the command in ``--help``
    (``c4jax export-onnx``; default: the script's file name)."""
    args = cliargs.parse(Args, sys.argv[1:] if argv is None else argv, prog, description=__doc__.split("\n")[0])
    with interrupt.guard():
        return main(args)
