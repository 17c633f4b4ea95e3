"""The registry behind ``agents.load(name)``: the one place that knows every kind of agent.

Names (case insensitive; docs/guide/api.md): ``[<game>/]<agent>[@<N>[solve|nosolve]|@policy][:sto|:det]``,
``<agent>`` being ``random``, ``mcts<N>[solve|nosolve][-c<C>]``, a shipped agent, a checkpoint or run
directory, or a player of a game's kit (``GameKit.players``). ``@<N>`` searches N simulations per move
(a search checkpoint with its own network, any other as a guided search's prior); ``@0`` and
``@policy`` are the network alone.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable

from c4jax.agents.base import Agent
from c4jax.agents.baselines import RandomAgent
from c4jax.agents.guided import guided
from c4jax.agents.network import agent_from_checkpoint
from c4jax.agents.network_search import agent_from_search_checkpoint, is_search_checkpoint
from c4jax.agents.players import build, number
from c4jax.agents.search import MAX_SIMULATIONS, SOLVE
from c4jax.agents.search_agent import MCTSAgent
from c4jax.agents.shipped import checkpoints_dir, folder_of, in_game, names as shipped_names
from c4jax.games import DEFAULT, GAMES, kit_of
from c4jax.games import make as make_game
from c4jax.games.kit import Player, resolve
from c4jax.io.checkpoint import METADATA_FILE

# name (lower case) -> factory(mode) where mode is "sto", "det" or None (the agent's default).
_REGISTRY: dict[str, Callable[[str | None], Agent]] = {}
# name (lower case) -> whether known_names() lists it now (an agent that needs an optional extra)
_LISTED: dict[str, Callable[[], bool]] = {}
# (compiled pattern, factory(match, mode), example name listed by known_names(), whether it is listed now)
_PATTERNS: list[tuple[re.Pattern, Callable[[re.Match, str | None], Agent], str, Callable[[], bool]]] = []
_GAMES_AGENTS: list[str] = []  # the games whose kit's players are registered (GameKit.players)
_SPELLING: dict[str, str] = {}  # name (lower case) -> its spelling as registered (``1steplA``), what lists show


def checkpoint_path(name: str | os.PathLike) -> Path:
    """The checkpoint directory that ``name`` means: a shipped agent's folder in :func:`checkpoints_dir`
    (``supervised``, ``checkers/alphazero``, case insensitive), else ``name`` as a path."""
    text = os.fspath(name).strip()
    game, rest = _split_game(text)
    if game is not None:  # <game>/<agent>
        folder = folder_of(game) / rest.lower()
    elif "/" in text or os.sep in text or text.startswith("."):
        return Path(text)
    else:
        folder = checkpoints_dir() / text.lower()
    if text and (folder / METADATA_FILE).is_file():
        return folder
    return Path(text)


def _always() -> bool:
    return True


def _add(name: str, factory: Callable[[str | None], Agent], listed: Callable[[], bool] | None = None) -> None:
    _REGISTRY[name.lower()] = factory
    _LISTED[name.lower()] = listed or _always
    _SPELLING[name.lower()] = name


def register(name: str, factory: Callable[[str | None], Agent], listed: Callable[[], bool] | None = None) -> None:
    """Make ``load(name[:sto|:det])`` build an agent with ``factory(mode)`` (mode ``"sto"``, ``"det"`` or
    None); ``listed()`` says whether :func:`known_names` lists it (default: always)."""
    _games_agents()  # the games' own agents first, so that a name registered here replaces theirs
    _add(name, factory, listed)


def register_pattern(pattern: str, factory: Callable[[re.Match, str | None], Agent], example: str,
                     listed: Callable[[], bool] | None = None) -> None:
    """Make every name that fully matches ``pattern`` (case insensitive) load as ``factory(match, mode)``;
    :func:`known_names` lists ``example`` when ``listed()``. Exact names win over patterns."""
    _PATTERNS.append((re.compile(pattern, re.IGNORECASE), factory, example, listed or _always))


def _games_agents() -> None:
    """Once: every game's own players (``GameKit.players``) under their names."""
    for game in GAMES:
        if game in _GAMES_AGENTS:
            continue
        _GAMES_AGENTS.append(game)
        for player in kit_of(game).players:
            _add_player(game, player)


def _add_player(game: str, player: Player) -> None:
    """Register ``player`` of ``game``: one name, a name per number, or a pattern over its numbers."""
    played = make_game(game)
    listed = None if player.available is None else (lambda: resolve(player.available)())
    if player.numbers is None:
        _add(in_game(player.name, game), lambda mode: build(player, None, mode, played), listed)
    elif player.example is None:
        for n in range(player.numbers[0], player.numbers[1] + 1):
            _add(in_game(player.name.format(n=n), game), lambda mode, n=n: build(player, n, mode, played), listed)
    elif game == DEFAULT:  # only the default game's names are matched against patterns
        register_pattern(re.escape(player.name).replace(re.escape("{n}"), "(.*)"),
                         lambda m, mode: build(player, number(player, m.group(1)), mode, played),
                         example=player.example, listed=listed)


def known_names(game: str = DEFAULT) -> list[str]:
    """The listed agent names of ``game`` (a :data:`c4jax.games.GAMES` id; ``ValueError`` otherwise),
    sorted case-insensitively; another game's as ``<game>/<agent>``."""
    _games_agents()
    listed = {_SPELLING.get(n, n) for n in _REGISTRY if _LISTED.get(n, _always)()}
    if game != DEFAULT:
        if game not in GAMES:
            raise ValueError(f"unknown game {game!r}; choose one of {sorted(GAMES)}")
        own = [n for n in listed if n.startswith(f"{game}/")]
        return sorted({f"{game}/random", f"{game}/mcts1000", *own, *shipped_names(game)}, key=str.lower)
    examples = {example for _, _, example, shown in _PATTERNS if shown()}
    return sorted({n for n in listed if "/" not in n} | examples | set(shipped_names(game)), key=str.lower)


def game_of(agent) -> str:
    """The id of the game ``agent`` plays (the default game for agents without a ``game``)."""
    return getattr(getattr(agent, "game", None), "id", DEFAULT)


def canonical_name(agent) -> str:
    """The one name that :func:`load` builds ``agent`` from: its ``name``, with ``<game>/`` in front on
    another game unless the name has a ``/`` already."""
    name, game = agent.name, game_of(agent)
    if game == DEFAULT or "/" in name or os.sep in name:
        return name
    return f"{game}/{name}"


def for_game(agent, game):
    """``agent`` as a player of ``game`` (a game object): itself on its own game, switched when it
    ``plays_any_game``, else None."""
    if not callable(getattr(agent, "act_states", None)):
        return None
    if game_of(agent) == game.id:
        return agent
    if getattr(agent, "plays_any_game", False):
        return agent.replace(game=game)
    return None


def _split_game(name: str) -> tuple[str | None, str]:
    """``(game, rest)`` for ``"<game>/<rest>"`` whose ``<game>`` is registered (lower-cased); ``(None, name)`` without a
    known game prefix."""
    head, sep, rest = name.strip().partition("/")
    if sep and head.lower() in GAMES and rest and "/" not in rest and os.sep not in rest:
        return head.lower(), rest
    return None, name


def load(name: str) -> Agent:
    """Build an agent from its name (the module docstring); without a suffix it plays its default mode.

    Raises ``ValueError`` for an unknown name or a malformed suffix, ``CheckpointError`` for a
    malformed checkpoint.
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"agent name must be a non-empty string, got {name!r}")
    _games_agents()
    game, rest = _split_game(name)
    if game is not None and game != DEFAULT:
        return _load_for_game(game, rest, name)
    if game == DEFAULT:
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
        for pattern, make, _, _ in _PATTERNS:
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
    """``<game>/<agent>[@N][:sto|:det]`` for a game other than the default one."""
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
    factory = _REGISTRY.get(f"{game}/{low}")
    if factory is not None and sims is None:
        return factory(mode_l)
    if low == "random" and sims is None:
        return _random(mode_l, played)
    m = re.fullmatch(r"mcts(.*)", low)
    if m and sims is None:
        return _mcts(m, mode_l, played)
    shipped = folder_of(game) / low
    if (shipped / METADATA_FILE).is_file():
        agent = _from_checkpoint(shipped, mode_l, f"{game}/{low}", sims, solve)
        if game_of(agent) != game:
            raise ValueError(f"agent {name!r}: the checkpoint {str(shipped)!r} plays {game_of(agent)}, not {game}")
        return agent
    raise ValueError(f"unknown {game} agent {name!r}; known {game} agents: {', '.join(known_names(game))} "
                     "(or give the path of a checkpoint directory)")


def _simulations(name: str, count: str) -> tuple[int, bool | None]:
    """``(N, solve)`` of ``@N`` (solve None), ``@Nsolve`` (True), ``@Nnosolve`` (False) or ``@policy`` (0, None);
    ``ValueError`` unless N is in 0..MAX_SIMULATIONS (>= 1 with a suffix)."""
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
    """The agent of a checkpoint: a search checkpoint with its search (``sims`` replacing its saved
    number), any other network alone (``sims`` None or 0) or guiding ``sims`` simulations."""
    if is_search_checkpoint(directory):
        return agent_from_search_checkpoint(directory, mode, label=label, num_simulations=sims, solve=solve)
    if not sims:
        return agent_from_checkpoint(directory, mode, label=label)
    # The search's mode is its own (most visited or sampled visits): the network keeps its default.
    return guided(agent_from_checkpoint(directory, None, label=label), sims, deterministic=mode != "sto",
                  solve=bool(solve))


def _random(mode: str | None, game) -> RandomAgent:
    if mode == "det":
        raise ValueError("agent 'random' has no deterministic mode ('random:det')")
    return RandomAgent(game=game)


_add("random", lambda mode: _random(mode, make_game(DEFAULT)))


def _mcts(m: re.Match, mode: str | None, game) -> MCTSAgent:
    """``mcts<N>[solve|nosolve][-c<C>]``; ``ValueError`` for a malformed one."""
    rest = m.group(1).lower()
    parsed = re.fullmatch(r"(\d+)((?:no)?solve)?(?:-c(\d+(?:\.\d*)?|\.\d+))?", rest, flags=re.ASCII)
    if parsed is None or not 1 <= int(parsed.group(1)) <= MAX_SIMULATIONS or (
            parsed.group(3) is not None and float(parsed.group(3)) <= 0):
        raise ValueError(f"agent 'mcts{rest}': the number of simulations must be an integer in "
                         f"1..{MAX_SIMULATIONS}, as in 'mcts1000' (or 'mcts1000solve' / 'mcts1000nosolve'), "
                         f"optionally followed by a positive UCT constant, as in 'mcts1000-c0.4'")
    n, flag, c = parsed.groups()
    solve = SOLVE if flag is None else flag == "solve"
    return MCTSAgent(num_simulations=int(n), deterministic=mode != "sto", solve=solve,
                     uct_c=None if c is None else float(c), game=game)


register_pattern(r"mcts(.*)", lambda m, mode: _mcts(m, mode, make_game(DEFAULT)), example="mcts1000")

