"""Benchmark of the static site of ``c4jax export-web`` in headless Chromium (local files, served on
127.0.0.1; every request outside the site blocked), and screenshots of a game of each game.

    python experiments/bench_export_web.py --out docs/results/web [--site site/]

Measures, with the shipped agents (a site is built into a temporary folder unless --site names one):

- first load: from opening the page (a fresh browser context: nothing cached) to the agent's first
  move on the board, the agent moving first; for the raw network ``supervised`` and for
  ``alphazero`` with its 256 simulations;
- a raw network's move (``supervised``, ``checkers/alphazero@0``) and an AlphaZero move with N
  simulations (Connect Four 256, Checkers 500), each the median over random positions;
- the site's size (models, runtime, total) and each model file's (the models and the weights
  several of them share);
- the machine's load average before and after the measurements.

Writes ``benchmark.md`` and ``benchmark.json``, and ``connect_four.png`` / ``checkers.png`` (a whole
game against ``alphazero`` and ``checkers/alphazero``, random moves for the human). Needs Chromium and
the ``playwright`` package (the ``test`` extra), and what the site's build needs (npm, the ``onnx`` extra).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from c4jax.cli import website

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
IDLE = '#board[data-busy="false"]'


def _context(browser, url: str):
    context = browser.new_context(viewport={"width": 800, "height": 1000})

    def route(r):
        if r.request.url.startswith(url) or r.request.url.startswith("data:"):
            r.continue_()
        else:
            r.abort()

    context.route("**/*", route)
    return context


# the page's own timeline (app.js performance marks, ms from the navigation's start) of its first move
TIMELINE = """() => {
  const at = (name) => (performance.getEntriesByName(name)[0] || {startTime: NaN}).startTime;
  const wasm = performance.getEntriesByType("resource").find((r) => r.name.endsWith(".wasm"));
  const model = performance.getEntriesByType("mark").map((m) => m.name);
  const file = (model.find((n) => n.startsWith("c4web:session:")) || "").slice("c4web:session:".length);
  return {start: at("c4web:start"), runtime_fetched: wasm ? wasm.responseEnd : NaN,
          model_fetched: at(`c4web:fetched:${file}`), session: at(`c4web:session:${file}`),
          moved: at("c4web:moved")};
}"""
STAGES = {"start": "page and its scripts loaded", "runtime_fetched": "onnxruntime's .wasm fetched",
          "model_fetched": "model files fetched", "session": "session created (WebAssembly compiled)",
          "moved": "first move on the board"}


def first_load(browser, url: str, agent: str, repeats: int = 3) -> tuple[list[float], list[dict]]:
    """Seconds from opening the page to the agent's first move on the board (a fresh context each
    time), and each run's timeline (seconds from the navigation's start to each of ``STAGES``)."""
    out, timelines = [], []
    for _ in range(repeats):
        context = _context(browser, url)
        page = context.new_page()
        start = time.perf_counter()
        page.goto(f"{url}?agent={agent}&first=agent")
        page.wait_for_function("(document.querySelector('#board') || {dataset: {}}).dataset.actions?.length > 0",
                               timeout=60_000)
        out.append(time.perf_counter() - start)
        timelines.append({k: v / 1000 for k, v in page.evaluate(TIMELINE).items()})
        context.close()
    return out, timelines


def move_times(page, name: str, game: str, positions: list[list[int]], sims: int) -> list[float]:
    """Seconds of each of the page agent's moves (``c4web.move``) over ``positions``."""
    return page.evaluate("""async ([name, game, positions, sims]) => {
        await window.c4web.move(name, game, [], {sims: Math.min(sims, 8)});  // the model loaded
        const out = [];
        for (const p of positions) {
          const t = performance.now();
          await window.c4web.move(name, game, p, {sims});
          out.push((performance.now() - t) / 1000);
        }
        return out; }""", [name, game, positions, sims])


def random_positions(page, game: str, n: int, max_plies: int, seed: int) -> list[list[int]]:
    """``n`` random unfinished positions of ``game`` as move lists, made with the page's own rules."""
    return page.evaluate("""([game, n, maxPlies, seed]) => {
        const g = window.c4web.GAMES[game];
        let a = seed;
        const rand = () => { a = (a * 1103515245 + 12345) % 2147483648; return a / 2147483648; };
        const out = [];
        while (out.length < n) {
          let s = g.init(); const moves = [];
          const plies = Math.floor(rand() * maxPlies);
          for (let i = 0; i < plies; i++) {
            const legal = [...g.legal(s).keys()].filter((k) => g.legal(s)[k]);
            const m = legal[Math.floor(rand() * legal.length)];
            const t = g.step(s, m);
            if (g.done(t)) break;
            s = t; moves.push(m);
          }
          out.push(moves);
        }
        return out; }""", [game, n, max_plies, seed])


def screenshot_game(browser, url: str, game: str, agent: str, path: Path, seed: int) -> str:
    """Play a whole game against ``agent`` (random human moves) and save a screenshot; the status line."""
    rng = np.random.default_rng(seed)
    context = _context(browser, url)
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(f"{url}?game={game}&agent={agent}&first=human")
    for _ in range(600):
        page.wait_for_selector(IDLE)
        if page.get_attribute("#board", "data-done") == "true":
            break
        if game == "connect_four":
            legal = page.get_attribute("#board", "data-legal").split(",")
            page.click(f'#board [data-col="{rng.choice(legal)}"]')
        else:
            moves = [m.split(":") for m in page.get_attribute("#board", "data-moves").split(",") if m]
            start, end, _ = moves[rng.integers(len(moves))]
            page.click(f'#board [data-square="{start}"]')
            page.click(f'#board .target[data-square="{end}"]')
    page.screenshot(path=str(path), full_page=True)
    status = page.inner_text("#status")
    context.close()
    return status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder of benchmark.md/.json and the screenshots")
    parser.add_argument("--site", type=Path, help="a built site (default: build one into a temporary folder)")
    parser.add_argument("--positions", type=int, default=20, help="positions per move-time measurement")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("C4JAX_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    site = args.site
    if site is None:
        site = Path(tempfile.mkdtemp(prefix="c4jax-site-"))
        website.build(site, website.shipped_agents())
    args.out.mkdir(parents=True, exist_ok=True)
    size = website.site_size(site)
    files = {str(f.relative_to(site)): f.stat().st_size for f in sorted((site / "models").iterdir()) if f.is_file()}
    results: dict = {"cpus": os.cpu_count(), "size_bytes": size, "model_files_bytes": files,
                     "load_average_before": os.getloadavg()}
    with website.serve(site) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=ARGS)
        loads = {"supervised": first_load(browser, url, "supervised"),
                 "alphazero@256": first_load(browser, url, "alphazero")}
        results["first_move_s"] = {name: times for name, (times, _) in loads.items()}
        results["first_move_timeline_s"] = {name: timelines for name, (_, timelines) in loads.items()}
        context = _context(browser, url)
        page = context.new_page()
        page.goto(url)
        page.wait_for_function("window.c4web && window.c4web.ui.manifest")
        c4 = random_positions(page, "connect_four", args.positions, 20, 1)
        ck = random_positions(page, "checkers", args.positions, 40, 2)
        results["move_s"] = {
            "supervised (raw network)": move_times(page, "supervised", "connect_four", c4, 0),
            "alphazero@0 (raw network)": move_times(page, "alphazero", "connect_four", c4, 0),
            "checkers/alphazero@0 (raw network)": move_times(page, "checkers/alphazero", "checkers", ck, 0),
            "alphazero@256": move_times(page, "alphazero", "connect_four", c4, 256),
            "checkers/alphazero@500": move_times(page, "checkers/alphazero", "checkers", ck[:max(5, len(ck) // 4)],
                                                  500),
        }
        context.close()
        results["games"] = {
            "connect_four": screenshot_game(browser, url, "connect_four", "alphazero", args.out / "connect_four.png", 0),
            "checkers": screenshot_game(browser, url, "checkers", "checkers/alphazero@64", args.out / "checkers.png", 0),
        }
        browser.close()
    results["load_average_after"] = os.getloadavg()
    (args.out / "benchmark.json").write_text(json.dumps(results, indent=1) + "\n")
    mib = lambda b: f"{b / 2**20:.1f} MiB"  # noqa: E731
    lines = ["# The static site in headless Chromium (`experiments/bench_export_web.py`)", "",
             f"{results['cpus']} CPU cores; the site served from 127.0.0.1; medians (first moves: each of 3 runs).", "",
             f"Site: {mib(size['total'])} (models {mib(size['models'])}, onnxruntime-web {mib(size['runtime'])}).", "",
             "| measurement | time |", "| --- | --- |"]
    for name, times in results["first_move_s"].items():
        lines.append(f"| page load to the first move, {name} | {', '.join(f'{t:.2f} s' for t in times)} |")
    for name, times in results["move_s"].items():
        lines.append(f"| one move, {name} | {1000 * statistics.median(times):.1f} ms |")
    lines += ["", "Where a first move's time goes: seconds from the navigation's start to each stage "
                  "(the page's own performance marks; median of the 3 runs).", "",
              "| stage | " + " | ".join(results["first_move_timeline_s"]) + " |",
              "| --- |" + " ---: |" * len(results["first_move_timeline_s"])]
    for key, text in STAGES.items():
        cells = [statistics.median(t[key] for t in runs) for runs in results["first_move_timeline_s"].values()]
        lines.append(f"| {text} | " + " | ".join(f"{c:.2f}" for c in cells) + " |")
    lines += ["", f"Screenshots: `connect_four.png` ({results['games']['connect_four']}), "
                  f"`checkers.png` ({results['games']['checkers']}).", "",
              "Load average (1, 5, 15 min) of the machine: "
              f"{', '.join(f'{x:.2f}' for x in results['load_average_before'])} before the measurements, "
              f"{', '.join(f'{x:.2f}' for x in results['load_average_after'])} after them.", "",
              "| model file | size |", "| --- | ---: |"]
    lines += [f"| `{name}` | {b / 2**10:.0f} KiB |" for name, b in files.items()]
    lines += [f"| all models | {size['models'] / 2**10:.0f} KiB ({size['models']:,} bytes) |"]
    (args.out / "benchmark.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
