"""Links that open the play UI at a position: ``/?agent=dqn&moves=3,3,4``.

The page (``static/links.js``) reads these query parameters:

- ``agent``: the opponent, a name of the server's menu (``GET /api/agents``; an alias such as
  ``dqn`` for ``dqn:det`` works, as in the API);
- ``moves``: the game so far, comma-separated, as ``POST /api/history`` takes them: the game's
  actions (Connect Four columns 0-6, Checkers action indices 0-255: one step or one jump each);
- ``first``: ``human`` or ``agent``, who moved first (without it, you take the side to move at
  the linked position);
- ``game``: the game's id (``checkers``; the default game, Connect Four, without it).

The page replays the moves with ``POST /api/history`` and shows the position, its history
browsable with ← / →. A link it cannot open (an unknown game or agent, a malformed move list, an
illegal move) is reported in the status line, and the page starts a new game instead.
Importing this module loads no agent.
"""

from __future__ import annotations

from typing import Iterable
from urllib.parse import quote, urlencode

from c4jax.games import DEFAULT, with_views

DEFAULT_URL = "http://127.0.0.1:8000/"  # where ``python -m c4jax.play`` serves by default


def play_link(moves: Iterable[int], agent: str, *, game: str = DEFAULT, human_first: bool | None = None,
              url: str = DEFAULT_URL) -> str:
    """The link that opens ``url``'s play UI after ``moves`` of ``game`` against ``agent``;
    ``human_first``: whether the viewer holds the first player's side (None: the side to move)."""
    playable = with_views()  # the games the play UI plays
    if game not in playable:
        raise ValueError(f"the play UI has no page for the game {game!r}; it plays {', '.join(playable)}")
    if not isinstance(agent, str) or not agent.strip():
        raise ValueError(f"agent must be a non-empty name, got {agent!r}")
    params = [("game", game)] if game != DEFAULT else []
    params.append(("agent", agent.strip()))
    params.append(("moves", ",".join(str(int(m)) for m in moves)))
    if human_first is not None:
        params.append(("first", "human" if human_first else "agent"))
    return url + "?" + urlencode(params, safe=":,@/", quote_via=quote)
