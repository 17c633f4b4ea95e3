"""The registry behind ``agents.load(name)``: the one place that knows every kind of agent.

Names follow ``<agent>[:sto|:det]`` everywhere (CLI, tournament, UI), case
insensitive: ``random``, ``1steplA`` .. ``4steplA`` (``:det`` by default: centre
tie-break; ``:sto``: random tie-break), the trained agents shipped in
``checkpoints/`` (``supervised``: greedy by default, ``supervised:sto`` samples),
``perfect`` (the exact solver, needs the ``solver`` extra), ``mcts<N>`` (pure MCTS with N
simulations per move, proven values on; ``mcts<N>nosolve`` without them; ``-c<C>`` after either sets
the UCT constant), ``openspiel-mcts<N>`` (OpenSpiel's C++ MCTS as an external reference,
needs the ``bench-search`` extra), or the path of any checkpoint directory (which plays the game
it was trained on).

``@<N>`` before the suffix plays a trained agent with N simulations of search per move:
``ppo@200``, ``dqn@500:sto``, ``runs/x@64``. An AlphaZero-style search checkpoint searches with
its own network (N replaces its saved number; ``alphazero@0`` plays its raw policy); any other
network (``supervised``, ``reinforce``, ``ppo``, ``dqn``, ``dueling_dqn``, a checkpoint path)
plays pure MCTS with its policy, or its softmaxed Q-values, as the prior
(:mod:`c4jax.agents.guided`), and ``@0`` is the network itself. ``:det`` (the default for a
search) plays the most visited move, ``:sto`` samples the root visits. N is 0 ..
:data:`c4jax.agents.search.MAX_SIMULATIONS`; the built-in agents take no ``@``. ``@<N>solve``
(N >= 1) searches with proven wins and losses backed up (MCTS-Solver): ``alphazero@256solve``
plays PUCT with its network and proven values (:class:`c4jax.agents.network_search.AlphaZeroAgent`),
``ppo@200solve`` the guided search with them; ``@<N>nosolve`` searches without them. ``@policy``
is ``@0`` (how a search agent without simulations is named). Without
either, a search checkpoint searches as its metadata says (the shipped ``alphazero`` with proven
values) and a guided search without them.

Those are Connect Four's agents. ``<game>/<agent>`` names an agent of another game of
:data:`c4jax.games.GAMES`: ``checkers/random``, ``checkers/mcts500`` and the agents shipped in
``checkpoints/<game>/`` (``checkers/alphazero``); the agents that only play Connect Four
(N-step lookahead, the perfect player, the thesis' networks) have no such name.
"""

from __future__ import annotations

import importlib.resources
import os
import re
from pathlib import Path
from typing import Callable

from c4jax.agents.base import Agent
from c4jax.games import DEFAULT as CONNECT_FOUR_ID
from c4jax.games import GAMES
from c4jax.games import make as make_game
from c4jax.agents.baselines import NStepLookahead, RandomAgent
from c4jax.agents.guided import guided
from c4jax.agents.network import agent_from_checkpoint
from c4jax.agents.network_search import agent_from_search_checkpoint, is_search_checkpoint
from c4jax.agents.search import MAX_SIMULATIONS, SOLVE
from c4jax.agents.search_agent import MCTSAgent
from c4jax.agents.openspiel_mcts import openspiel_available, openspiel_mcts
from c4jax.agents.perfect import load_perfect, solver_available
from c4jax.io.checkpoint import METADATA_FILE

# name (lower case) -> factory(mode) where mode is "sto", "det" or None (the agent's default).
_REGISTRY: dict[str, Callable[[str | None], Agent]] = {}
# (compiled pattern, factory(match, mode), example name listed by known_names())
_PATTERNS: list[tuple[re.Pattern, Callable[[re.Match, str | None], Agent], str]] = []


def checkpoints_dir() -> Path:
    """Where shipped agents live: ``$C4JAX_CHECKPOINTS``, else the package's own ``c4jax/checkpoints/``
    (package data, so an installed wheel has them; the repository's ``checkpoints/`` links to it)."""
    if "C4JAX_CHECKPOINTS" in os.environ:
        return Path(os.environ["C4JAX_CHECKPOINTS"])
    shipped = importlib.resources.files("c4jax") / "checkpoints"
    if not isinstance(shipped, Path):  # a zipped install: Orbax reads directories of real files
        raise RuntimeError(f"the shipped checkpoints are not on a file system ({shipped!r}); install c4jax "
                           "unzipped or set C4JAX_CHECKPOINTS to a folder of checkpoints")
    return shipped


def checkpoint_path(name: str | os.PathLike) -> Path:
    """The checkpoint directory that ``name`` means: a shipped agent's name (``supervised``,
    ``checkers/alphazero``, case insensitive) is its folder in :func:`checkpoints_dir`, anything else is
    read as a path (a checkpoint or run directory). A name that is neither comes back as that path,
    for the reader to report as missing. ``--init-from`` resolves its value through this."""
    text = os.fspath(name).strip()
    game, rest = _split_game(text)
    if game is not None:  # <game>/<agent>
        root = checkpoints_dir() if game == CONNECT_FOUR_ID else checkpoints_dir() / game
        folder = root / rest.lower()
    elif "/" in text or os.sep in text or text.startswith("."):
        return Path(text)
    else:
        folder = checkpoints_dir() / text.lower()
    if text and (folder / METADATA_FILE).is_file():
        return folder
    return Path(text)


def register(name: str, factory: Callable[[str | None], Agent]) -> None:
    """Make ``load(name[:sto|:det])`` build an agent with ``factory(mode)``."""
    _REGISTRY[name.lower()] = factory


def register_pattern(pattern: str, factory: Callable[[re.Match, str | None], Agent], example: str) -> None:
    """Make every name that fully matches ``pattern`` (case insensitive) load as
    ``factory(match, mode)``; ``known_names()`` lists ``example``. Exact names win over patterns."""
    _PATTERNS.append((re.compile(pattern, re.IGNORECASE), factory, example.lower()))


def _shipped() -> list[str]:
    root = checkpoints_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / METADATA_FILE).is_file())


def _shipped_for(game: str) -> list[str]:
    """The agents shipped for ``game`` (not Connect Four) in ``checkpoints/<game>/``, as ``<game>/<name>``."""
    root = checkpoints_dir() / game
    if not root.is_dir():
        return []
    return sorted(f"{game}/{p.name}" for p in root.iterdir() if (p / METADATA_FILE).is_file())


def known_names(game: str = CONNECT_FOUR_ID) -> list[str]:
    """The agents of ``game`` (a :data:`c4jax.games.GAMES` id): for Connect Four the built-in agents
    and the trained agents shipped in :func:`checkpoints_dir` (``perfect`` only when the ``solver``
    extra is installed); for another game its ``<game>/<agent>`` names."""
    if game != CONNECT_FOUR_ID:
        if game not in GAMES:
            raise ValueError(f"unknown game {game!r}; choose one of {sorted(GAMES)}")
        return sorted([f"{game}/random", f"{game}/mcts1000"] + _shipped_for(game))
    builtin = {n for n in _REGISTRY if n != "perfect" or solver_available()}
    examples = {example for _, _, example in _PATTERNS if not example.startswith("openspiel-") or openspiel_available()}
    return sorted(builtin | examples | set(_shipped()))


def game_of(agent) -> str:
    """The id of the game ``agent`` plays (Connect Four for agents without a ``game``)."""
    return getattr(getattr(agent, "game", None), "id", CONNECT_FOUR_ID)


def canonical_name(agent) -> str:
    """The one name of ``agent`` that :func:`load` builds it from and that the play UI lists:
    its ``name``, with ``<game>/`` in front for an agent of another game than Connect Four whose
    name has no game (``checkers/random``, ``checkers/mcts200:det``). A checkpoint path's agent
    keeps its name (the path says the game)."""
    name, game = agent.name, game_of(agent)
    if game == CONNECT_FOUR_ID or "/" in name or os.sep in name:
        return name
    return f"{game}/{name}"


def for_game(agent, game):
    """``agent`` as a player of ``game`` (a game object), or None when it cannot play it: an agent
    of that game with ``act_states`` plays it as it is; an agent that declares ``plays_any_game``
    (no learned parameters: uniform random, pure MCTS) switches games. Networks trained on one
    board cannot play another."""
    if not callable(getattr(agent, "act_states", None)):
        return None
    if game_of(agent) == game.id:
        return agent
    if getattr(agent, "plays_any_game", False):
        return agent.replace(game=game)
    return None


def _split_game(name: str) -> tuple[str | None, str]:
    """``("checkers", "mcts500:det")`` for ``"checkers/mcts500:det"``; ``(None, name)`` when ``name``
    has no ``<game>/`` prefix of a known game (a path, or a Connect Four name)."""
    head, sep, rest = name.strip().partition("/")
    if sep and head.lower() in GAMES and rest and "/" not in rest and os.sep not in rest:
        return head.lower(), rest
    return None, name


def load(name: str) -> Agent:
    """Build an agent from ``<agent>[:sto|:det]`` (case insensitive) or ``<checkpoint dir>[:sto|:det]``.

    ``<agent>`` is a built-in (``random``, ``1steplA`` .. ``4steplA``, ``perfect``,
    ``mcts<N>``, ``openspiel-mcts<N>``) or a trained agent shipped in ``checkpoints/`` (``supervised``, ...);
    anything else is read as the path of a checkpoint directory. Without a suffix an agent
    plays its default mode. A trained agent takes ``@<simulations>`` before the suffix:
    ``alphazero@200``, ``runs/alphazero@0:sto`` (0: its raw policy, sampled), ``ppo@200``
    (the network's prior guiding pure MCTS; ``ppo@0`` is the network alone; see the module
    docstring). ``<game>/<agent>`` names another game's agent (``checkers/mcts500``,
    ``checkers/alphazero@0``; see the module docstring).
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"agent name must be a non-empty string, got {name!r}")
    game, rest = _split_game(name)
    if game is not None and game != CONNECT_FOUR_ID:
        return _load_for_game(game, rest, name)
    if game == CONNECT_FOUR_ID:
        name = rest
    base, sep, mode = name.strip().rpartition(":")
    if not sep:
        base, mode = mode, ""
    mode_l = mode.lower() if sep else None
    if mode_l not in (None, "sto", "det"):
        if Path(name).exists():  # a checkpoint path that happens to contain ':'
            base, mode_l = name, None
        else:
            raise ValueError(f"agent {name!r}: the suffix must be ':sto' or ':det', got ':{mode}'")
    factory = _REGISTRY.get(base.lower())
    if factory is not None:
        return factory(mode_l)
    sims, solve = None, None
    stem, at, count = base.rpartition("@")
    if at and not Path(base).exists():
        base, (sims, solve) = stem, _simulations(name, count)
        if base.lower() in _REGISTRY:
            raise ValueError(f"agent {name!r}: '@<simulations>' is for trained agents (a shipped network or a "
                             f"checkpoint), not for {base!r}")
    is_path = "/" in base or os.sep in base or base.startswith(".")
    if not is_path and not Path(base).exists():
        for pattern, make, _ in _PATTERNS:
            m = pattern.fullmatch(base.strip())
            if m:
                if sims is not None:
                    raise ValueError(f"agent {name!r}: '@<simulations>' is for trained agents (a shipped network or "
                                     "a checkpoint); pure MCTS takes its simulations in its name, as in 'mcts200'")
                return make(m, mode_l)
    shipped = checkpoints_dir() / base.lower()
    if not is_path and (shipped / METADATA_FILE).is_file():
        return _from_checkpoint(shipped, mode_l, base.lower(), sims, solve)
    if is_path or Path(base).exists():
        return _from_checkpoint(base, mode_l, base, sims, solve)
    raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(known_names())} "
                     "(or give the path of a checkpoint directory)")


def _load_for_game(game: str, rest: str, name: str) -> Agent:
    """``<game>/<agent>[@N][:sto|:det]`` for a game other than Connect Four."""
    base, sep, mode = rest.strip().rpartition(":")
    if not sep:
        base, mode = mode, ""
    mode_l = mode.lower() if sep else None
    if mode_l not in (None, "sto", "det"):
        raise ValueError(f"agent {name!r}: the suffix must be ':sto' or ':det', got ':{mode}'")
    stem, at, count = base.rpartition("@")
    sims, solve = None, None
    if at:
        base, (sims, solve) = stem, _simulations(name, count)
    low = base.lower()
    played = make_game(game)
    if low == "random" and sims is None:
        return _random(mode_l).replace(game=played)
    m = re.fullmatch(r"mcts(.*)", low)
    if m and sims is None:
        return _mcts(m, mode_l).replace(game=played)
    shipped = checkpoints_dir() / game / low
    if (shipped / METADATA_FILE).is_file():
        agent = _from_checkpoint(shipped, mode_l, f"{game}/{low}", sims, solve)
        if game_of(agent) != game:
            raise ValueError(f"agent {name!r}: the checkpoint {str(shipped)!r} plays {game_of(agent)}, not {game}")
        return agent
    raise ValueError(f"unknown {game} agent {name!r}; known {game} agents: {', '.join(known_names(game))} "
                     "(or give the path of a checkpoint directory)")


def _simulations(name: str, count: str) -> tuple[int, bool | None]:
    """``(N, solve)`` of ``<agent>@N`` (solve ``None``: the agent's default), ``<agent>@Nsolve`` (``True``)
    or ``<agent>@Nnosolve`` (``False``): N an integer in 0 .. MAX_SIMULATIONS (>= 1 with either suffix),
    else a ``ValueError`` naming ``name``."""
    if count.lower() == "policy":  # "@policy": the raw policy, as a search agent with 0 simulations is named
        return 0, None
    m = re.fullmatch(r"([^a-z]*)((?:no)?solve)?", count.lower(), flags=re.ASCII)
    digits, flag = (m.group(1), m.group(2)) if m else (count, None)
    if not (digits.isascii() and digits.isdigit()):
        raise ValueError(f"agent {name!r}: '@' must be followed by a number of search simulations, as in "
                         f"'ppo@200' (or 'alphazero@200solve' / 'alphazero@200nosolve' to turn proven values on / "
                         f"off), got {'@' + count!r}")
    if int(digits) > MAX_SIMULATIONS:
        raise ValueError(f"agent {name!r}: at most {MAX_SIMULATIONS} search simulations per move, got {int(digits)}")
    if flag and int(digits) == 0:
        raise ValueError(f"agent {name!r}: proven values need a search: '@<N>{flag}' with N >= 1")
    return int(digits), None if flag is None else flag == "solve"


def _from_checkpoint(directory, mode: str | None, label: str, sims: int | None, solve: bool | None = None) -> Agent:
    """The agent of a checkpoint: an AlphaZero-style one with its search (``sims`` replacing its saved
    number), any other network alone (``sims`` None or 0) or guiding ``sims`` simulations of pure MCTS;
    ``solve``: the search backs up proven values (``None``: as the checkpoint's metadata says; a guided
    search without them)."""
    if is_search_checkpoint(directory):
        return agent_from_search_checkpoint(directory, mode, label=label, num_simulations=sims, solve=solve)
    if not sims:
        return agent_from_checkpoint(directory, mode, label=label)
    # The search's mode is its own (most visited or sampled visits): the network keeps its default.
    return guided(agent_from_checkpoint(directory, None, label=label), sims, deterministic=mode != "sto",
                  solve=bool(solve))


def _random(mode: str | None) -> RandomAgent:
    if mode == "det":
        raise ValueError("agent 'random' has no deterministic mode ('random:det')")
    return RandomAgent()


register("random", _random)
for _n in range(1, 5):
    register(f"{_n}steplA", lambda mode, n=_n: NStepLookahead(n=n, deterministic=mode != "sto"))
register("perfect", load_perfect)


def _mcts(m: re.Match, mode: str | None) -> MCTSAgent:
    """``mcts<N>``, ``mcts<N>solve`` (proven values on) or ``mcts<N>nosolve`` (off), each optionally
    followed by ``-c<C>``, the UCT constant (default: the game's, ``search.default_uct_c``)."""
    rest = m.group(1).lower()
    parsed = re.fullmatch(r"(\d+)((?:no)?solve)?(?:-c(\d+(?:\.\d*)?|\.\d+))?", rest, flags=re.ASCII)
    if parsed is None or not 1 <= int(parsed.group(1)) <= MAX_SIMULATIONS or (
            parsed.group(3) is not None and float(parsed.group(3)) <= 0):
        raise ValueError(f"agent 'mcts{rest}': the number of simulations must be an integer in "
                         f"1..{MAX_SIMULATIONS}, as in 'mcts1000' (or 'mcts1000solve' / 'mcts1000nosolve'), "
                         f"optionally followed by a positive UCT constant, as in 'mcts1000-c0.4'")
    n, flag, c = parsed.groups()
    solve = SOLVE if flag is None else flag == "solve"
    return MCTSAgent(num_simulations=int(n), deterministic=mode == "det", solve=solve,
                     uct_c=None if c is None else float(c))


register_pattern(r"mcts(.*)", _mcts, example="mcts1000")


def _openspiel_mcts(m: re.Match, mode: str | None) -> Agent:
    n = m.group(1)
    if not (n.isascii() and n.isdigit()) or not 1 <= int(n) <= MAX_SIMULATIONS:
        raise ValueError(f"agent 'openspiel-mcts{n}': the number of simulations must be an integer in "
                         f"1..{MAX_SIMULATIONS}, as in 'openspiel-mcts1000'")
    if mode == "det":
        raise ValueError(f"agent 'openspiel-mcts{n}' has no deterministic mode (its rollouts are random; "
                         "the key of the call seeds them)")
    return openspiel_mcts(int(n))


register_pattern(r"openspiel-mcts(.*)", _openspiel_mcts, example="openspiel-mcts1000")
