"""The play server under load (experiments/bench_server.py on a tiny load) and its limits: the
request body size (413), a body that never arrives (408), the number of connections (503)."""

from __future__ import annotations

import http.client
import json
import socket
import time

import pytest

from c4jax.play import server as play_server
from playserver import serving

from scripts import load_experiment

bench_server = load_experiment("bench_server")


@pytest.fixture(scope="module")
def catalogue():
    cat = play_server.Catalogue(["dqn", "2steplA:det"], game_agents={"checkers": []})  # one mode each, no Checkers: less to compile
    cat.warm_up(log=lambda m: None)
    return cat


def test_a_short_load_gets_no_server_error_and_every_bad_request_a_4xx(catalogue):
    with serving(catalogue) as port:
        res = bench_server.run_load(port, players=4, seconds=3, agents=["dqn", "2steplA:det"], bad_rate=0.3, seed=1)
        # the server still serves
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        assert bench_server._exchange(conn, "GET", "/api/agents", None)[0] == 200
    assert res["server_errors"] == 0, res["server_error_examples"]
    assert res["unexpected"] == 0, res["unexpected_examples"]
    assert res["games"] >= 1 and res["game_requests"] > 10
    assert res["bad_requests"] >= 3
    assert res["bad_4xx"] == res["bad_as_expected"] == res["bad_requests"], res["bad_by_kind"]
    assert set(res["per_agent"]) == {"dqn", "2steplA:det"}
    assert res["rss_after_mib"] > 0
    text = bench_server.report(res, "python experiments/bench_server.py", crashed=False, internal_errors=0)
    assert "| requests/s |" in text and "still serving after the load: yes" in text


def test_every_kind_of_bad_request_gets_the_status_it_expects():
    with serving(play_server.Catalogue(["random"])) as port:
        for kind, method, path, body, expected in bench_server._bad_requests("random"):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            status, data = bench_server._exchange(conn, method, path, body if method != "DELETE" else None)
            conn.close()
            assert status == expected and "error" in json.loads(data), (kind, status, data)


def _raw(port: int, data: bytes, timeout: float = 30) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_a_body_that_never_arrives_gets_408_not_a_server_error():
    srv = play_server.make_server(play_server.Catalogue(["random"]), port=0)
    srv.RequestHandlerClass.timeout = 1  # this server's handler class only
    import threading

    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        reply = _raw(srv.server_address[1], b"POST /api/move HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"ag")
    finally:
        srv.shutdown()
        srv.server_close()
    assert reply.startswith(b"HTTP/1.1 408") and b"did not arrive" in reply, reply


def test_connections_beyond_the_limit_get_503_and_the_server_recovers():
    srv = play_server.make_server(play_server.Catalogue(["random"]), port=0, max_connections=2)
    import threading

    threading.Thread(target=srv.serve_forever, daemon=True).start()
    port = srv.server_address[1]
    idle = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(2)]
    try:
        deadline = time.monotonic() + 30
        while srv.active < 2 and time.monotonic() < deadline:  # both idle connections have their thread
            time.sleep(0.01)
        reply = _raw(port, b"GET /api/agents HTTP/1.1\r\nHost: x\r\n\r\n")
        assert reply.startswith(b"HTTP/1.1 503") and b"too many connections" in reply, reply
        for s in idle:
            s.close()
        while srv.active > 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        assert bench_server._exchange(conn, "GET", "/api/agents", None)[0] == 200
        conn.close()
    finally:
        for s in idle:
            s.close()
        srv.shutdown()
        srv.server_close()
    with pytest.raises(ValueError, match="max_connections"):
        play_server.make_server(play_server.Catalogue(["random"]), port=0, max_connections=0)
