"""The package is layered: games -> nets -> io -> agents -> evaluation -> learning -> play -> cli.

Every module may import only modules of its own subpackage or of the subpackages before it, no
module imports a private (``_name``) attribute of another module, and there is no import cycle
(in-function imports included)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

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


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


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


# The modules that may import Connect Four's own package (c4jax.games.connect_four) instead of
# taking a game object (c4jax.games.base.Game), each with the reason. Everything else reaches a
# game through the protocol or the registry (c4jax.games.make).
CONNECT_FOUR_ONLY = {
    "c4jax": "re-exports the Connect Four environment as c4jax.env",
    "c4jax.games.interop": "PettingZoo's and pgx's Connect Four observations as its boards",
    "c4jax.agents.base": "validation of public Connect Four boards at the agents' board entry points",
    "c4jax.agents.baselines": "N-step lookahead works on Connect Four bitboards (the thesis' baselines)",
    "c4jax.agents.perfect": "the perfect player (a Connect Four solver)",
    "c4jax.agents.reference": "the thesis' reference implementations of the baselines",
    "c4jax.agents.network": "CNET agents play Connect Four boards (mirror averaging, legal columns)",
    "c4jax.agents.search": "the board entry points rebuild Connect Four states from public boards",
    "c4jax.agents.search_agent": "the board entry points rebuild Connect Four states from public boards",
    "c4jax.agents.guided": "the thesis' networks it guides play Connect Four boards (its default game)",
    "c4jax.agents.network_search": "the board entry points and the CNET's board masking",
    "c4jax.agents.arena": "design.md §3 random Connect Four start positions",
    "c4jax.agents.external": "Python policies (agents.from_callable) are handed Connect Four boards",
    "c4jax.agents.openspiel_mcts": "OpenSpiel's connect_four rebuilt from a Connect Four board",
    "c4jax.evaluation.timing": "Table 5.1's random Connect Four positions",
    "c4jax.evaluation.yardstick": "the perfect-play yardstick of solved Connect Four positions",
    "c4jax.learning.data": "the thesis' supervised dataset (1StepLA on Connect Four)",
    "c4jax.learning.dqn_games": "the thesis' DQN on CNET boards (shaped reward, mirrors)",
    "c4jax.learning.onpolicy": "the thesis' REINFORCE / PPO on CNET boards (shaped reward, mirrors)",
    "c4jax.learning.rewards": "design.md §2's shaped reward and its back-propagation",
    "c4jax.learning.rollouts": "the thesis' self-play batches (shaped reward, draws replaced)",
}


def test_games_import_nothing_above_them():
    for module, path in MODULES.items():
        if module.startswith("c4jax.games"):
            for imported, _ in _imports(path):
                assert imported.startswith("c4jax.games") or imported == "c4jax._version", (module, imported)


def test_only_the_connect_four_stages_import_connect_four():
    for module, path in sorted(MODULES.items()):
        if module.startswith("c4jax.games.connect_four"):
            continue
        direct = [i for i, _ in _imports(path) if i.startswith("c4jax.games.connect_four")]
        if direct:
            assert module in CONNECT_FOUR_ONLY, f"{module} imports {direct[0]}: take a game object instead"
    stale = [m for m in CONNECT_FOUR_ONLY if m in MODULES
             and not any(i.startswith("c4jax.games.connect_four") for i, _ in _imports(MODULES[m]))]
    assert not stale, f"no longer Connect-Four-only: {stale}"


# The modules outside c4jax.games that still name a particular game (import its package, or
# spell its id), each with what it names it for. A module leaves this list when it asks the
# game's kit (c4jax.games.kit_of) instead; the list only shrinks (a stale entry fails).
NAMES_A_GAME = {
    "c4jax": "re-exports the Connect Four environment as c4jax.env",
    "c4jax.games.interop": "PettingZoo's and pgx's Connect Four observations as its boards",
    "c4jax.agents.base": "the [B, 6, 7] board API of the agents",
    "c4jax.agents.baselines": "N-step lookahead on Connect Four bitboards (the thesis' baselines)",
    "c4jax.agents.perfect": "the perfect player (a Connect Four solver)",
    "c4jax.agents.reference": "the thesis' reference implementations of the baselines",
    "c4jax.agents.network": "CNET agents play Connect Four boards",
    "c4jax.agents.search": "Connect Four as the default game of a search",
    "c4jax.agents.search_agent": "the board entry points rebuild Connect Four states from boards",
    "c4jax.agents.guided": "the thesis' networks it guides play Connect Four boards",
    "c4jax.agents.network_search": "the board entry points",
    "c4jax.agents.arena": "design.md §3 random Connect Four start positions",
    "c4jax.agents.external": "Python policies are handed Connect Four boards",
    "c4jax.agents.openspiel_mcts": "OpenSpiel's connect_four rebuilt from a board",
    "c4jax.agents.pgx_baseline": "pgx's Connect Four baseline",
    "c4jax.evaluation.timing": "Table 5.1's random Connect Four positions",
    "c4jax.evaluation.yardstick": "the perfect-play yardstick of solved Connect Four positions",
    "c4jax.learning.data": "the thesis' supervised dataset",
    "c4jax.learning.dqn_games": "the thesis' DQN (shaped reward, mirrors)",
    "c4jax.learning.onpolicy": "the thesis' REINFORCE / PPO (shaped reward, mirrors)",
    "c4jax.learning.rewards": "design.md §2's shaped reward",
    "c4jax.learning.rollouts": "the thesis' self-play batches",
    "c4jax.cli.tournament": "the thesis' tournament texts",
}


def _names_a_game(path: Path) -> list[str]:
    """How the module names a particular game: imports of a game's package and string constants
    that are a game's id (or an agent name under it, "checkers/...")."""
    game_ids = [p.name for p in (ROOT / "games").iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    found = [i for i, _ in _imports(path) if any(i.startswith(f"c4jax.games.{g}") for g in game_ids)]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in game_ids or any(node.value.startswith(f"{g}/") for g in game_ids):
                found.append(repr(node.value))
    return found


def test_no_module_outside_games_names_a_game():
    outside = {m: p for m, p in MODULES.items() if not m.startswith("c4jax.games.") and m != "c4jax.games"}
    for module, path in sorted(outside.items()):
        named = _names_a_game(path)
        if named:
            assert module in NAMES_A_GAME, f"{module} names a game ({named[0]}): ask its kit (c4jax.games.kit_of)"
    stale = [m for m in NAMES_A_GAME if m not in MODULES or not _names_a_game(MODULES[m])]
    assert not stale, f"no longer naming a game: {stale}"
