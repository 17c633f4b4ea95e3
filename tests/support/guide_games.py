"""The example games of docs/guide/extend.md, "Adding a game", as the guide prints them: each code block of
that section whose first line is ``# <package>/<file>.py`` is a file of that game's package.

``registered(root, package, game_id)`` writes a package's files (the guide's, or ``files``) under ``root`` with an
empty ``__init__.py``, registers the game (``games.GAMES[game_id] = "<package>.kit:KIT"``, the guide's
registry line) and undoes both on exit.
"""

from __future__ import annotations

import contextlib
import re
import sys
from pathlib import Path

import pytest

from c4jax import games
from scripts import ROOT

GUIDE = ROOT / "docs" / "guide" / "extend.md"


def guide_files(package: str) -> dict[str, str]:
    """``{"<package>/<file>.py": text}`` of the code blocks of "Adding a game" that name a file of ``package``."""
    text = GUIDE.read_text()
    section = text[text.index("\n## Adding a game"):]
    section = section[:section.index("\n## ", 1)]
    files = {}
    for block in re.findall(r"```python\n(.*?)```", section, flags=re.S):
        match = re.fullmatch(rf"# ({package}/\w+\.py)(:.*)?", block.splitlines()[0])
        if match:
            files[match.group(1)] = block
    return files


@contextlib.contextmanager
def registered(root: Path, package: str, game_id: str, files: dict[str, str] | None = None):
    """The guide's game ``package`` (or ``files``, ``{"<package>/<file>.py": text}``) written under ``root`` and
    registered as ``game_id``; yields its game."""
    for rel, text in (files or guide_files(package)).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / package / "__init__.py").touch()
    with pytest.MonkeyPatch.context() as patch:  # the game's folder on sys.path until the caller is done
        patch.syspath_prepend(str(root))
        before = games.GAMES.get(game_id)  # a game registered under the same id, put back on exit
        games.GAMES[game_id] = f"{package}.kit:KIT"  # the registry line
        try:
            yield games.make(game_id)
        finally:
            if before is None:
                del games.GAMES[game_id]
            else:
                games.GAMES[game_id] = before
            for name in [m for m in sys.modules if m == package or m.startswith(f"{package}.")]:
                del sys.modules[name]
