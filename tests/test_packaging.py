"""c4jax as a package: the wheel holds every shipped agent and the ``c4jax`` command, and installed
(not editable) into a fresh virtual environment it loads and plays every shipped agent from a
working directory outside the repository. The shipped agents are package data (c4jax/checkpoints,
which the repository's checkpoints/ links to), found through importlib.resources; ``--init-from``
takes a shipped agent's name.

The wheel is built with the installed setuptools (``pip wheel --no-build-isolation``, offline); the
fresh environment reuses this one's dependencies through a ``.pth`` line, so nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import jax
import numpy as np
import pytest

import c4jax
from c4jax import agents
from c4jax.io import checkpoint, outdir
from c4jax.learning import loop
from scripts import ROOT

PACKAGE_CHECKPOINTS = ROOT / "c4jax" / "checkpoints"


def shipped_agents() -> list[str]:
    """The names of the agents in the repository's c4jax/checkpoints (``<game>/<name>`` one level down)."""
    found = [p.relative_to(PACKAGE_CHECKPOINTS) for p in PACKAGE_CHECKPOINTS.rglob(checkpoint.METADATA_FILE)]
    return sorted(p.parent.as_posix() for p in found)


def _clean_env(**extra) -> dict:
    """This process' environment without anything that would point Python or c4jax at the repository."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "C4JAX_CHECKPOINTS", "PYTHONHOME")}
    return {**env, "PYTHONNOUSERSITE": "1", **extra}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of a copy of the package's sources (the build writes nothing into the repository)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(ROOT / "c4jax", src / "c4jax", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                           "--no-cache-dir", "-q", "-w", str(tmp / "dist"), str(src)],
                          cwd=tmp, env=_clean_env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (built,) = (tmp / "dist").glob("c4jax-*.whl")
    return built


def game_folders() -> dict[str, Path]:
    """Each registered game's folder in the package (the folder of the module its registry line names)."""
    from c4jax import games

    return {name: ROOT.joinpath(*where.split(":")[0].split(".")[:-1]) for name, where in games.GAMES.items()}


def test_every_registered_game_s_folder_is_a_package():
    """setuptools' package finder leaves a folder without ``__init__.py`` out of the wheel."""
    folders = game_folders()
    assert {"connect_four", "checkers"} <= set(folders)
    for name, folder in folders.items():
        assert folder.is_relative_to(ROOT / "c4jax" / "games"), (name, folder)
        assert (folder / "__init__.py").is_file(), f"{name}: {folder.relative_to(ROOT)} has no __init__.py"


def test_the_repositorys_checkpoints_folder_is_the_package_data(monkeypatch):
    monkeypatch.delenv("C4JAX_CHECKPOINTS", raising=False)
    assert agents.checkpoints_dir() == Path(c4jax.__file__).parent / "checkpoints"
    assert (ROOT / "checkpoints").resolve() == agents.checkpoints_dir().resolve()  # the path users type
    assert {"supervised", "ppo", "alphazero", "checkers/alphazero"} <= set(shipped_agents())
    monkeypatch.setenv("C4JAX_CHECKPOINTS", "/elsewhere")
    assert agents.checkpoints_dir() == Path("/elsewhere")


def test_the_wheel_lists_every_shipped_agent_and_the_c4jax_command(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        entry_points = next(z.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt"))
    shipped = {f"c4jax/{p.relative_to(ROOT / 'c4jax').as_posix()}" for p in PACKAGE_CHECKPOINTS.rglob("*") if p.is_file()}
    assert len(shipped) > 100 and shipped <= names, sorted(shipped - names)[:5]
    for agent in shipped_agents():  # every Orbax file, down to the deepest folder
        assert f"c4jax/checkpoints/{agent}/metadata.json" in names
        assert any(n.startswith(f"c4jax/checkpoints/{agent}/state-") and "/ocdbt.process_0/d/" in n for n in names)
    assert not any(n.startswith("c4jax/checkpoints") and n.endswith(".py") for n in names)
    assert {"c4jax/cli/main.py", "c4jax/cli/training.py", "c4jax/cli/tournament.py", "c4jax/cli/watch.py",
            "c4jax/games/connect_four/interop.py", "c4jax/agents/pgx_baseline.py",
            "c4jax/evaluation/yardstick_positions.npz", "c4jax/play/static/index.html"} <= names
    for name, folder in game_folders().items():  # every registered game's modules
        modules = {p.relative_to(ROOT).as_posix() for p in folder.glob("*.py")}
        assert f"{folder.relative_to(ROOT).as_posix()}/__init__.py" in modules and modules <= names, name
    assert "c4jax = c4jax.cli.main:main" in entry_points
    assert not any(n.startswith(("experiments/", "tests/", "checkpoints/")) for n in names)


def test_init_from_takes_a_shipped_agents_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no checkpoints/ folder here: the name goes through the registry
    by_name = loop.source_params(loop.LoopConfig(game="connect_four", init_from="supervised"), 128)
    by_path = loop.source_params(loop.LoopConfig(game="connect_four", init_from=str(ROOT / "checkpoints" / "supervised")), 128)
    assert loop.LoopConfig(game="connect_four").init_from == "supervised"
    assert jax.tree.structure(by_name) == jax.tree.structure(by_path)
    for a, b in zip(jax.tree.leaves(by_name), jax.tree.leaves(by_path)):
        np.testing.assert_array_equal(a, b)
    assert agents.checkpoint_path("Supervised") == agents.checkpoints_dir() / "supervised"
    assert agents.checkpoint_path("checkers/alphazero") == agents.checkpoints_dir() / "checkers" / "alphazero"
    assert agents.checkpoint_path("runs/ppo") == Path("runs/ppo")  # a path stays a path
    with pytest.raises(checkpoint.CheckpointError, match="'no_such_agent' does not exist"):
        loop.source_params(loop.LoopConfig(game="connect_four", init_from="no_such_agent"), 128)


def test_a_resume_accepts_the_shipped_checkpoint_named_either_way(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # where the relative path checkpoints/supervised of older runs points
    out = tmp_path / "run"
    checkpoint.save(out / loop.LAST, {"params": {"w": np.zeros(2, np.float32)}},
                    {"config": {"init_from": "checkpoints/supervised", "seed": 0}})
    loop.check_resume_config(out, {"init_from": "supervised", "seed": 0})
    loop.check_resume_config(out, {"init_from": str(ROOT / "c4jax" / "checkpoints" / "supervised"), "seed": 0})
    with pytest.raises(outdir.OutputError, match="init-from 'checkpoints/supervised'"):
        loop.check_resume_config(out, {"init_from": "ppo", "seed": 0})


PLAY_EVERY_AGENT = r"""
import json, sys
from pathlib import Path

import jax
import c4jax
from c4jax import agents, env, games
from c4jax.learning import loop

root = agents.checkpoints_dir()
names = sorted(p.parent.relative_to(root).as_posix() for p in root.rglob("metadata.json"))
played = {}
for name in names:
    agent = agents.load(name)
    game = games.make(agents.game_of(agent))
    key = jax.random.key(0)
    if game.id == "connect_four":
        board = env.observe(env.step(env.init(), 3))
        move = int(agent.act(board[None], key)[0])
        legal = bool(board[0, move] == 0)
    else:
        states = jax.tree.map(lambda x: x[None], game.init(key))
        move = int(jax.jit(agent.act_states)(states, key)[0])
        legal = bool(states.legal_action_mask[0, move])
    played[name] = {"move": move, "legal": legal, "agent": agent.name}
params = loop.source_params(loop.LoopConfig(game="connect_four", init_from="supervised"), 128)
print(json.dumps({"file": c4jax.__file__, "prefix": sys.prefix, "checkpoints": str(root), "played": played,
                  "init_from": sorted(params)}))
"""


@pytest.mark.slow
def test_the_installed_wheel_plays_every_shipped_agent_outside_the_repository(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    # install before the dependencies are visible, so that pip sees no other c4jax there
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                           "-q", str(wheel)], env=_clean_env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    deps = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))  # jax, flax, ... of this env
    # plain path lines: the .pth files in there (this env's editable c4jax among them) are not run
    (site / "c4jax_test_dependencies.pth").write_text("".join(f"{d}\n" for d in deps))
    away = tmp_path / "elsewhere"
    away.mkdir()
    proc = subprocess.run([str(python), "-c", PLAY_EVERY_AGENT], cwd=away, env=_clean_env(), capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(result["file"]).resolve().is_relative_to(venv.resolve()), result["file"]  # not the repository's
    assert Path(result["checkpoints"]).resolve().is_relative_to(site.resolve())
    assert sorted(result["played"]) == shipped_agents()
    assert all(p["legal"] for p in result["played"].values()), result["played"]
    assert {"conv", "dense", "head"} <= set(result["init_from"])
    for argv, usage in ((["--help"], "usage: c4jax {train,"), (["train", "ppo", "--help"], "usage: c4jax train ppo ")):
        proc = subprocess.run([str(venv / "bin" / "c4jax"), *argv], cwd=away, env=_clean_env(), capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 0 and proc.stdout.startswith(usage), proc.stderr[-2000:]
