"""The static site of ``c4jax export-web`` (docs/guide/export.md describes its files): ``index.html`` and
``static/``, the play server's page with the browser engine of ``c4jax/web/`` in place of the server's;
onnxruntime-web in ``ort/`` (fetched once by ``npm ci`` into a cache folder); each agent's model in
``models/`` (exported in a process of its own and checked against the JAX agent; tensors several of a
game's models share stored once as external data), the ONNX rules of each game ``rules.js`` does not
write, and ``agents.json``, what the page needs (each game's page description as the play server sends
it) with the SHA-256 of every file."""

from __future__ import annotations

import functools
import hashlib
import http.server
import importlib.resources
import json
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from c4jax import agents, games
from c4jax._version import __version__
from c4jax.agents import shipped
from c4jax.io import atomic
from c4jax.io.metadata import METADATA_FILE

SERVER_PAGE = ("index.html", "style.css", "app.js", "board.js", "links.js", "served.js")  # of c4jax/play/static
ENGINE_FILES = ("engine.js", "rules.js", "onnx_rules.js", "search.js")  # of c4jax/web
PAGE_FILES = ("index.html", *(f"static/{name}" for name in SERVER_PAGE[1:] + ENGINE_FILES))  # in the site
NPM_FILES = ("package.json", "package-lock.json")
RUNTIME_PACKAGE = "onnxruntime-web"
# onnxruntime-web's files the page loads: the WebAssembly-only ES module, its loader and binary
RUNTIME_FILES = ("ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")
CACHE_ENV = "C4JAX_WEB_CACHE"
CHECK_POSITIONS = 200  # random positions each exported model is checked on against its JAX agent
RULES_CHECK_GAMES = 8  # games of random moves the exported rules of a game are checked on against it
EXPORT_WORKERS = 2  # processes converting models at the same time (at most the CPU count)


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
    root = shipped.checkpoints_dir()
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


def shared_file(game_id: str) -> str:
    """The file of the parameter tensors that several models of a game share: ``models/shared_checkers.bin``."""
    return f"models/shared_{game_id}.bin"


def entry(name: str, agent: Any, exported: Any, path: str, digest: str, data: tuple[dict, ...] = ()) -> dict:
    """The page's description of one agent: ``name``, ``game``, ``file``, ``sha256``, ``data`` (external
    weight files, absent when none), ``output`` (``policy`` or ``q``), ``mode`` (``det`` / ``sto``) and, for an
    AlphaZero network whose checkpoint searches with proven values (what the page's search does), its ``search``
    settings."""
    from c4jax.agents import onnx_export
    from c4jax.agents.network_search import SOLVE_PB_C_INIT, AlphaZeroAgent
    from c4jax.agents.search import PB_C_BASE

    game = exported.game
    meta = onnx_export.metadata(exported)
    out = {"name": name, "game": game.id, "file": path, "sha256": digest, **({"data": list(data)} if data else {}),
           "output": meta["output"], "mode": "det" if not getattr(agent, "stochastic", False) else "sto"}
    if isinstance(exported, AlphaZeroAgent) and (exported.saved_solve or getattr(agent, "solve", False)):
        sims = agent.num_simulations if isinstance(agent, AlphaZeroAgent) else 0
        out["search"] = {"simulations": sims, "c_init": SOLVE_PB_C_INIT, "c_base": PB_C_BASE, "solve": True}
        if sims:
            out["mode"] = "det"
    return out


def page_rules() -> tuple[str, ...]:
    """The games whose rules ``rules.js`` writes in JS (the keys of its exported ``GAMES``)."""
    found = re.search(r"export const GAMES = \{([^}]*)\}", (page_folder() / "rules.js").read_text())
    if found is None:
        raise SiteError("the page's rules.js exports no GAMES; reinstall c4jax")
    return tuple(part.split(":")[0].strip() for part in found.group(1).split(",") if part.strip())


def grid_game(game_id: str) -> dict:
    """How the page draws and plays ``game_id``, a game whose rules run as ONNX: ``title``, ``sides``,
    ``rows``, ``cols``, ``click`` (``"cell"`` or ``"column"``) and ``planes`` (observations ``[H, W, 2]``, else
    ``[H, W]``). ``SiteError`` unless its view is a :class:`~c4jax.games.viewbase.GridView`."""
    from c4jax.games.viewbase import GridView

    try:
        view = games.view(game_id)
    except (ValueError, ImportError) as e:
        raise SiteError(f"the page cannot draw {game_id}: {e}") from None
    if not isinstance(view, GridView):
        raise SiteError(f"the page cannot draw {game_id}: it draws {' and '.join(page_rules())} and the games whose "
                        "view is a grid of cells (c4jax.games.viewbase.GridView)")
    return {"title": view.NAME, "sides": list(view.SIDES), "rows": view.rows, "cols": view.cols,
            "click": view.ACTION, "planes": view.planes}


def load_agent(name: str) -> tuple[Any, Any]:
    """``(agent, exportable agent)`` of ``name``; ``SiteError`` for an unknown name, an agent that is no network,
    or an AlphaZero agent searching without proven values (the page's search is PUCT with them, ``solve``)."""
    from c4jax.agents import onnx_export
    from c4jax.agents.network_search import AlphaZeroAgent

    try:
        agent = agents.load(name)
        exported = onnx_export.exportable(agent)
    except (ValueError, OSError) as e:
        raise SiteError(f"cannot export agent {name!r}: {str(e).split('; known agents')[0]}") from None
    if isinstance(agent, AlphaZeroAgent) and agent.num_simulations and not agent.solve:
        raise SiteError(f"cannot export agent {name!r}: it searches with Gumbel MuZero, and the page searches only "
                        f"with PUCT and proven values; export {agent.label}@{agent.num_simulations}solve (that "
                        f"search) or {agent.label}@0 (its raw network)")
    return agent, exported


def export_model(exported: Any):
    """The page's ONNX model of an exportable agent: an AlphaZero network with its value head, no
    shapes of intermediate values."""
    from c4jax.agents import onnx_export
    from c4jax.agents.network_search import AlphaZeroAgent

    model = onnx_export.to_model(exported, value=isinstance(exported, AlphaZeroAgent))
    onnx_export.strip_shape_info(model)
    return model


def convert_file(job_file: str, model_file: str) -> None:
    """In a fresh process: the ONNX model of the pickled job in ``job_file`` (``("agent", exportable)``
    or ``("rules", game, which)``) serialized into ``model_file``. The job carries the caller's import path;
    Ctrl-C is ignored (the parent reports it) and JAX runs on the CPU."""
    import jax

    from c4jax.agents import rules_export

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    jax.config.update("jax_platforms", "cpu")
    path, job = pickle.loads(Path(job_file).read_bytes())
    sys.path[:0] = [p for p in path if p not in sys.path]
    job = pickle.loads(job)
    model = export_model(job[1]) if job[0] == "agent" else rules_export.to_model(job[1], job[2],
                                                                                      widen=rules_export.WEB_WIDEN)
    Path(model_file).write_bytes(model.SerializeToString())


# what each converting process runs: a fresh interpreter, so that it depends on nothing of the caller's
# script (a multiprocessing child would import the caller's main module again)
_CONVERT = "import sys; from c4jax.cli.website import convert_file; convert_file(sys.argv[1], sys.argv[2])"


def _convert_all(jobs: list[tuple[str, tuple]], workers: int | None) -> list:
    """The models of ``jobs`` (``(what, job)`` pairs, :func:`convert_file`'s jobs; ``what`` names
    the job in an error), each converted in a fresh Python process of its own, ``workers`` at a time."""
    from c4jax.agents import onnx_export

    if not jobs:
        return []
    onnx_export.require()  # a one-line error here rather than from each process
    workers = min(workers or EXPORT_WORKERS, os.cpu_count() or 1, len(jobs))
    package_root = str(Path(__file__).resolve().parents[2])  # the c4jax the caller imported, for the processes
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)}
    with tempfile.TemporaryDirectory(prefix="c4jax-export-") as tmp:
        def convert(i: int, what: str, job: tuple):
            job_file, model_file = Path(tmp) / f"{i}.pickle", Path(tmp) / f"{i}.onnx"
            job_file.write_bytes(pickle.dumps((list(sys.path), pickle.dumps(job))))
            done = subprocess.run([sys.executable, "-c", _CONVERT, str(job_file), str(model_file)], env=env,
                                  capture_output=True, text=True)
            if done.returncode != 0 or not model_file.exists():
                last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
                raise SiteError(f"the process exporting {what} failed: {last}")
            return onnx_export.from_bytes(model_file.read_bytes())

        with ThreadPoolExecutor(workers) as pool:
            futures = [pool.submit(convert, i, what, job) for i, (what, job) in enumerate(jobs)]
            return [f.result() for f in futures]


def export_models(named: list[tuple[str, Any]], workers: int | None = None) -> list:
    """The page models (:func:`export_model`) of the exportable agents of ``named`` (``(name,
    agent)`` pairs), each converted in a fresh Python process of its own (see
    :mod:`c4jax.agents.onnx_export` for why), ``workers`` at a time (default: ``EXPORT_WORKERS``,
    at most the CPU count). The agents travel to the processes pickled."""
    return _convert_all([(name, ("agent", exported)) for name, exported in named], workers)


def export_rules(game_ids: list[str], workers: int | None = None) -> dict[str, dict]:
    """``{game: {"init": model, "step": model}}``: the rules of each game of ``game_ids`` as ONNX
    (:func:`c4jax.agents.rules_export.to_model`), each model converted in a process of its own as
    :func:`export_models` converts the networks."""
    from c4jax.agents import rules_export

    jobs = [(f"the {which} rules of {g}", ("rules", games.make(g), which)) for g in game_ids
            for which in rules_export.MODELS]
    models = iter(_convert_all(jobs, workers))
    return {g: {which: next(models) for which in rules_export.MODELS} for g in game_ids}


def rules_file(game_id: str, which: str) -> str:
    """The file of a game's exported rules: ``models/rules_tic_tac_toe_step.onnx``."""
    return f"models/rules_{game_id}_{which}.onnx"


def check_rules(game_id: str, init_path: Path, step_path: Path, plays: int = RULES_CHECK_GAMES, seed: int = 0) -> None:
    """Play ``plays`` games of random legal moves with the written rules (onnxruntime) and the game
    (JAX) side by side; ``SiteError`` at the first view of a position that differs."""
    import jax
    import numpy as np

    from c4jax.agents import rules_export

    game = games.make(game_id)
    runtime_ = rules_export.Runtime.load(game, init_path, step_path)
    step = jax.jit(jax.vmap(game.step))
    rng = np.random.default_rng(seed)
    keys = jax.random.split(jax.random.key(seed), plays)
    state, views = runtime_.init(plays, np.asarray(jax.random.key_data(keys)))
    ref = jax.vmap(game.init)(keys)
    for _ in range(game.max_steps + 1):
        want = jax.device_get(rules_export.views(game, ref))
        for name in rules_export.VIEWS:
            if not np.array_equal(np.asarray(views[name]), np.asarray(want[name])):
                raise SiteError(f"the exported rules of {game_id} differ from the game in {name}; rebuild the site")
        if np.asarray(want["done"]).all():
            return
        legal = np.asarray(want["legal_action_mask"])
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in legal], np.int32)
        state, views = runtime_.step(state, actions)
        ref = step(ref, actions)


def check_file(name: str, exported: Any, path: Path, check_positions: int = CHECK_POSITIONS, seed: int = 0) -> None:
    """Check the written model of agent ``name`` (with the shared weights it refers to) on random
    positions of its game against the JAX agent; ``SiteError`` when it does not reproduce it."""
    import jax

    from c4jax.agents import onnx_export

    game = exported.game
    key = jax.random.key(seed)
    positions = onnx_export.check_positions(game, key, check_positions)
    result = onnx_export.check(exported, path, positions)
    if not result.ok:
        raise SiteError(f"the ONNX graph of {name} does not reproduce the agent ({result.summary()})")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _refers_outside(model) -> bool:
    """Whether the model keeps a parameter tensor in an external data file."""
    return any(t.data_location == t.EXTERNAL for t in model.graph.initializer)


def copy_page(folder: Path, dist: Path) -> None:
    """The page's files and onnxruntime-web's into ``folder``."""
    (folder / "static").mkdir(exist_ok=True)
    for name in PAGE_FILES:
        base = name.split("/")[-1]
        src = page_folder() if base in ENGINE_FILES else page_folder().parent / "play" / "static"
        shutil.copyfile(src / base, folder / name)
    (folder / "ort").mkdir(exist_ok=True)
    for name in RUNTIME_FILES:
        shutil.copyfile(dist / name, folder / "ort" / name)
    licence = dist.parent / "LICENSE"
    if licence.is_file():
        shutil.copyfile(licence, folder / "ort" / "LICENSE")


def build(folder: Path, names: list[str], check_positions: int = CHECK_POSITIONS, log=print) -> dict:
    """Build the site into ``folder`` (created; its own files are replaced) with the agents ``names``;
    returns the written ``agents.json``. Names and games are checked before anything is fetched or written;
    every model is checked against its JAX agent as written (``SiteError`` otherwise)."""
    from c4jax.agents import onnx_export, rules_export

    loaded = [load_agent(name) for name in names]
    game_ids = [exported.game.id for _, exported in loaded]
    grids = {g: grid_game(g) for g in dict.fromkeys(game_ids) if g not in page_rules()}
    dist = runtime(log)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "models").mkdir(exist_ok=True)
    copy_page(folder, dist)
    models = export_models([(name, exported) for name, (_, exported) in zip(names, loaded)])
    rules = export_rules(list(grids))
    data: dict[str, tuple[dict, ...]] = {}
    for game_id in dict.fromkeys(game_ids):
        path = shared_file(game_id)
        mine = [i for i, g in enumerate(game_ids) if g == game_id]
        block = onnx_export.share_initializers([models[i] for i in mine], Path(path).name)
        if block:
            atomic.write_atomic(folder / path, lambda f: f.write(block))
            data[game_id] = ({"file": path, "sha256": sha256(folder / path)},)
            users = [names[i] for i in mine if _refers_outside(models[i])]
            log(f"weights shared by {', '.join(users)}: {path}, {len(block) / 1024:.0f} KiB")
    entries = []
    for name, (agent, exported), model, game_id in zip(names, loaded, models, game_ids):
        path = file_name(name)
        onnx_export.save(model, folder / path)
        check_file(name, exported, folder / path, check_positions)
        uses = data.get(game_id, ()) if _refers_outside(model) else ()
        entries.append(entry(name, agent, exported, path, sha256(folder / path), uses))
        size = (folder / path).stat().st_size
        log(f"exported {name} ({game_id}): {path}, {size / 1024:.0f} KiB, checked")
    for game_id, grid in grids.items():
        files = {}
        for which in rules_export.MODELS:
            path = rules_file(game_id, which)
            onnx_export.save(rules[game_id][which], folder / path)
            files[which] = {"file": path, "sha256": sha256(folder / path)}
        check_rules(game_id, folder / files["init"]["file"], folder / files["step"]["file"])
        grid["rules"] = files
        log(f"exported the rules of {game_id}: {files['init']['file']}, {files['step']['file']}, checked")
    pages = {}
    for game_id in dict.fromkeys(game_ids):  # each game as the play server's GET /api/agents describes it
        view = games.view(game_id)
        pages[game_id] = {"name": view.NAME, "page": view.PAGE, "max_moves": view.GAME.max_steps,
                          **grids.get(game_id, {})}
    manifest = {"c4jax_version": __version__, "runtime": f"{RUNTIME_PACKAGE} {runtime_version()}",
                "agents": entries, "games": pages}
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
