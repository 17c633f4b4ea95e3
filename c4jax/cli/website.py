"""The static site of ``c4jax export-web``: its page files, onnxruntime-web, the exported agents.

A built site is one folder (nothing outside it is ever requested):

- ``index.html``, ``style.css``, ``app.js`` (the page), ``rules.js`` (both games' rules, checked
  against the JAX games by ``tests/test_export_web_rules.py``), ``search.js`` (AlphaZero's search);
  the page files live in the package folder ``c4jax/web/``;
- ``ort/``: onnxruntime-web's WebAssembly build (``ort.wasm.min.mjs``, its loader and ``.wasm``)
  and its licence, from the npm package pinned by ``c4jax/web/package.json`` and
  ``package-lock.json``; ``npm ci`` fetches it once into a cache folder (:func:`runtime`);
- ``models/<agent>.onnx``: each agent exported by :mod:`c4jax.agents.onnx_export` (an AlphaZero
  network with its value head as a second output) and checked against the JAX agent;
- ``agents.json``: what the page needs to know of each agent (:func:`entry`) and each model's
  SHA-256, so that the page recognises a damaged file.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import importlib.resources
import json
import os
import shutil
import subprocess
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import jax

from c4jax import agents, games
from c4jax._version import __version__
from c4jax.agents import onnx_export
from c4jax.agents.network_search import SOLVE_PB_C_INIT, AlphaZeroAgent
from c4jax.agents.search import PB_C_BASE
from c4jax.evaluation import random_boards
from c4jax.io.checkpoint import METADATA_FILE

PAGE_FILES = ("index.html", "style.css", "app.js", "rules.js", "search.js")
NPM_FILES = ("package.json", "package-lock.json")
RUNTIME_PACKAGE = "onnxruntime-web"
# onnxruntime-web's files the page loads: the WebAssembly-only ES module, its loader and binary
RUNTIME_FILES = ("ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")
CACHE_ENV = "C4JAX_WEB_CACHE"
CHECK_POSITIONS = 200  # random positions each exported model is checked on against its JAX agent


class SiteError(Exception):
    """A site cannot be built (no npm, a failed download, an agent that is no network); one line."""


def page_folder() -> Path:
    """The package folder that holds the page's files and the npm manifest (``c4jax/web``)."""
    folder = importlib.resources.files("c4jax") / "web"
    if not isinstance(folder, Path):
        raise SiteError(f"the site's files are not on a file system ({folder!r}); install c4jax unzipped")
    return folder


def runtime_version() -> str:
    """The pinned onnxruntime-web version (from ``package-lock.json``)."""
    lock = json.loads((page_folder() / "package-lock.json").read_text())
    return lock["packages"][f"node_modules/{RUNTIME_PACKAGE}"]["version"]


def cache_folder() -> Path:
    """Where ``npm ci`` installs the runtime: ``$C4JAX_WEB_CACHE``, else ``~/.cache/c4jax/web``;
    one subfolder per lockfile."""
    base = Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "c4jax" / "web")
    lock = (page_folder() / "package-lock.json").read_bytes()
    return base / hashlib.sha256(lock).hexdigest()[:16]


def runtime(log=print) -> Path:
    """The folder of onnxruntime-web's ``dist`` files, installed by ``npm ci`` from the lockfile into
    :func:`cache_folder` when it is not there yet (Node's npm is then needed, and the npm registry)."""
    folder = cache_folder()
    dist = folder / "node_modules" / RUNTIME_PACKAGE / "dist"
    if all((dist / f).is_file() for f in RUNTIME_FILES):
        return dist
    npm = shutil.which("npm")
    if npm is None:
        raise SiteError(f"building the site needs Node's npm to fetch {RUNTIME_PACKAGE} {runtime_version()} once "
                        f"(into {folder}); install Node.js 18 or later")
    folder.mkdir(parents=True, exist_ok=True)
    for name in NPM_FILES:
        shutil.copyfile(page_folder() / name, folder / name)
    log(f"fetching {RUNTIME_PACKAGE} {runtime_version()} with npm ci into {folder}")
    done = subprocess.run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=folder,
                          capture_output=True, text=True)
    if done.returncode != 0 or not all((dist / f).is_file() for f in RUNTIME_FILES):
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise SiteError(f"npm ci of {RUNTIME_PACKAGE} failed in {folder}: {last[0]}")
    return dist


def shipped_agents() -> list[str]:
    """Every shipped network agent of every game, Connect Four's first (``supervised``, ...,
    ``checkers/alphazero``, ...)."""
    root = agents.checkpoints_dir()
    order = {"alphazero": 0, "supervised": 1, "dqn": 2, "dueling_dqn": 3, "reinforce": 4, "ppo": 5}
    names = sorted((p.name for p in root.iterdir() if (p / METADATA_FILE).is_file()),
                   key=lambda n: (order.get(n, len(order)), n))
    for game in games.GAMES:
        if (root / game).is_dir():
            found = [p.name for p in (root / game).iterdir() if (p / METADATA_FILE).is_file()]
            names += [f"{game}/{n}" for n in sorted(found, key=lambda n: (order.get(n, len(order)), n))]
    return names


def file_name(name: str) -> str:
    """The model file of agent ``name``: ``models/checkers_alphazero.onnx``."""
    return "models/" + "".join(c if c.isalnum() or c in "-_" else "_" for c in name.lower()) + ".onnx"


def entry(name: str, agent: Any, exported: Any, path: str, digest: str) -> dict:
    """The page's description of one agent: its name, game, model file and SHA-256, what the graph
    outputs (``policy`` probabilities or ``q`` values), its default mode (``det``: the best move,
    ``sto``: sampled) and, for an AlphaZero network, its search (the JAX agent's simulations and
    PUCT constants; see ``search.js``)."""
    game = onnx_export.game_of(exported)
    meta = onnx_export.metadata(exported)
    out = {"name": name, "game": game.id, "file": path, "sha256": digest, "output": meta["output"],
           "mode": "det" if not getattr(agent, "stochastic", False) else "sto"}
    if isinstance(exported, AlphaZeroAgent):
        sims = agent.num_simulations if isinstance(agent, AlphaZeroAgent) else 0
        out["search"] = {"simulations": sims, "c_init": SOLVE_PB_C_INIT, "c_base": PB_C_BASE, "solve": True}
        if sims:
            out["mode"] = "det"
    return out


def load_agent(name: str) -> tuple[Any, Any]:
    """``(agent, exportable agent)`` of ``name``; ``SiteError`` for an unknown name or an agent that is no network."""
    try:
        agent = agents.load(name)
        return agent, onnx_export.exportable(agent)
    except (ValueError, OSError) as e:
        raise SiteError(f"cannot export agent {name!r}: {str(e).split('; known agents')[0]}") from None


def export_agent(name: str, agent: Any, exported: Any, folder: Path, check_positions: int = CHECK_POSITIONS,
                 seed: int = 0) -> dict:
    """Export agent ``name`` (:func:`load_agent`'s pair) into ``folder/models/`` (an AlphaZero network
    with its value head), check the file on random positions of its game against the JAX agent, and
    return its :func:`entry`. ``SiteError`` when the check fails."""
    with_value = isinstance(exported, AlphaZeroAgent)
    model = onnx_export.to_model(exported, value=with_value)
    path = file_name(name)
    onnx_export.save(model, folder / path)
    game = onnx_export.game_of(exported)
    key = jax.random.key(seed)
    positions = (random_boards(key, check_positions) if game.id == games.DEFAULT
                 else onnx_export.random_positions(game, key, check_positions))
    result = onnx_export.check(exported, folder / path, positions)
    if not result.ok:
        raise SiteError(f"the ONNX graph of {name} does not reproduce the agent ({result.summary()})")
    digest = hashlib.sha256((folder / path).read_bytes()).hexdigest()
    return entry(name, agent, exported, path, digest)


def copy_page(folder: Path, dist: Path) -> None:
    """The page's files and onnxruntime-web's into ``folder``."""
    src = page_folder()
    for name in PAGE_FILES:
        shutil.copyfile(src / name, folder / name)
    (folder / "ort").mkdir(exist_ok=True)
    for name in RUNTIME_FILES:
        shutil.copyfile(dist / name, folder / "ort" / name)
    licence = dist.parent / "LICENSE"
    if licence.is_file():
        shutil.copyfile(licence, folder / "ort" / "LICENSE")


def build(folder: Path, names: list[str], check_positions: int = CHECK_POSITIONS, log=print) -> dict:
    """Build the site into ``folder`` (created; its own files are replaced) with the agents
    ``names``; returns the written ``agents.json``. The agents are loaded first, so that a wrong
    name fails before anything is fetched or written."""
    loaded = [load_agent(name) for name in names]
    dist = runtime(log)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "models").mkdir(exist_ok=True)
    copy_page(folder, dist)
    entries = []
    for name, (agent, exported) in zip(names, loaded):
        entries.append(export_agent(name, agent, exported, folder, check_positions))
        size = (folder / entries[-1]["file"]).stat().st_size
        log(f"exported {name} ({entries[-1]['game']}): {entries[-1]['file']}, {size / 1024:.0f} KiB, checked")
    manifest = {"c4jax_version": __version__, "runtime": f"{RUNTIME_PACKAGE} {runtime_version()}",
                "agents": entries}
    (folder / "agents.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def site_size(folder: Path) -> dict[str, int]:
    """Bytes of the built site: ``total``, ``models`` and ``runtime`` (``ort/``)."""
    files = [p for p in folder.rglob("*") if p.is_file()]
    size = lambda ps: sum(p.stat().st_size for p in ps)  # noqa: E731
    return {"total": size(files), "models": size(p for p in files if p.parent.name == "models"),
            "runtime": size(p for p in files if p.parent.name == "ort")}


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextmanager
def serve(folder: Path, port: int = 0) -> Iterator[str]:
    """A static file server of ``folder`` on 127.0.0.1 (``port`` 0: any free one) in a thread, for
    the tests and the benchmark; yields its URL (``http://127.0.0.1:PORT/``)."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
