"""Play in the browser: a small standard-library web server in front of ``api.WebPlay``.

The standard library's ``ThreadingHTTPServer`` is enough for a local game site: no new
dependency, and the server stays simple to audit. It listens on 127.0.0.1 unless told otherwise,
serves only a fixed list of static files, bounds request bodies (size, nesting, and the time they
may take to arrive) and validates every move; agent moves are computed here, never in the page.

Killed at any moment (SIGKILL included) and restarted on the same database, the server goes on
from what it last answered: a change is committed before it is answered (``store``), the agent's
move it was thinking about is made when the game is next read, a clock that ran out meanwhile
ends its game once, and a page that resends a move (``"ply"``) gets a 409, never the move twice.
A damaged or locked database stops it at start-up with one line saying what to do.

API (JSON in and out; errors are ``{"error": reason}`` with a 4xx status):

- ``GET  /api/info``                      the game, its rules, the levels and their ratings
- ``POST /api/games``  ``{"side": "x", "level": "uct-1000", "turn_seconds": 30, "rated": true,
  "player": "ann"}``: a new game (201) with its secret ``token``, ``play_url`` and ``watch_url``
- ``GET  /api/games/<id>[?after=V]``      the game; with ``after``, waits for a version other than V
- ``POST /api/games/<id>/move``  ``{"token": T, "action": 40}`` or ``{"token": T, "move": "e5"}``
  (optional ``"ply"``: the move count the page showed; ``"wait": false``: answer before the
  agent's reply); 403 without the token
- ``POST /api/games/<id>/resign`` ``{"token": T}``
- ``GET  /api/games/<id>/analysis``       the level's policy and value (unrated games)
- ``GET  /api/games/<id>/review``         a finished game move by move with the agent's view
- ``GET  /api/players/<name>``, ``GET /api/leaderboard``   ratings
- ``GET  /``, ``/game/<id>``, ``/leaderboard``   the page
"""

from __future__ import annotations

import json
import re
import sys
import traceback
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, unquote

from ultimate_rl.games.errors import GameError
from ultimate_rl.play.api import WebPlay
from ultimate_rl.play.service import PlayError

MAX_BODY_BYTES = 4096
MAX_NESTING = 16  # the API's bodies are flat objects
STATIC_FILES = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}
_GAME_ID = r"[A-Za-z0-9_-]{6,32}"
_PAGES = re.compile(rf"/|/leaderboard|/game/{_GAME_ID}")
_SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
}

Route = tuple[str, re.Pattern[str], Callable[..., Any]]


def _after(query: dict[str, list[str]]) -> int | None:
    values = query.get("after")
    if not values:
        return None
    if not values[0].isdigit():
        raise PlayError(400, "'after' must be a game version (a whole number)")
    return int(values[0])


def _routes(app: WebPlay) -> list[Route]:
    """(method, path pattern, handler(match groups..., body, query)) for every API endpoint."""
    game = rf"/api/games/({_GAME_ID})"
    return [
        ("GET", re.compile(r"/api/info"), lambda body, query: app.info()),
        ("POST", re.compile(r"/api/games"), lambda body, query: app.new_game(body)),
        ("GET", re.compile(game), lambda gid, body, query: app.get_game(gid, _after(query))),
        ("POST", re.compile(game + "/move"), lambda gid, body, query: app.move(gid, body)),
        ("POST", re.compile(game + "/resign"), lambda gid, body, query: app.resign(gid, body)),
        ("GET", re.compile(game + "/analysis"), lambda gid, body, query: app.analysis(gid)),
        ("GET", re.compile(game + "/review"), lambda gid, body, query: app.review(gid)),
        ("GET", re.compile(r"/api/players/([^/]{1,100})"), lambda n, b, q: app.player(unquote(n))),
        ("GET", re.compile(r"/api/leaderboard"), lambda body, query: app.leaderboard()),
    ]


def _static(name: str) -> bytes:
    return resources.files("ultimate_rl.play").joinpath("web", name).read_bytes()


def nesting_depth(text: str) -> int:
    """How deeply ``[`` and ``{`` nest in JSON text (brackets inside strings do not count)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def parse_body(raw: bytes) -> dict[str, Any]:
    """A request body as a JSON object, or a 400 saying what is wrong with it.

    The depth is checked first: the decoder recurses per level, and a few KB of brackets would
    otherwise end in a RecursionError (or not, depending on the interpreter's recursion limit).
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise PlayError(400, f"the body is not valid UTF-8 ({err})") from None
    if nesting_depth(text) > MAX_NESTING:
        raise PlayError(400, f"the body's JSON is nested too deeply (at most {MAX_NESTING} levels)")
    try:
        body = json.loads(text)
    except json.JSONDecodeError as err:
        raise PlayError(400, f"the body is not valid JSON ({err})") from None
    if not isinstance(body, dict):
        raise PlayError(400, "the body must be a JSON object, e.g. {}")
    return body


class PlayHandler(BaseHTTPRequestHandler):
    """One request; ``make_handler`` binds a subclass to an app and its routes."""

    app: WebPlay
    routes: list[Route]
    server_version = "ultimate_rl"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the terminal stays readable; errors reach the page as JSON."""

    def _send(self, status: int, body: bytes, content_type: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for key, value in {**_SECURITY_HEADERS, **headers}.items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _send_json(self, status: int, data: Any, **headers: str) -> None:
        body = json.dumps(data).encode()
        self._send(status, body, "application/json; charset=utf-8", **headers)

    def _read_body(self) -> dict[str, Any]:
        length_text = self.headers.get("Content-Length", "0")
        if not length_text.isdigit():
            raise PlayError(400, "bad Content-Length header")
        length = int(length_text)
        if length > MAX_BODY_BYTES:
            raise PlayError(
                413, f"request body of {length} bytes; at most {MAX_BODY_BYTES} are accepted"
            )
        try:
            raw = self.rfile.read(length) if length else b"{}"
        except TimeoutError:
            self.close_connection = True
            raise PlayError(408, f"the body did not arrive within {self.timeout} s") from None
        if len(raw) < length:
            self.close_connection = True
            raise PlayError(400, f"the body ended after {len(raw)} of {length} bytes")
        return parse_body(raw)

    def _page(self, path: str) -> bool:
        """Serves the page and its static files; False when ``path`` is not one of them."""
        if _PAGES.fullmatch(path):
            # an unknown game id is reported by the page (the API answers 404)
            self._send(HTTPStatus.OK, _static("index.html"), STATIC_FILES["index.html"])
            return True
        name = path.removeprefix("/static/")
        if path.startswith("/static/") and name in STATIC_FILES:
            self._send(HTTPStatus.OK, _static(name), STATIC_FILES[name])
            return True
        if path == "/favicon.ico":
            self._send(HTTPStatus.NO_CONTENT, b"", "text/plain")
            return True
        return False

    def _dispatch(self, path: str, query: dict[str, list[str]], allowed: list[str]) -> None:
        """Runs the endpoint for ``path``; ``allowed`` collects the methods the path accepts."""
        for method, pattern, handler in self.routes:
            found = pattern.fullmatch(path)
            if found is None:
                continue
            allowed.append(method)
            if method == self.command or (method == "GET" and self.command == "HEAD"):
                body = self._read_body() if method == "POST" else {}
                status = HTTPStatus.CREATED if path == "/api/games" else HTTPStatus.OK
                self._send_json(status, handler(*found.groups(), body, query))
                return
        if allowed:
            raise PlayError(
                405, f"{self.command} is not allowed on {path}; use {', '.join(allowed)}"
            )
        raise PlayError(404, f"nothing at {path}")

    def _handle(self) -> None:
        path, _, query_text = self.path.partition("?")
        allowed: list[str] = []
        try:
            if self.command in ("GET", "HEAD") and self._page(path):
                return
            self._dispatch(path, parse_qs(query_text), allowed)
        except PlayError as err:
            headers = {"Allow": ", ".join(allowed)} if err.status == 405 else {}
            self._send_json(err.status, {"error": err.reason}, **headers)
        except GameError as err:  # a move the engine refused after all checks
            self._send_json(HTTPStatus.UNPROCESSABLE_ENTITY, {"error": str(err)})
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client left; nobody to answer
        except Exception:  # a bug: answer 500 and log it, rather than drop the connection
            traceback.print_exc(file=sys.stderr)
            self._send_json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": "internal server error"})

    do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = do_PATCH = _handle


class PlayServer(ThreadingHTTPServer):
    """A thread per request; a listen queue for many players at once (the default is 5)."""

    daemon_threads = True
    request_queue_size = 128


def make_handler(app: WebPlay) -> type[BaseHTTPRequestHandler]:
    """The request handler class bound to ``app`` (a slow client is cut off after its timeout)."""
    attributes = {"app": app, "routes": _routes(app), "timeout": app.read_timeout}
    return type("BoundPlayHandler", (PlayHandler,), attributes)


def make_server(app: WebPlay, host: str = "127.0.0.1", port: int = 8000) -> ThreadingHTTPServer:
    """A server for ``app`` bound to ``host:port`` (port 0 picks a free one); not yet serving."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"port must be 0-65535 (0 picks a free one), got {port!r}")
    return PlayServer((host, port), make_handler(app))


def announce(text: str) -> None:
    """Prints at once: a supervisor or a log reading the server's output sees it when it happens."""
    print(text, flush=True)


def serve(
    app: WebPlay,
    host: str = "127.0.0.1",
    port: int = 8000,
    on_ready: Callable[[str], None] = announce,
) -> None:
    """Serves until Ctrl-C; ``on_ready`` gets the page's address."""
    with make_server(app, host, port) as server:
        bound_host, bound_port = server.server_address[:2]
        on_ready(f"Play at http://{bound_host}:{bound_port}/  (Ctrl-C stops the server)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            on_ready("server stopped")
