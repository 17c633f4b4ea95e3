"""Headless Chromium for the browser tests: Debian's ``chromium`` (``apt-get install -y chromium``; ``C4JAX_CHROMIUM``
names another) driven by Playwright (the ``test`` extra), which never downloads a browser of its own.

``needs_browser()`` marks a test to be skipped where either is missing. ``chromium()`` launches the browser; ``watch(page)``
collects what a page reports as wrong (its uncaught errors, its console's errors and warnings);
``chromium_page(...)`` is both at once, a page in a new browser; ``game_page(port, game, agent)`` opens a new game
of the play UI in it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("C4JAX_CHROMIUM") or next(
    (p for p in ("/usr/bin/chromium", shutil.which("chromium") or "", shutil.which("chromium-browser") or "")
     if p and Path(p).exists()), None)
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run"]
NO_CHROMIUM = "needs Chromium (apt-get install -y chromium) for the browser check"
NO_PLAYWRIGHT = "needs Playwright (the `test` extra)"
BOARD = "[data-testid=board]"  # the play UI's board


def needs_browser():
    """A mark that skips the test it marks where Chromium or Playwright is missing, saying which."""
    missing = (NO_CHROMIUM if CHROMIUM is None
               else NO_PLAYWRIGHT if importlib.util.find_spec("playwright") is None else None)
    return pytest.mark.skipif(missing is not None, reason=missing or "")


@contextlib.contextmanager
def chromium():
    """A headless Chromium (``CHROMIUM`` with ``CHROMIUM_ARGS``), closed on exit."""
    from playwright.sync_api import sync_playwright  # a `test` extra dependency

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def watch(page, *, console=("error", "warning"), ignore: str | None = None, timeout: int = 60_000) -> list[str]:
    """The list that ``page``'s problems go to: its uncaught errors, and its console messages of the types
    ``console`` (none: ``()``) except those containing ``ignore``; also sets the page's default timeout (ms)."""
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("console", lambda m: problems.append(m.text)
            if m.type in console and (ignore is None or ignore not in m.text) else None)
    page.set_default_timeout(timeout)
    return problems


@contextlib.contextmanager
def chromium_page(viewport: dict | None = None, **watching):
    """A new page (of ``viewport``, e.g. ``{"width": 600, "height": 1000}``; default: Playwright's) in a new
    headless Chromium: yields ``(page, problems)``, ``problems`` the list that ``watch(page, **watching)`` fills."""
    with chromium() as browser:
        page = browser.new_page(**({} if viewport is None else {"viewport": viewport}))
        yield page, watch(page, **watching)


@contextlib.contextmanager
def game_page(port: int, game: str, agent: str):
    """The play UI served on ``port`` in a 600 x 1000 page of a new headless Chromium, at a new game of ``game``
    against ``agent`` with the human to move first, once its board is idle: yields ``(page, problems, idle)``,
    ``problems`` as ``chromium_page``'s and ``idle`` the selector of the game's board when it is idle."""
    with chromium_page(viewport={"width": 600, "height": 1000}) as (page, problems):
        idle = f'{BOARD}[data-game={game}][data-busy="false"]'
        page.goto(f"http://127.0.0.1:{port}/?game={game}&agent={agent}&first=human")
        page.wait_for_selector(idle)
        yield page, problems, idle

