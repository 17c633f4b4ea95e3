"""The guide's example third game (tic-tac-toe, docs/guide.md "Adding a game"), registered from a
temporary folder: every code block of that section that starts with ``# tictactoe/<file>.py`` is
written under the folder, which goes on ``sys.path``, and the registry line is added."""

from __future__ import annotations

import contextlib
import re
import sys
from pathlib import Path

from c4jax import games

from scripts import ROOT

GUIDE = ROOT / "docs" / "guide.md"
GAME_ID = "tic_tac_toe"


def guide_files() -> dict[str, str]:
    """``{relative path: text}`` of the code blocks of "Adding a game" that name their file."""
    text = GUIDE.read_text()
    section = text[text.index("\n## Adding a game"):]
    section = section[:section.index("\n## ", 1)]
    files = {}
    for block in re.findall(r"```python\n(.*?)```", section, flags=re.S):
        first = block.splitlines()[0]
        match = re.fullmatch(r"# (tictactoe/\w+\.py)(:.*)?", first)
        if match:
            files[match.group(1)] = block
    return files


@contextlib.contextmanager
def registered(root: Path, monkeypatch):
    """Write the guide's files under ``root``, register the game and yield it (``games.make``);
    afterwards the registry line and the game's modules are gone again (``monkeypatch``: a
    ``pytest.MonkeyPatch`` that puts ``root`` on ``sys.path`` until it is undone)."""
    files = guide_files()
    assert {"tictactoe/game.py", "tictactoe/kit.py", "tictactoe/view.py"} <= set(files), sorted(files)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "tictactoe" / "__init__.py").touch()
    monkeypatch.syspath_prepend(str(root))
    games.GAMES[GAME_ID] = "tictactoe.kit:KIT"  # the registry line
    try:
        yield games.make(GAME_ID)
    finally:
        del games.GAMES[GAME_ID]
        for name in [m for m in sys.modules if m == "tictactoe" or m.startswith("tictactoe.")]:
            del sys.modules[name]
