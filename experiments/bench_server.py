"""Benchmark: the play server under load, with bad requests mixed in.

What is measured
----------------
``--players`` simulated players (threads, standard-library HTTP client, one kept-alive
connection each) play whole games for ``--seconds`` against the play server on 127.0.0.1,
alternating between the ``--agents`` (default: the shipped ``dqn`` network and the 2StepLA
lookahead), each picking a random legal column per move. Before a move, with probability
``--bad-rate``, a player sends one bad request on a fresh connection instead: malformed JSON,
wrong types, an illegal or out-of-range move, a move after the game ended, too many moves,
an unknown agent, an unknown endpoint (the server has no game ids: a game is its move list),
a wrong method, a body over the size limit, undecodable bytes.

Reported: requests per second, latency percentiles of the game requests, games finished,
server errors (5xx answers and connections reset or refused: the goal is 0), how the bad
requests were answered (each must be a 4xx, and the status its kind expects), and the
server's memory (VmRSS, and VmHWM, the peak) before and after the load, sampled every second.

The server runs as ``python -m c4jax.play --port 0 --agents AGENTS --warm all`` in a subprocess
(its start-up compiles the agents and is not timed), or is an already running one (``--port``).
Its memory from start-up until every agent has answered is ``experiments/bench_play_memory.py``'s.

Usage: ``python experiments/bench_server.py [--players 32] [--seconds 30] [--agents dqn,2steplA]
[--bad-rate 0.1] [--seed 0] [--out docs/results/bench_server.md]``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import queue
import random
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
OVERSIZED = 64 * 1024  # bytes of an oversized body (the server's limit is 8 KiB)


# --------------------------------------------------------------------------- bad requests

def _bad_requests(agent: str) -> list[tuple[str, str, str, bytes, int]]:
    """(kind, method, path, body, expected status) of every kind of bad request."""
    game = lambda **kw: json.dumps({"agent": agent, "moves": [], "human_first": True, **kw}).encode()  # noqa: E731
    return [
        ("malformed JSON", "POST", "/api/move", b'{"agent": "' + agent.encode() + b'", "moves": [3,', 400),
        ("wrong types", "POST", "/api/move", json.dumps({"agent": 7, "moves": "3", "human_first": "yes"}).encode(), 400),
        ("illegal move (full column)", "POST", "/api/move", game(moves=[0] * 7), 400),
        ("move outside 0..6", "POST", "/api/move", game(moves=[3, 9]), 400),
        ("move after the game ended", "POST", "/api/move", game(moves=[0, 1, 0, 1, 0, 1, 0, 1]), 400),
        ("too many moves", "POST", "/api/move", game(moves=[3] * 43), 400),
        ("unknown agent", "POST", "/api/move", game(agent="nobody"), 400),
        ("unknown field", "POST", "/api/move", game(game_id=12345), 400),
        ("unknown endpoint (a game id)", "POST", "/api/game/12345", game(), 404),
        ("wrong method", "DELETE", "/api/move", b"", 405),
        ("oversized body", "POST", "/api/move", game(pad="x" * OVERSIZED), 413),
        ("undecodable bytes", "POST", "/api/history", b"\xff\xfe\x00garbage", 400),
    ]


# --------------------------------------------------------------------------- one player

@dataclass
class Tally:
    """What one player saw (merged over players at the end)."""

    latencies_ms: dict[str, list[float]] = field(default_factory=dict)  # per agent, game requests
    games: int = 0
    server_errors: list[str] = field(default_factory=list)  # 5xx answers, resets, refusals, timeouts
    unexpected: list[str] = field(default_factory=list)  # a game request answered neither 200 nor 5xx
    bad: dict[str, list[int]] = field(default_factory=dict)  # kind -> statuses answered
    bad_expected: dict[str, int] = field(default_factory=dict)

    def merge(self, other: Tally) -> None:
        for k, v in other.latencies_ms.items():
            self.latencies_ms.setdefault(k, []).extend(v)
        self.games += other.games
        self.server_errors += other.server_errors
        self.unexpected += other.unexpected
        for k, v in other.bad.items():
            self.bad.setdefault(k, []).extend(v)
        self.bad_expected.update(other.bad_expected)


def _exchange(conn: http.client.HTTPConnection, method: str, path: str, body: bytes | None) -> tuple[int, bytes]:
    headers = {"Content-Type": "application/json"} if body is not None else {}
    conn.request(method, path, body=body, headers=headers)
    res = conn.getresponse()
    data = res.read()
    if res.getheader("Connection", "").lower() == "close":
        conn.close()  # the next request opens a new connection
    return res.status, data


_CONNECTION_ERRORS = (ConnectionError, TimeoutError, http.client.HTTPException, OSError)


def player(port: int, deadline: float, seed: int, agents: list[str], bad_rate: float, timeout: float = 60.0) -> Tally:
    """Play whole games until ``deadline`` (time.monotonic), mixing in bad requests."""
    rng, tally = random.Random(seed), Tally()
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    game_no = seed
    while time.monotonic() < deadline:
        agent, human_first, moves = agents[game_no % len(agents)], rng.random() < 0.5, []
        game_no += 1
        while time.monotonic() < deadline:
            if rng.random() < bad_rate:
                _bad_request(port, rng, agent, tally, timeout)
            body = json.dumps({"agent": agent, "moves": moves, "human_first": human_first}).encode()
            t0 = time.perf_counter()
            try:
                status, data = _exchange(conn, "POST", "/api/move", body)
            except _CONNECTION_ERRORS as e:
                tally.server_errors.append(f"{type(e).__name__}: {e}")
                conn.close()
                break
            tally.latencies_ms.setdefault(agent, []).append((time.perf_counter() - t0) * 1e3)
            if status >= 500:
                tally.server_errors.append(f"{status}: {data[:200]!r}")
                break
            if status != 200:
                tally.unexpected.append(f"{status}: {data[:200]!r}")
                break
            view = json.loads(data)
            if view["status"] != "human_turn":
                tally.games += 1
                break
            moves = view["moves"] + [rng.choice(view["legal"])]
    conn.close()
    return tally


def _bad_request(port: int, rng: random.Random, agent: str, tally: Tally, timeout: float) -> None:
    kind, method, path, body, expected = rng.choice(_bad_requests(agent))
    tally.bad_expected[kind] = expected
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        status, _ = _exchange(conn, method, path, body if method != "DELETE" else None)
    except _CONNECTION_ERRORS as e:
        tally.server_errors.append(f"{kind}: {type(e).__name__}: {e}")
        return
    finally:
        conn.close()
    tally.bad.setdefault(kind, []).append(status)
    if status >= 500:
        tally.server_errors.append(f"{kind}: {status}")


# --------------------------------------------------------------------------- the load

def memory_kib(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak) of a process, in KiB (Linux /proc; empty elsewhere)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    return {k: int(v) for k, v in re.findall(r"^(VmRSS|VmHWM):\s+(\d+) kB", text, re.M)}


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, max(0, int(round(q / 100 * (len(v) - 1)))))]


def run_load(port: int, *, players: int = 32, seconds: float = 30.0, agents: list[str] | None = None,
             bad_rate: float = 0.1, seed: int = 0, pid: int | None = None) -> dict:
    """Run the load against the server on ``port`` (``pid``: its process, for its memory); the figures."""
    agents = agents or ["dqn", "2steplA"]
    pid = os.getpid() if pid is None else pid
    samples = [memory_kib(pid)]
    t0 = time.monotonic()
    deadline = t0 + seconds
    results: list[Tally] = [Tally() for _ in range(players)]

    def one(i: int) -> None:
        results[i] = player(port, deadline, seed * 100_003 + i, agents, bad_rate)

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(players)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        time.sleep(1.0)
        samples.append(memory_kib(pid))
    elapsed = time.monotonic() - t0
    total = Tally()
    for r in results:
        total.merge(r)
    game_ms = [x for v in total.latencies_ms.values() for x in v]
    bad_statuses = [s for v in total.bad.values() for s in v]
    rss = [s["VmRSS"] for s in samples if "VmRSS" in s]
    return {
        "players": players, "seconds": round(elapsed, 1), "agents": agents, "bad_rate": bad_rate,
        "requests": len(game_ms) + len(bad_statuses),  # answered, whatever the status
        "game_requests": len(game_ms),
        "requests_per_s": (len(game_ms) + len(bad_statuses)) / elapsed,
        "p50_ms": _percentile(game_ms, 50), "p99_ms": _percentile(game_ms, 99),
        "per_agent": {a: {"requests": len(v), "p50_ms": _percentile(v, 50), "p99_ms": _percentile(v, 99)}
                      for a, v in total.latencies_ms.items()},
        "games": total.games,
        "server_errors": len(total.server_errors), "server_error_examples": total.server_errors[:5],
        "unexpected": len(total.unexpected), "unexpected_examples": total.unexpected[:5],
        "bad_requests": len(bad_statuses),
        "bad_4xx": sum(400 <= s < 500 for s in bad_statuses),
        "bad_as_expected": sum(s == total.bad_expected[k] for k, v in total.bad.items() for s in v),
        "bad_by_kind": {k: {"sent": len(v), "expected": total.bad_expected[k], "got": sorted(set(v))}
                        for k, v in sorted(total.bad.items())},
        "rss_before_mib": rss[0] / 1024 if rss else float("nan"),
        "rss_after_mib": rss[-1] / 1024 if rss else float("nan"),
        "rss_max_sampled_mib": max(rss) / 1024 if rss else float("nan"),
        "hwm_after_mib": samples[-1].get("VmHWM", float("nan")) / 1024,
        "rss_samples_mib": [r / 1024 for r in rss],  # every second of the load
    }


# --------------------------------------------------------------------------- the server

class ServerProcess:
    """``python -m c4jax.play --port 0 --agents AGENTS --warm all`` in a subprocess; ``port`` is where it serves."""

    def __init__(self, agents: list[str], timeout: float = 600.0):
        self.proc = subprocess.Popen([sys.executable, "-m", "c4jax.play", "--port", "0", "--agents", ",".join(agents),
                                      "--warm", "all"],
                                     cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        self.lines: list[str] = []
        started: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, args=(started,), daemon=True).start()
        try:
            self.port = started.get(timeout=timeout)
        except queue.Empty:
            self.stop()
            raise RuntimeError("the play server did not start:\n" + "".join(self.lines)) from None
        if self.port is None:
            raise RuntimeError("the play server did not start:\n" + "".join(self.lines))

    def _pump(self, started: queue.Queue) -> None:
        port = None
        for line in self.proc.stdout:
            self.lines.append(line)
            m = re.search(r"serving on http://127\.0\.0\.1:(\d+)/", line)
            if m:
                port = int(m.group(1))
            if port is not None and line.startswith("c4jax play: ready in"):  # every agent compiled
                started.put(port)
        started.put(None)

    @property
    def internal_errors(self) -> int:
        return sum("internal error" in line or "Traceback" in line for line in self.lines)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def report(res: dict, command: str, crashed: bool, internal_errors: int | None) -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# Play server under load",
        "",
        f"Made by `{command}`.",
        "",
        f"{res['players']} simulated players on 127.0.0.1 for {res['seconds']:.0f} s, playing whole games against "
        f"{' and '.join(f'`{a}`' for a in res['agents'])} (random legal moves), a bad request before "
        f"{res['bad_rate']:.0%} of the moves. Machine: {platform.machine()}, {os.cpu_count()} CPU cores "
        f"(load average {load:.1f} at the end: shared with other jobs, so the throughput is a lower bound); "
        "server and players on the same cores.",
        "",
        "| requests/s | p50 latency | p99 latency | games | server errors | bad requests: 4xx / sent | server RSS before → after (peak) |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| {res['requests_per_s']:,.0f} | {res['p50_ms']:.1f} ms | {res['p99_ms']:.1f} ms | {res['games']:,} | "
        f"{res['server_errors']} | {res['bad_4xx']:,} / {res['bad_requests']:,} | "
        f"{res['rss_before_mib']:.0f} → {res['rss_after_mib']:.0f} MiB ({res['hwm_after_mib']:.0f} MiB) |",
        "",
        "Server RSS every 5 s of the load: "
        + ", ".join(f"{r:.0f}" for r in res["rss_samples_mib"][::5]) + " MiB (the server keeps no game; a rise while "
        "the players' connection threads start, then flat).",
        "",
        "Game requests by agent:",
        "",
        "| agent | requests | p50 latency | p99 latency |",
        "| --- | ---: | ---: | ---: |",
        *[f"| `{a}` | {v['requests']:,} | {v['p50_ms']:.1f} ms | {v['p99_ms']:.1f} ms |" for a, v in res["per_agent"].items()],
        "",
        "Bad requests by kind (every one must be a 4xx):",
        "",
        "| kind | sent | expected | answered |",
        "| --- | ---: | ---: | --- |",
        *[f"| {k} | {v['sent']} | {v['expected']} | {', '.join(map(str, v['got']))} |" for k, v in res["bad_by_kind"].items()],
        "",
        f"Server process still serving after the load: {'no' if crashed else 'yes'}"
        + ("" if internal_errors is None else f"; internal errors in its log: {internal_errors}")
        + f". Game requests answered neither 200 nor 5xx: {res['unexpected']}.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--players", type=int, default=32, help="simulated players (threads; default 32)")
    p.add_argument("--seconds", type=float, default=30.0, help="how long they play (default 30)")
    p.add_argument("--agents", default="dqn,2steplA", help="comma-separated agents the players alternate between")
    p.add_argument("--bad-rate", type=float, default=0.1, help="share of moves preceded by a bad request (default 0.1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the players' moves and bad requests")
    p.add_argument("--port", type=int, default=0, help="load an already running server on this port (default: start one)")
    p.add_argument("--out", default="", help="also write the report (Markdown) to this file")
    args = p.parse_args(argv)
    if args.players < 1 or args.seconds <= 0 or not 0 <= args.bad_rate <= 1:
        p.error("--players must be >= 1, --seconds > 0 and --bad-rate in 0..1")
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    server = ServerProcess(agents) if not args.port else None
    port, pid = (server.port, server.proc.pid) if server else (args.port, None)
    try:
        res = run_load(port, players=args.players, seconds=args.seconds, agents=agents, bad_rate=args.bad_rate,
                       seed=args.seed, pid=pid if pid is not None else -1)
        crashed = server is not None and server.proc.poll() is not None
        try:
            conn = http.client.HTTPConnection(HOST, port, timeout=30)
            alive = _exchange(conn, "GET", "/api/agents", None)[0] == 200
            conn.close()
        except _CONNECTION_ERRORS:
            alive = False
        crashed = crashed or not alive
    finally:
        if server is not None:
            server.stop()
    argv_shown = sys.argv[1:] if argv is None else argv
    command = " ".join(["python", "experiments/bench_server.py", *argv_shown])
    text = report(res, command, crashed, server.internal_errors if server else None)
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    res.update(crashed=crashed, internal_errors=server.internal_errors if server else None)
    return res


if __name__ == "__main__":
    main()
