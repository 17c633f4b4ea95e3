"""The play API's answers, for any game: a request checked, its game replayed by the game's view
(:mod:`c4jax.games.viewbase`), the agent's moves and scores added, and the solver's hint. The game is
that of the opponent's menu (``entry.view``); the agent answers with its own jitted programs
(:mod:`c4jax.play.programs`)."""

from __future__ import annotations

import importlib
import json
import os
import time
from functools import partial
from http import HTTPStatus
from typing import Any

import jax
import numpy as np

from c4jax import games
from c4jax.agents.base import ScoreInfo
from c4jax.games.base import done
from c4jax.games.viewbase import MoveError
from c4jax.play.programs import Programs, programs_for

REQUEST_FIELDS = ("game", "agent", "moves", "human_first")


class RequestError(Exception):
    """A bad request: answered with ``status`` and ``{"error": message}``."""

    def __init__(self, message: str, status: int = HTTPStatus.BAD_REQUEST):
        super().__init__(message)
        self.message, self.status = message, int(status)


# --------------------------------------------------------------------------- the agent's side

_FIXED_KEY = None


def key(stochastic: bool):
    """A fresh key from the OS for sampling agents (never from client data); a fixed one otherwise."""
    global _FIXED_KEY
    if stochastic:
        return jax.random.key(int.from_bytes(os.urandom(4), "little"))
    if _FIXED_KEY is None:
        _FIXED_KEY = jax.random.key(0)
    return _FIXED_KEY


@partial(jax.jit, static_argnames="game")
def _step(game, state, action):
    return game.step(state, action)


@partial(jax.jit, static_argnames="game")
def _observe(game, states):
    return jax.vmap(game.observe)(states)


def describe(agent, view) -> ScoreInfo:
    """What ``agent``'s scores are in the words of ``view``'s game (what the agent declares)."""
    if not callable(getattr(agent, "scores_states", None)):
        return ScoreInfo("other", "no scores: the agent shows none")
    if callable(getattr(agent, "describe_scores", None)):
        return agent.describe_scores(view.ACTION, view.ACTIONS)
    return ScoreInfo("other", f"the agent's score for each {view.ACTION}")


def _batch(state):
    return jax.tree.map(lambda x: np.asarray(x)[None], state)


def observable(view) -> bool:
    """Whether the observations of ``view``'s game tell its whole state (Connect Four's boards)."""
    return games.kit_of(view.GAME).from_observation is not None


def programs_of(entry) -> Programs:
    """The programs ``entry`` answers with: a catalogue entry's own (compiled if need be), else
    ones held for the process."""
    if callable(getattr(entry, "acquire", None)):
        return entry.acquire()[0]
    return programs_for(entry.agent, entry.info.values, observable(entry.view), keep=True)


def agent_numbers(entry, state, programs: Programs | None = None) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The agent's float scores of every action of one state (None if it has none) and, for an
    agent with searched values, their values (else None)."""
    programs = programs or programs_of(entry)
    batch = _batch(state)
    if programs.numbers_of is None:
        return None, None
    if programs.numbers_of == "scores":
        return np.asarray(programs.numbers(batch))[0], None
    inputs = _observe(entry.view.GAME, batch) if programs.numbers_of == "stats_observed" else batch
    shares, values = programs.numbers(inputs)
    return np.asarray(shares)[0], np.asarray(values)[0]


def _position(entry, rep, ply: int, human: int, known: tuple | None, programs: Programs) -> dict:
    """Position ``ply`` as the game's view draws it, with the agent's scores and values."""
    view, state = entry.view, rep.state(ply)
    pos = view.position(rep, ply, human)
    if bool(done(state)):
        pos["scores"] = view.scores_json(None, state)
        pos["values"] = view.scores_json(None, state) if entry.info.values else None
        return pos
    scores, values = known if known is not None else agent_numbers(entry, state, programs)
    pos["scores"] = None if scores is None else view.scores_json(scores, state)
    pos["values"] = None if values is None else view.scores_json(values, state)
    return pos


def game_answer(entry, moves: list[int], human_first: bool, *, play: bool, programs: Programs | None = None) -> dict:
    """The API's answer for a game of ``entry``'s game: replayed, and with ``play`` the agent moving
    while it is to move (every step of a multi-step turn); ``positions`` from the request's last position on
    (``play``) or from the start."""
    t0 = time.perf_counter()
    programs = programs or programs_of(entry)
    view = entry.view
    try:
        rep = view.replay(moves)
    except MoveError as e:
        raise RequestError(str(e)) from None
    human = 0 if human_first else 1
    n = len(moves)
    known: dict[int, tuple] = {}
    agent_moves: list[int] = []
    agent_ms = None
    state = rep.state(n)
    if play and not bool(done(state)) and int(state.current_player) != human:
        t = time.perf_counter()
        while not bool(done(state)) and int(state.current_player) != human:
            known[n + len(agent_moves)] = agent_numbers(entry, state, programs)
            action = int(np.asarray(programs.act(_batch(state), key(entry.agent.stochastic)))[0])
            if not bool(np.asarray(state.legal_action_mask)[action]):  # a bug in the agent, not the request's: 500
                raise RuntimeError(f"{entry.name} chose the illegal action {action}")
            agent_moves.append(action)
            state = jax.device_get(_step(view.GAME, state, np.int32(action)))
        agent_ms = round((time.perf_counter() - t) * 1e3, 3)
        rep = view.replay(moves + agent_moves)
    first = n if play else 0
    positions = [_position(entry, rep, k, human, known.get(k), programs) for k in range(first, len(rep.moves) + 1)]
    out = view.answer(rep, human, positions, entry.name, agent_moves, agent_ms)
    out["server_ms"] = round((time.perf_counter() - t0) * 1e3, 3)
    return out


# --------------------------------------------------------------------------- requests

def _unknown_fields(body: dict, allowed) -> None:
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise RequestError(f"unknown field(s): {', '.join(repr(k)[:40] for k in unknown[:5])}")


def parse_game(body: Any, catalogue) -> tuple[Any, list[int], bool]:
    """``(entry, moves, human_first)`` of a request body ``{"game", "agent", "moves", "human_first"}``
    (``game`` optional); :class:`RequestError` if malformed."""
    if not isinstance(body, dict):
        raise RequestError("the body must be a JSON object {\"agent\": ..., \"moves\": [...], \"human_first\": ...}")
    _unknown_fields(body, REQUEST_FIELDS)
    game = body.get("game", games.DEFAULT)
    if not isinstance(game, str) or game not in catalogue.menus:
        raise RequestError(f"unknown game {json.dumps(game)[:40]}; games: {', '.join(catalogue.games())}")
    if "agent" not in body:
        raise RequestError("missing field 'agent'")
    entry = catalogue.get(body["agent"], game)
    try:
        moves = entry.view.parse_moves(body.get("moves", []))
    except MoveError as e:
        raise RequestError(str(e)) from None
    human_first = body.get("human_first")
    if not isinstance(human_first, bool):
        raise RequestError("'human_first' must be true or false")
    return entry, moves, human_first


# --------------------------------------------------------------------------- the hint

def _solver():
    """``(game id, solver module)`` of the first registered game whose kit has a ``solver``, or None."""
    for game in games.GAMES:
        name = games.kit_of(game).solver
        if name:
            return game, importlib.import_module(name)
    return None


def hint_status() -> dict:
    """Whether the solver hint is on offer (``GET /api/agents``' ``hint``)."""
    found = _solver()
    if found is None:
        return {"available": False, "game": None, "message": "no hint: no game here has a solver"}
    game, solver = found
    if solver.solver_available():
        return {"available": True, "game": game, "message": "the solver's verdict on each move"}
    return {"available": False, "game": game, "message": f"no hint: {solver.MISSING_SOLVER}"}


def hint_answer(body: Any) -> dict:
    """``POST /api/hint``: the solver's verdict on each action after ``body["moves"]``, for the
    player to move there."""
    t0 = time.perf_counter()
    if not isinstance(body, dict):
        raise RequestError("the body must be a JSON object {\"moves\": [...]}")
    _unknown_fields(body, ("moves",))
    found = _solver()
    if found is None:
        raise RequestError("no game here has a solver", HTTPStatus.CONFLICT)
    game, solver = found
    if not solver.solver_available():
        raise RequestError(solver.MISSING_SOLVER, HTTPStatus.CONFLICT)
    view = games.view(game)
    try:
        rep = view.replay(view.parse_moves(body.get("moves", [])))
    except MoveError as e:
        raise RequestError(str(e)) from None
    n = len(rep.moves)
    if bool(done(rep.state(n))):
        raise RequestError(f"the game is over after {n} moves: there is nothing to hint")
    try:
        scores = solver.solve_scores(rep.observations[n])
    except solver.SolverMissingError as e:  # installed but not importable
        raise RequestError(str(e), HTTPStatus.CONFLICT) from None
    legal = scores != solver.ILLEGAL
    best = int(scores[legal].max())
    outcome = {1: "win", 0: "draw", -1: "loss"}
    return {
        "moves": rep.moves,
        "ply": n,
        "scores": [int(v) if ok else None for v, ok in zip(scores, legal)],
        "outcomes": [outcome[int(np.sign(v))] if ok else None for v, ok in zip(scores, legal)],
        "best": [int(c) for c in np.flatnonzero(legal & (scores == best))],
        "server_ms": round((time.perf_counter() - t0) * 1e3, 3),
    }
