"""Build a static site that plays the agents in any browser: Connect Four and Checkers, and any game whose view is a grid.

``c4jax export-web ARGS`` and ``python experiments/export_web.py ARGS`` run this module (the same flags and
``--help``; docs/guide/export.md). The first build fetches onnxruntime-web with ``npm ci`` into
``~/.cache/c4jax/web`` (``$C4JAX_WEB_CACHE``). Needs the ``onnx`` extra."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Annotated, Sequence

import tyro

from c4jax.cli import website
from c4jax.io import cliargs, interrupt
from c4jax.io.cliargs import fail
from c4jax.io.runlog import display_path


@dataclasses.dataclass(frozen=True)
class Args:
    out: Path
    """The folder of the site (created; the files the site has are replaced)."""
    agents: Annotated[tuple[str, ...], tyro.conf.arg(
        metavar="AGENT [AGENT ...]", help_behavior_hint="(default: every shipped network agent of every game)")] = ()
    """The agents the page offers."""
    check_positions: int = website.CHECK_POSITIONS
    """Random positions of its game each exported model is checked on against its JAX agent."""


def main(args: Args) -> dict:
    if args.check_positions < 1:
        fail(f"--check-positions must be positive, got {args.check_positions}")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        fail(f"--out {str(out)!r} is a file; give a folder")
    names = list(args.agents) or website.shipped_agents()
    if len(set(names)) != len(names):
        fail(f"--agents names an agent twice: {' '.join(names)}")
    cliargs.starting(f"export-web: {len(names)} agent{'s' * (len(names) != 1)} into {out} ...")
    from c4jax.agents import onnx_export

    try:
        manifest = website.build(out, names, args.check_positions)
    except website.SiteError as e:
        fail(str(e))
    except onnx_export.OnnxUnavailable as e:
        fail(str(e))
    except OSError as e:
        fail(f"cannot write the site into {str(out)!r}: {e.strerror or e}")
    size = website.site_size(out)
    print(f"wrote {display_path(out)}: {len(manifest['agents'])} agents, {size['total'] / 2**20:.1f} MiB "
          f"(models {size['models'] / 2**20:.1f} MiB, {manifest['runtime']} {size['runtime'] / 2**20:.1f} MiB)")
    print(f"serve it with: python -m http.server -d {display_path(out)} 8000  (then open http://127.0.0.1:8000/)")
    return {"path": str(out), "agents": [a["name"] for a in manifest["agents"]], "size": size}


def cli(argv: Sequence[str] | None = None, prog: str | None = None) -> dict:
    """Parse ``argv`` (default: this process' arguments) and run (:mod:`c4jax.cli`)."""
    args = cliargs.parse(Args, sys.argv[1:] if argv is None else argv, prog, description=__doc__.split("\n")[0])
    with interrupt.guard():
        return main(args)
