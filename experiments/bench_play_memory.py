"""Benchmark: the play server's memory and warm-up, from its start until every agent has answered.

What is measured
----------------
For each configuration (``--config LABEL=SERVER_ARGS``; by default ``all-warm=--warm all --keep 0``,
every agent compiled at the start and none released, as the server did before ``--warm`` and
``--keep``, and ``default=`` the server's defaults), the script starts ``python -m c4jax.play --port 0
SERVER_ARGS`` in a subprocess of the checkout ``--root`` (default: this one) and reads its memory
(``VmRSS``, and ``VmHWM``, the peak, from ``/proc/<pid>/status``):

- ``start``: when it prints ``serving on`` (the agents not loaded yet);
- ``warm``: when it prints ``c4jax play: ready in X s`` (its warm-up done; X is reported too, and the
  seconds from the process' start);
- ``answered``: after every agent of every game on ``GET /api/agents`` has answered, one agent after
  another: the human's position after one human move (``POST /api/history``, then ``POST /api/move``
  with the middle legal move, human first) and the agent's first move of a game (``POST /api/move``,
  the agent first). The seconds of each agent's first answer (its compile, where it was not warm)
  are reported.

``--answers FILE`` writes what every agent answered (its moves where it plays deterministically,
and the scores and values of the positions it moved from) as JSON: two such files, of two
checkouts or configurations, are compared by ``--compare A B`` (a differential check of a change
to the server: the same moves, scores and values).

The persistent compilation cache is used as the server uses it by default (the user's cache
folder); run the script twice to see a warm cache. Uses Linux's ``/proc``.

Usage: ``python experiments/bench_play_memory.py [--config LABEL=ARGS ...] [--root DIR] [--out FILE]
[--answers FILE]`` or ``python experiments/bench_play_memory.py --compare A.json B.json``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import queue
import re
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_server import memory_kib  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
DEFAULT_CONFIGS = ("all-warm=--warm all --keep 0", "default=")


class Server:
    """``python -m c4jax.play --port 0 ARGS`` in ``root``; ``port`` once it serves, ``ready`` (an
    Event) once it prints its ``ready in X s`` line, ``warm_s`` that X."""

    def __init__(self, args: list[str], root: Path, timeout: float = 1800.0):
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen([sys.executable, "-m", "c4jax.play", "--port", "0", *args], cwd=root,
                                     env={**os.environ, "PYTHONPATH": str(root)}, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, bufsize=1)
        self.lines: list[str] = []
        self.ready = threading.Event()
        self.warm_s = self.ready_after_s = math.nan
        self.start_kib: dict[str, int] = {}
        started: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, args=(started,), daemon=True).start()
        try:
            self.port = started.get(timeout=timeout)
        except queue.Empty:
            self.port = None
        if self.port is None:
            self.stop()
            raise RuntimeError("the play server did not start:\n" + "".join(self.lines))

    def _pump(self, started: queue.Queue) -> None:
        for line in self.proc.stdout:
            self.lines.append(line)
            m = re.search(r"serving on http://127\.0\.0\.1:(\d+)/", line)
            if m:
                self.start_kib = memory_kib(self.proc.pid)
                started.put(int(m.group(1)))
            m = re.match(r"c4jax play: ready in ([\d.]+) s", line)
            if m:
                self.warm_s, self.ready_after_s = float(m.group(1)), time.monotonic() - self.t0
                self.ready.set()
        started.put(None)
        self.ready.set()

    @property
    def errors(self) -> list[str]:
        return [line.rstrip() for line in self.lines if re.search(r"internal error|Traceback|failed|Error", line)]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def call(port: int, method: str, path: str, body: dict | None = None, timeout: float = 900.0) -> dict:
    """The decoded JSON answer of one request; ``RuntimeError`` unless it is a 200."""
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
        res = conn.getresponse()
        answer = json.loads(res.read())
    finally:
        conn.close()
    if res.status != 200:
        raise RuntimeError(f"{method} {path} {body}: {res.status} {answer}")
    return answer


def ask_every_agent(port: int) -> dict[str, dict]:
    """Every agent of every game answers (module docstring): per ``<game> <agent>``, the seconds of
    its first answer and what it answered (moves where deterministic, scores and values)."""
    menus = call(port, "GET", "/api/agents")["games"]
    out = {}
    for menu in menus:
        for agent in menu["agents"]:
            name, game = agent["name"], menu["id"]
            t = time.perf_counter()
            start = call(port, "POST", "/api/history", {"game": game, "agent": name, "moves": [], "human_first": True})
            seconds = time.perf_counter() - t
            human = start["legal"][len(start["legal"]) // 2]
            second = call(port, "POST", "/api/move", {"game": game, "agent": name, "moves": [human], "human_first": True})
            first = call(port, "POST", "/api/move", {"game": game, "agent": name, "moves": [], "human_first": False})
            det = not agent["stochastic"]
            out[f"{game} {name}"] = {
                "first_answer_s": round(seconds + second["server_ms"] / 1e3, 2),
                "moves": [a.get("agent_moves", [a["agent_move"]]) for a in (second, first)] if det else None,
                "numbers": [{k: answer["positions"][0][k] for k in ("scores", "values")} for answer in (second, first)],
            }
    return out


def measure(label: str, args: list[str], root: Path) -> dict:
    """The figures of one configuration (module docstring)."""
    server = Server(args, root)
    try:
        pid = server.proc.pid
        server.ready.wait()
        warm = memory_kib(pid)
        t = time.perf_counter()
        answers = ask_every_agent(server.port)
        answered_s = time.perf_counter() - t
        answered = memory_kib(pid)
    finally:
        server.stop()
    mib = lambda kib, k: round(kib.get(k, math.nan) / 1024, 1)  # noqa: E731
    return {"label": label, "args": args, "root": str(root),
            "start_rss_mib": mib(server.start_kib, "VmRSS"),
            "warm_rss_mib": mib(warm, "VmRSS"), "warm_s": server.warm_s, "ready_after_s": round(server.ready_after_s, 1),
            "answered_rss_mib": mib(answered, "VmRSS"), "peak_rss_mib": mib(answered, "VmHWM"),
            "answered_s": round(answered_s, 1), "agents": len(answers), "errors": server.errors,
            "answers": answers}


def compare(a: dict, b: dict) -> list[str]:
    """The differences between two ``--answers`` files (empty: the same moves, scores and values)."""
    out = []
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            out.append(f"{key}: only in {'the first' if key in a else 'the second'}")
            continue
        for what in ("moves", "numbers"):
            if a[key][what] != b[key][what]:
                out.append(f"{key}: {what} differ: {a[key][what]} vs {b[key][what]}")
    return out


def report(results: list[dict], command: str) -> str:
    load = os.getloadavg()
    lines = [f"Made by `{command}` (load average {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f} at the end; "
             f"{len(os.sched_getaffinity(0))} core(s) for the server).", "",
             "| configuration | server arguments | agents | RSS at start | after the warm-up | warm-up | "
             "after every agent answered (peak) | first answers, all agents |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        lines.append(f"| {r['label']} | `{' '.join(r['args'])}` | {r['agents']} | {r['start_rss_mib']:.0f} MiB | "
                     f"{r['warm_rss_mib']:.0f} MiB | {r['warm_s']:.1f} s | {r['answered_rss_mib']:.0f} MiB "
                     f"({r['peak_rss_mib']:.0f} MiB) | {r['answered_s']:.0f} s |")
    if len(results) == 2:
        a, b = results
        lines += ["", f"{b['label']} / {a['label']}: RSS after the warm-up {b['warm_rss_mib'] / a['warm_rss_mib']:.2f}, "
                      f"after every agent answered {b['answered_rss_mib'] / a['answered_rss_mib']:.2f}, "
                      f"warm-up {b['warm_s'] / a['warm_s']:.2f}."]
    for r in results:
        slow = sorted(r["answers"].items(), key=lambda kv: -kv[1]["first_answer_s"])[:5]
        lines.append(f"\n{r['label']}: slowest first answers: "
                     + ", ".join(f"{k} {v['first_answer_s']:.1f} s" for k, v in slow)
                     + f"; server log lines with an error: {len(r['errors'])}.")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", action="append", metavar="LABEL=ARGS",
                   help=f"a server configuration to measure (repeatable; default: {' and '.join(map(repr, DEFAULT_CONFIGS))})")
    p.add_argument("--root", default=str(ROOT), help="the checkout whose server to start (default: this one)")
    p.add_argument("--out", default="", help="also write the report (Markdown) to this file")
    p.add_argument("--answers", default="", help="write every agent's answers of the last configuration (JSON) here")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two --answers files and exit")
    args = p.parse_args(argv)
    if args.compare:
        a, b = (json.loads(Path(f).read_text()) for f in args.compare)
        diff = compare(a, b)
        print("\n".join(diff) if diff else f"the same moves, scores and values for all {len(a)} agents")
        raise SystemExit(1 if diff else 0)
    results = []
    for config in args.config or DEFAULT_CONFIGS:
        label, _, server_args = config.partition("=")
        results.append(measure(label, shlex.split(server_args), Path(args.root)))
        print(json.dumps({k: v for k, v in results[-1].items() if k != "answers"}), flush=True)
    command = " ".join(["python", "experiments/bench_play_memory.py", *(sys.argv[1:] if argv is None else argv)])
    text = report(results, command)
    print(text)
    for path, content in ((args.out, text), (args.answers, json.dumps(results[-1]["answers"], indent=1))):
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(content)
    return results


if __name__ == "__main__":
    main()
