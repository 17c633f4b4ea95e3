"""Registering a game never breaks a test: the game-generic tests pass with a third game in the package.

The test copies the project to a temporary folder, adds the guide's tic-tac-toe there as a game of the
package (docs/guide/extend.md, "Adding a game": its files in ``c4jax/games/tic_tac_toe/`` with an
``__init__.py``, one line in ``GAMES``; the copy's files tracked by git as a clone's are) and runs, in that copy and in a subprocess (whose own
subprocesses see the game too), the default tests of every test file that reads the registry. Those
files then take tic-tac-toe as one of the registered games; nothing is written outside the temporary
folder.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from guide_games import guide_files
from scripts import ROOT

PACKAGE = "c4jax.games.tic_tac_toe"
REGISTRY_LINE = f'    "tic_tac_toe": "{PACKAGE}.kit:KIT",\n'
# what the copy leaves out: version control, environments, runs and build outputs
LEFT_OUT = shutil.ignore_patterns(".git", ".venv", "venv", "runs", "longruns", "build", "data", "*.egg-info",
                                  "__pycache__", ".pytest_cache", "node_modules")


def registry_readers(tests) -> list[str]:
    """The test files under ``tests`` (a folder) that read the game registry (``GAMES``), relative to its
    parent, sorted."""
    return sorted(str(path.relative_to(tests.parent)) for path in tests.rglob("test_*.py")
                  if re.search(r"\bGAMES\b", path.read_text()))


def add_tic_tac_toe(root) -> None:
    """The guide's tic-tac-toe as a game of the package in the copy ``root``: its files with their imports
    in the package, an ``__init__.py`` and the registry line."""
    folder = root / "c4jax" / "games" / "tic_tac_toe"
    folder.mkdir()
    for rel, text in guide_files("tictactoe").items():
        (folder / rel.split("/", 1)[1]).write_text(re.sub(r"\btictactoe\b", PACKAGE, text))
    (folder / "__init__.py").write_text('"""Tic-tac-toe (docs/guide/extend.md)."""\n')
    registry = root / "c4jax" / "games" / "__init__.py"
    text = registry.read_text()
    anchor = '    "checkers": "c4jax.games.checkers.kit:KIT",\n'
    assert text.count(anchor) == 1, "the registry's GAMES no longer has the line this test adds after"
    registry.write_text(text.replace(anchor, anchor + REGISTRY_LINE))


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_the_game_generic_tests_pass_with_a_third_game_in_the_package(tmp_path):
    root = tmp_path / "project"
    shutil.copytree(ROOT, root, symlinks=True, ignore=LEFT_OUT)
    add_tic_tac_toe(root)
    for command in (["git", "init", "-q"], ["git", "add", "-A"]):  # a clone's files, as the docs tests list them
        subprocess.run(command, cwd=root, check=True, capture_output=True)
    files = registry_readers(root / "tests")
    assert "tests/games/test_card.py" in files and "tests/games/test_testing.py" in files
    env = {**os.environ, "PYTHONPATH": str(root)}  # the copy's package, not the installed one

    def pytest_in_copy(*args):
        return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", *args, *files],
                              cwd=root, env=env, capture_output=True, text=True, timeout=3500)

    seen = subprocess.run([sys.executable, "-c", "import c4jax.games as g; print(g.__file__, *sorted(g.GAMES))"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout.split()
    assert seen == [str(root / "c4jax" / "games" / "__init__.py"), "checkers", "connect_four", "tic_tac_toe"]
    listed = pytest_in_copy("--collect-only", "-q")
    assert listed.returncode == 0, listed.stdout[-3000:] + listed.stderr[-3000:]
    third = [line for line in listed.stdout.splitlines() if "tic_tac_toe" in line]
    assert len(third) >= 10, listed.stdout[-3000:]  # the registry's tests take the new game as one of theirs
    ran = pytest_in_copy("-q")
    assert ran.returncode == 0, ran.stdout[-6000:] + ran.stderr[-3000:]
    assert re.search(r"\d+ passed", ran.stdout) and " failed" not in ran.stdout
