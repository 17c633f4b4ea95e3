"""Links that open the play UI at a position: ``/?agent=dqn&moves=3,3,4`` (docs/guide/play.md, "Links to a
position"): ``agent`` a menu name, ``moves`` the game's actions comma-separated, ``first`` ``human`` or
``agent``, ``game`` the game's id (absent: the default game). Importing this module loads no agent."""

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
