"""The static site the export-web tests share: built once per test session with every shipped
network agent (``c4jax.cli.website.build``; ``npm ci`` fetches onnxruntime-web into the cache on the
first build), served by a local static file server; a page of it in headless Chromium (``site_page``) and a game
clicked through on it (``click_to_the_end``); and the JAX agents' moves the page must equal."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

try:
    import fcntl
except ImportError:  # not on Windows: each test process builds its own sites
    fcntl = None

import jax

from c4jax.cli import website

from browser import chromium, watch
from browser import CHROMIUM, CHROMIUM_ARGS  # noqa: F401  (the site's browser tests import them from here)

NPM = shutil.which("npm")
IDLE = '#board[data-busy="false"]'  # the site's board, waiting for a move
CHECK_POSITIONS = 16  # the export's own check, on fewer positions than the command's default


# a small site for the tests that need no more: one agent of Checkers; of Connect Four, AlphaZero (a
# search) and two networks whose frozen convolutions the site stores once (models/shared_connect_four.bin)
SMALL = ("supervised", "dqn", "alphazero", "checkers/dqn")


@functools.cache
def built_site(names: tuple[str, ...] | None = None) -> Path:
    """A site with the agents ``names`` (default: every shipped network agent), built once per test
    session for those names: into the session's shared folder (conftest.py's
    ``C4JAX_TEST_SESSION_DIR``) under a file lock, so a second test process waits for the first's
    build and reads it; a process without that folder builds its own. The tests read the site,
    never change it (they change copies)."""
    names = tuple(names or website.shipped_agents())
    session = os.environ.get("C4JAX_TEST_SESSION_DIR")
    if not session or fcntl is None:
        folder = Path(tempfile.mkdtemp(prefix="c4jax-site-"))
        website.build(folder, list(names), check_positions=CHECK_POSITIONS, log=lambda *_: None)
        return folder
    folder = Path(session) / f"site-{hashlib.sha256(' '.join(names).encode()).hexdigest()[:16]}"
    done = folder.with_name(folder.name + ".done")
    with open(folder.with_name(folder.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # a build that failed part-way
            website.build(folder, list(names), check_positions=CHECK_POSITIONS, log=lambda *_: None)
            done.touch()
    return folder


serve = website.serve


def block_outside(context, url: str) -> list[str]:
    """Abort every request of ``context`` outside ``url``; returns the list the aborted URLs go to."""
    outside: list[str] = []

    def route(r):
        if r.request.url.startswith(url) or r.request.url.startswith("data:"):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    return outside


@contextlib.contextmanager
def site_page(url: str, query: str):
    """The site served at ``url`` opened at ``query`` in a new headless Chromium, every request outside the site
    aborted, once the page has read the site's manifest: yields ``(page, errors, outside)``, the page's uncaught
    errors and the aborted URLs."""
    with chromium() as browser:
        context = browser.new_context()
        outside = block_outside(context, url)
        page = context.new_page()
        errors = watch(page, console=())
        page.goto(url + query)
        page.wait_for_function("window.c4web && window.c4web.ui.manifest")
        yield page, errors, outside


def click_to_the_end(page, choose, turns: int) -> list[int]:
    """Clicks on the site's board, each time it waits for a move, the action ``choose(legal actions)``, until the
    game is over or after ``turns`` clicks; returns the actions clicked."""
    clicked = []
    for _ in range(turns):
        page.wait_for_selector(IDLE)
        if page.get_attribute("#board", "data-done") == "true":
            break
        action = choose([int(x) for x in page.get_attribute("#board", "data-legal").split(",") if x])
        clicked.append(action)
        page.click(f'#board [data-action="{action}"]')
    return clicked


@functools.cache
def _step(game):
    return jax.jit(game.step)


def states_after(game, action_lists):
    """The states of ``game`` after each list of actions, stacked into one batch."""
    step = _step(game)
    states = []
    for actions in action_lists:
        s = game.init()
        for a in actions:
            s = step(s, a)
        states.append(s)
    return jax.tree.map(lambda *xs: jax.numpy.stack(xs), *states)


def jax_moves(agent_name: str, game, action_lists) -> list[int]:
    """``agents.load(agent_name)``'s moves after each list of actions (deterministic agents: any key)."""
    from c4jax import agents

    agent = agents.load(agent_name)
    states = states_after(game, action_lists)
    return [int(a) for a in agent.act_states(states, jax.random.key(0))]


def tiny_agent(folder: Path, game, seed: int = 3, solve: bool = True) -> Path:
    """A checkpoint of an untrained network agent of ``game`` (a residual tower of one 8-channel block,
    its best move; ``@N`` searches with proven values if ``solve``, as the trainers write) in ``folder``, for
    the sites of games that ship no agent; returns the folder."""
    from c4jax.io import checkpoint
    from c4jax.nets import tower

    params = tower.init_params(jax.random.key(seed), tower=(1, 8), game=game)
    checkpoint.save(folder, {"params": params}, {
        "name": f"tiny_{game.id}", "algorithm": "ppo", "game": game.id,
        "network": {"width": 8, "heads": "two", "tower": [1, 8]},
        "agent": {"output": "policy", "default_mode": "det", "symmetric": False, "search": {"simulations": 0, "solve": solve}}})
    return folder
