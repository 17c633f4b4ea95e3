"""Build a static site that plays the agents in any browser: Connect Four and Checkers, and any game whose view is a grid.

``c4jax export-web ARGS`` and ``python experiments/export_web.py ARGS`` run this module (the same
flags and ``--help``).

    c4jax export-web --out site/
    python -m http.server -d site 8000       # then open http://127.0.0.1:8000/

The folder ``--out`` gets the page (HTML, CSS, JS: both games' rules, AlphaZero's search), the
agents exported to ONNX (``models/``, each checked against its JAX agent on random positions) and
onnxruntime-web's WebAssembly runtime (``ort/``), which runs the models in the page. The page
requests nothing outside the folder and needs no server code: any static file server hosts it
(browsers do not run WebAssembly modules from ``file://`` pages). onnxruntime-web is the npm package
pinned by ``c4jax/web/package-lock.json``: the first build runs ``npm ci`` (Node.js with npm, and
the npm registry) into ``~/.cache/c4jax/web`` (``$C4JAX_WEB_CACHE``); later builds reuse it.
Needs the ``onnx`` extra (``pip install -e '.[onnx]'``).

AGENTS (default: every shipped network agent of both games) are names as ``agents.load`` takes
them: ``supervised``, ``dqn``, ``alphazero``, ``checkers/alphazero``, a checkpoint path. An
AlphaZero network is exported with its value head and searches in the page (PUCT with proven
values, as ``agents.load("alphazero@N")``), with a slider for its simulations.
"""

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
    agents: Annotated[tuple[str, ...], tyro.conf.arg(metavar="AGENT [AGENT ...]")] = ()
    """The agents the page offers (default: every shipped network agent of both games)."""
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
    """Parse ``argv`` (default: this process' arguments) and run; ``prog`` names the command in ``--help``
    (``c4jax export-web``; default: the script's file name)."""
    args = cliargs.parse(Args, sys.argv[1:] if argv is None else argv, prog, description=__doc__.split("\n")[0])
    with interrupt.guard():
        return main(args)
