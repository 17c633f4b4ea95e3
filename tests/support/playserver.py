"""A play server on a free loopback port for tests, and JSON requests to it."""

from __future__ import annotations

import contextlib
import http.client
import json
import threading

from c4jax.play import server as play_server


@contextlib.contextmanager
def serving(catalogue: play_server.Catalogue):
    """Serve ``catalogue`` in a background thread; yields the port."""
    srv = play_server.make_server(catalogue, port=0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv.server_address[1]
    finally:
        srv.shutdown()
        srv.server_close()


def request(port: int, method: str, path: str, body=None, timeout: float = 120):
    """(status, decoded JSON body) of one request."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
        res = conn.getresponse()
        return res.status, json.loads(res.read())
    finally:
        conn.close()
