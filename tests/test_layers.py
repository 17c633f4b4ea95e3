"""The package is layered: games -> nets -> io -> agents -> evaluation -> learning -> play -> cli.

A module's layer is its subpackage's, a game's folder (``c4jax/games/<game>/``) included: a game
supplies its players and dataset text as data and pure functions that the upper layers wrap, so it
imports nothing above ``c4jax.games``. Every import goes to a module of an equal or lower layer, no
module imports a private (``_name``) attribute of another module, and there is no import cycle
(in-function imports included; the ``"module:attribute"`` strings a kit names are resolved on use
and are not imports). Modules outside the game folders reach a game through its kit
(``c4jax.games.kit_of``) or the agent registry, and never name a game."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from c4jax import games

ROOT = Path(__file__).resolve().parent.parent / "c4jax"
LAYERS = ["_version", "games", "nets", "io", "agents", "evaluation", "learning", "play", "cli"]


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """(imported c4jax module, names imported from it) for every import statement of the file."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names if a.name.startswith("c4jax")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("c4jax"):
            names = [a.name for a in node.names]
            # "from c4jax.games.connect_four import env" imports the module c4jax.games.connect_four.env
            subs = [f"{node.module}.{n}" for n in names if (ROOT.parent / f"{node.module}.{n}".replace(".", "/")).with_suffix(".py").exists()
                    or (ROOT.parent / f"{node.module}.{n}".replace(".", "/")).is_dir()]
            out += [(s, []) for s in subs] + [(node.module, [n for n in names if f"{node.module}.{n}" not in subs])]
    return out


MODULES = {_module_name(p): p for p in ROOT.rglob("*.py")}


GAME_IDS = sorted(p.name for p in (ROOT / "games").iterdir() if p.is_dir() and (p / "__init__.py").exists())


def _game_folder(module: str) -> bool:
    """Whether ``module`` lies in a game's folder (c4jax.games.<game>.*, the package itself included)."""
    parts = module.split(".")
    return len(parts) > 2 and parts[1] == "games" and parts[2] in GAME_IDS


def _layer(module: str) -> int | None:
    """The layer of ``module``: its subpackage's."""
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) >= 2 and parts[1] in LAYERS else None


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer(m) is not None))
def test_imports_only_go_down_the_layers(module):
    mine = _layer(module)
    for imported, names in _imports(MODULES[module]):
        theirs = _layer(imported)
        assert imported == "c4jax" or theirs is not None, f"{module} imports {imported}"
        if imported != "c4jax":
            assert theirs <= mine, f"{module} (layer {LAYERS[mine]}) imports {imported} (layer {LAYERS[theirs]})"
        private = [n for n in names if n.startswith("_") and n != "__version__"]
        assert not private, f"{module} imports private names {private} from {imported}"


@pytest.mark.parametrize("game", GAME_IDS)
def test_game_folders_import_nothing_above_games(game):
    """A game's folder (its rules, kit, view and players) imports only ``c4jax.games`` (and
    ``c4jax._version``), so every layer can ask a kit; the kit's "module:attribute" strings are not
    imports."""
    for module, path in MODULES.items():
        if module == f"c4jax.games.{game}" or module.startswith(f"c4jax.games.{game}."):
            for imported, _ in _imports(path):
                assert imported.startswith("c4jax.games") or imported == "c4jax._version", (module, imported)


def test_no_import_cycles():
    graph = {m: {i for i, _ in _imports(p) if i in MODULES and i != m} for m, p in MODULES.items()}
    # a package's __init__ importing its own submodules is not a cycle through them
    for m in graph:
        graph[m] = {i for i in graph[m] if not (MODULES[m].name == "__init__.py" and i.startswith(m + "."))}
        graph[m] = {i for i in graph[m] if not m.startswith(i + ".") or MODULES[i].name != "__init__.py"}
    state: dict[str, int] = {}

    def visit(m, stack):
        state[m] = 1
        for n in graph[m]:
            if state.get(n) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack + [m, n]))
            if n not in state:
                visit(n, stack + [m])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [])


def test_games_core_imports_nothing_above_it():
    """The games package outside the game folders (the protocol, the kit, the registry of games...)
    imports only the games layer and never a game's folder (it names kits by strings)."""
    for module, path in MODULES.items():
        if module.startswith("c4jax.games") and not _game_folder(module):
            for imported, _ in _imports(path):
                assert (imported.startswith("c4jax.games") and not _game_folder(imported)) \
                    or imported == "c4jax._version", (module, imported)


GAME_TITLES = tuple(games.card_of(g).title for g in games.GAMES)  # "Connect Four", ... (a folder need not be named as its id)


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of a module's documentation strings: docstrings and the strings that document a field or
    flag (a string statement; they may name a game as an example)."""
    return {id(n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}


def _names_a_game(path: Path) -> list[str]:
    """How the module names a particular game: imports of a game's package, and string constants (not
    docstrings) that are a game's id, an agent name under it ("checkers/...") or hold a game's title."""
    found = [i for i, _ in _imports(path) if _game_folder(i)]
    tree = ast.parse(path.read_text())
    docs = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            if node.value in GAME_IDS or any(node.value.startswith(f"{g}/") for g in GAME_IDS) \
                    or any(t in node.value for t in GAME_TITLES):
                found.append(repr(node.value))
    return found


def test_no_module_outside_games_names_a_game():
    """Code outside c4jax.games asks a game's kit (c4jax.games.kit_of) or the agent registry: it never imports
    a game's folder, spells a game's id or writes a game's title in a message."""
    outside = {m: p for m, p in MODULES.items() if not m.startswith("c4jax.games.") and m != "c4jax.games"}
    named = {m: n for m, n in ((m, _names_a_game(p)) for m, p in sorted(outside.items())) if n}
    assert not named, f"modules that name a game (ask its kit, c4jax.games.kit_of): {named}"


# Where code outside c4jax.games may read the default game (c4jax.games.DEFAULT): the argument defaults
# of the commands and of the public Python entry points, the play server's default for a request or link
# that names no game, and the agent names (a name without a "<game>/" prefix is one of the default game's
# agents). Everything below them takes the game it is given.
DEFAULT_GAME_EDGE = {
    "c4jax": "`c4jax.env`: the default game's environment module",
    "c4jax.agents.base": "agent names: a name without a prefix is the default game's",
    "c4jax.agents.external": "the Python entry point's game= default",
    "c4jax.agents.registry": "agent names: agents.load's name parsing",
    "c4jax.agents.shipped": "agent names: a shipped agent's name and folder",
    "c4jax.cli.tournament": "the command's --agents default",
    "c4jax.cli.training": "the trainers' --game default",
    "c4jax.cli.watch": "the command's --game default",
    "c4jax.cli.yardstick": "the command's --agents default",
    "c4jax.play.__main__": "the command's menus and their --help",
    "c4jax.play.answers": "a request's game default (a request without \"game\")",
    "c4jax.play.catalogue": "agent names: the menu whose names carry no prefix",
    "c4jax.play.gymnasium_env": "the Python entry point's game= default",
    "c4jax.play.links": "a link's game default (a link without ?game=)",
    "c4jax.play.pettingzoo_env": "the Python entry point's game= default",
}


def _reads_the_default_game(path: Path) -> bool:
    """Whether the module reads ``c4jax.games.DEFAULT``: ``from c4jax.games import DEFAULT``,
    ``c4jax.games.DEFAULT`` or ``<alias of c4jax.games>.DEFAULT``."""
    tree = ast.parse(path.read_text())
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "c4jax.games" and \
                any(a.name == "DEFAULT" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "c4jax":
            aliases |= {a.asname or a.name for a in node.names if a.name == "games"}
        if isinstance(node, ast.Import):
            aliases |= {a.asname for a in node.names if a.name == "c4jax.games" and a.asname}
    return any(isinstance(n, ast.Attribute) and n.attr == "DEFAULT" and ast.unparse(n.value) in aliases | {"c4jax.games"}
               for n in ast.walk(tree))


def test_the_default_game_is_read_only_at_the_edge():
    readers = {m for m, p in MODULES.items() if not m.startswith("c4jax.games") and _reads_the_default_game(p)}
    assert readers <= set(DEFAULT_GAME_EDGE), f"modules below the edge that read games.DEFAULT: {readers - set(DEFAULT_GAME_EDGE)}"
    assert readers == set(DEFAULT_GAME_EDGE), f"no longer read there: {set(DEFAULT_GAME_EDGE) - readers}"
