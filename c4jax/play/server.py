"""The play UI's HTTP server (standard library only): one static page and a stateless JSON API
(docs/guide/play.md, "The play server's HTTP API"). Every request carries its whole game and is
validated by replaying it, so the server holds no game. A request body is at most :data:`MAX_BODY`
bytes (413 beyond, 411 without a Content-Length, 408 when late); beyond ``max_connections`` connections a
new one is answered 503 and closed. ``GET /`` serves the page whatever its query (:mod:`c4jax.play.links`)."""

from __future__ import annotations

import json
import mimetypes
import socket
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from c4jax.play.answers import RequestError, game_answer, hint_answer, hint_status, parse_game
from c4jax.play.catalogue import DEFAULTS, Catalogue

MAX_BODY = 8 * 1024  # bytes; a longer request body gets 413
MAX_CONNECTIONS = 128  # connections served at once (a thread each); one more gets 503
STATIC_DIR = Path(__file__).resolve().parent / "static"

__all__ = ["DEFAULTS", "MAX_BODY", "MAX_CONNECTIONS", "Catalogue", "Handler", "PlayServer", "RequestError", "agents_answer",
           "make_server"]


def agents_answer(catalogue: Catalogue) -> dict:
    """``GET /api/agents``: the catalogue's menus, the body limit and whether the hint is on offer."""
    return {**catalogue.describe(), "max_body": MAX_BODY, "hint": hint_status()}


def _static_files() -> dict[str, Path]:
    return {p.name: p for p in STATIC_DIR.iterdir() if p.is_file()} if STATIC_DIR.is_dir() else {}


class Handler(BaseHTTPRequestHandler):
    server_version = "c4jax-play/1"
    protocol_version = "HTTP/1.1"
    timeout = 30  # seconds a client may take to send its request
    catalogue: Catalogue  # set by make_server
    static: dict[str, Path]
    verbose = False

    # ---- plumbing
    def log_message(self, format, *args):  # noqa: A002 (the base class' name)
        if self.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, payload: bytes, content_type: str, close: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", "default-src 'self'; img-src 'self' data:")
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _json(self, status: int, obj: Any, close: bool = False) -> None:
        self._send(status, json.dumps(obj, allow_nan=False).encode(), "application/json; charset=utf-8", close)

    def _error(self, status: int, message: str, close: bool = False) -> None:
        self._json(status, {"error": message}, close=close)

    def _guard(self, fn) -> None:
        try:
            fn()
        except RequestError as e:
            self._error(e.status, e.message, close=True)  # the body may be unread: start afresh
            self._linger()
        except (BrokenPipeError, ConnectionResetError):  # the client hung up before the answer: nothing to say
            self.close_connection = True
        except Exception as e:  # a bug: answer 500, keep serving
            print(f"c4jax play: internal error on {self.command} {self.path}: {e!r}", file=sys.stderr)
            self._error(500, f"internal server error: {type(e).__name__}", close=True)

    def _linger(self) -> None:
        """Before closing on an error, let the client read the answer: closing a socket with unread
        input sends a TCP reset, which can destroy the answer in flight (a 413 for a big body)."""
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(0.5)
            deadline, drained = time.monotonic() + 1.0, 0
            while time.monotonic() < deadline and drained < (1 << 20):
                chunk = self.connection.recv(65536)
                if not chunk:
                    break
                drained += len(chunk)
        except OSError:
            pass

    def _read_json(self) -> Any:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raise RequestError("chunked bodies are not supported; send Content-Length", HTTPStatus.LENGTH_REQUIRED)
        length = self.headers.get("Content-Length")
        if length is None:
            raise RequestError("a JSON body with a Content-Length header is required", HTTPStatus.LENGTH_REQUIRED)
        try:
            size = int(length)
            if size < 0:
                raise ValueError
        except ValueError:
            raise RequestError(f"bad Content-Length {length[:20]!r}") from None
        if size > MAX_BODY:
            raise RequestError(f"request body of {size} bytes is over the {MAX_BODY}-byte limit",
                               HTTPStatus.REQUEST_ENTITY_TOO_LARGE)
        try:
            raw = self.rfile.read(size)
        except TimeoutError:  # a client that announced more than it sends
            raise RequestError(f"the {size}-byte body did not arrive within {self.timeout} s",
                               HTTPStatus.REQUEST_TIMEOUT) from None
        try:
            return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
        except (UnicodeDecodeError, ValueError) as e:
            raise RequestError(f"the body is not valid JSON: {str(e)[:120]}") from None

    # ---- routes
    def do_GET(self):  # noqa: N802
        self._guard(self._get)

    def do_HEAD(self):  # noqa: N802
        self._guard(self._get)

    def do_POST(self):  # noqa: N802
        self._guard(self._post)

    def _not_allowed(self):
        self._error(HTTPStatus.METHOD_NOT_ALLOWED, f"method {self.command} is not allowed", close=True)
        self._linger()

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_allowed  # noqa: N815

    def _get(self):
        path = urlsplit(self.path).path
        if path == "/api/agents":
            return self._json(200, agents_answer(self.catalogue))
        if path in ("/", "/index.html"):
            path = "/static/index.html"
        if path == "/favicon.ico":
            return self._send(204, b"", "image/x-icon")
        if path.startswith("/static/") and path[len("/static/"):] in self.static:
            f = self.static[path[len("/static/"):]]
            ctype = mimetypes.guess_type(f.name)[0] or "application/octet-stream"
            if ctype.startswith("text/") or ctype == "application/javascript":
                ctype += "; charset=utf-8"
            return self._send(200, f.read_bytes(), ctype)
        if path.startswith("/api/"):
            raise RequestError(f"unknown endpoint GET {path[:80]}", HTTPStatus.NOT_FOUND)
        raise RequestError(f"not found: {path[:80]}", HTTPStatus.NOT_FOUND)

    def _post(self):
        path = urlsplit(self.path).path
        if path not in ("/api/move", "/api/history", "/api/hint"):
            raise RequestError(f"unknown endpoint POST {path[:80]}", HTTPStatus.NOT_FOUND)
        body = self._read_json()
        if path == "/api/hint":
            return self._json(200, hint_answer(body))
        entry, moves, human_first = parse_game(body, self.catalogue)
        programs, _ = entry.acquire()  # not compiled yet (or released): now, once (or wait for the warm-up's)
        self._json(200, game_answer(entry, moves, human_first, play=path == "/api/move", programs=programs))


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


_BUSY = json.dumps({"error": "the server is busy: too many connections; try again"}).encode()


class PlayServer(ThreadingHTTPServer):
    """A thread per connection, at most ``max_connections`` at once."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128  # the listen backlog

    def __init__(self, *args, max_connections: int = MAX_CONNECTIONS, **kwargs):
        if max_connections < 1:
            raise ValueError(f"max_connections must be >= 1, got {max_connections}")
        self.max_connections, self.active = max_connections, 0
        self._count = threading.Lock()
        super().__init__(*args, **kwargs)

    def process_request(self, request, client_address):
        with self._count:
            full = self.active >= self.max_connections
            if not full:
                self.active += 1
        if full:
            self._refuse(request)
            return
        try:
            super().process_request(request, client_address)  # starts the connection's thread
        except BaseException:
            with self._count:
                self.active -= 1
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._count:
                self.active -= 1

    def _refuse(self, request) -> None:
        """Answer 503 without a thread (this is the accepting thread: a few hundred ms at most)."""
        try:
            request.settimeout(0.2)
            request.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"
                            b"Retry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % len(_BUSY) + _BUSY)
            request.shutdown(socket.SHUT_WR)
            deadline, drained = time.monotonic() + 0.5, 0  # unread input would turn the close into a reset
            while time.monotonic() < deadline and drained < (1 << 20):
                chunk = request.recv(65536)
                if not chunk:
                    break
                drained += len(chunk)
        except OSError:
            pass
        finally:
            self.shutdown_request(request)

    def handle_error(self, request, client_address):  # a client that hung up: no traceback spam
        exc = sys.exc_info()[1]
        if not isinstance(exc, (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def make_server(catalogue: Catalogue, port: int = 8000, host: str = "127.0.0.1", verbose: bool = False,
                max_connections: int = MAX_CONNECTIONS) -> PlayServer:
    """Bind the server (``port=0``: a free port; see ``server.server_address``); call ``serve_forever``."""
    handler = type("BoundHandler", (Handler,), {"catalogue": catalogue, "static": _static_files(), "verbose": verbose})
    return PlayServer((host, port), handler, max_connections=max_connections)

