"""Play in the browser: the play site's HTTP API and WebSockets (Starlette), served by uvicorn.

Starlette routes the requests and uvicorn speaks HTTP/1.1 and WebSockets; this module adds only
what the site needs on top: it listens on 127.0.0.1 unless told otherwise, serves a fixed list
of static files, bounds request bodies (size, nesting, and the time they may take to arrive:
``bodies``) and WebSocket messages, answers every error as JSON ``{"error": reason}`` with a
4xx status (500, logged, for a bug), and validates every move; agent moves are computed here,
never in the page.
The game logic (``api.WebPlay``) blocks on each game's lock and on long polls, so HTTP requests
run in worker threads (up to ``MAX_THREADS`` at once); a live connection's own steps (opening
on a game in memory, its view, its moves, closing) hold a game's lock only for a move's few
steps and run on the event loop, where a thread hop each was most of the relays' tail.

Killed at any moment (SIGKILL included) and restarted on the same database, the server goes on
from what it last answered: a change is committed before it is answered (``store``), the agent's
move it was thinking about is made when it starts again (or when a game it did not read back is
next read), the turn clocks get back the time no server ran (``store``), and a page that resends
a move (``"ply"``) gets a 409, never the move twice.
A damaged or locked database stops it at start-up with one line saying what to do.

API (JSON in and out; errors are ``{"error": reason}`` with a 4xx status):
- ``GET  /api/info``                      the game, its rules, the levels and their ratings
- ``POST /api/games``  ``{"side": "x", "level": "uct-1000", "turn_seconds": 30, "rated": true,
  "player": "ann"}``: a new game (201) with its secret ``token``, ``play_url`` and ``watch_url``;
  ``"opponent": "person"`` (and ``"away_seconds": 60``): a game against a friend, whose
  ``invite_url`` (``/game/<id>#invite=CODE``) takes the second seat once
- ``POST /api/games/<id>/join``  ``{"invite": CODE, "player": "bob"}``: the second seat, with its
  own ``token`` and ``play_url`` (409 once taken); ``{"token": T, "level": NAME}``: the creator
  plays that level instead
- ``POST /api/games/<id>/rematch`` ``{"token": T}``: the next game between the same two people,
  sides swapped (each keeps their token)
- ``GET  /api/games/<id>[?after=V][&token=T]``   the game; with ``after``, waits for a version
  other than V; with a seat's ``token``, that person is here (a seat nobody has asked for in
  ``away_seconds`` is played by the computer until its person is back)
- ``POST /api/games/<id>/move``  ``{"token": T, "action": 40}`` or ``{"token": T, "move": "e5"}``
  (optional ``"ply"``: the move count the page showed; ``"wait": false``: answer before the
  agent's reply); 403 without the token
- ``POST /api/games/<id>/resign`` ``{"token": T}``
- ``GET  /api/games/<id>/analysis``       the level's policy and value (unrated games)
- ``GET  /api/games/<id>/review[?token=T]``  a finished game move by move with the agent's view
  (its values for the seat of ``T``; without it, X's between people, else the person's)
- ``GET  /api/players/<name>``, ``GET /api/leaderboard``   ratings
- ``POST /api/analysis``  ``{"moves": [40, 37] or "e5 e4", "game": "uttt"}`` (or
  ``{"from_game": ID}``: that game's moves; 403 while it is rated or between people): the
  position with the strongest level's ``policy``, ``value`` and line ``pv`` (``analysis_board``);
  400 names the first move that cannot be played, 429 while that level is busy
- ``WS   /api/games/<id>/ws[?token=T]``  one per open page: the server sends
  ``{"type": "game", "game": {...}}`` at every change (moves, the clock running out, a person
  coming or going, the computer taking over), and takes ``{"type": "move", "action": 40,
  "ply": 3}`` or ``{"type": "resign"}`` from a seat's page, answered ``{"type": "answer",
  "game": ...}`` or ``{"type": "error", "status": 409, "error": ...}``. An open socket with a
  seat's token keeps its person here; ``watchers`` counts the others
- ``GET  /``, ``/game/<id>``, ``/leaderboard``   the page; ``/analysis`` the analysis board
"""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import sys
import threading
import traceback
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from importlib import resources
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from ultimate_rl.games.errors import GameError
from ultimate_rl.play.api import WebPlay
from ultimate_rl.play.bodies import MAX_BODY_BYTES, parse_body, read_body
from ultimate_rl.play.service import PlayError

STATIC_FILES = {
    "index.html": "text/html; charset=utf-8",
    "analysis.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "analysis.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}
GAME_ID_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
MAX_THREADS = 1024  # long polls hold a worker thread each; the default pool of 40 would stall
LIVE_WAKE_SECONDS = 30.0  # a live connection re-reads its game at least this often
_SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
}


def _game_id(request: Request | WebSocket) -> str:
    game_id = request.path_params["game_id"]
    if not (6 <= len(game_id) <= 32 and set(game_id) <= GAME_ID_CHARS):
        raise PlayError(404, f"nothing at {request.url.path}")
    return game_id


def _after(request: Request) -> int | None:
    value = request.query_params.get("after")
    if value is None:
        return None
    if not value.isdigit():
        raise PlayError(400, "'after' must be a game version (a whole number)")
    return int(value)


def _json_response(status: int, data: Any, **headers: str) -> Response:
    return Response(json.dumps(data), status, headers, media_type="application/json; charset=utf-8")


def _error(status: int, reason: str, **headers: str) -> Response:
    return _json_response(status, {"error": reason}, **headers)


class _SecurityHeaders:
    """Adds the security headers and ``Cache-Control: no-store`` to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for key, value in {**_SECURITY_HEADERS, "Cache-Control": "no-store"}.items():
                    headers.setdefault(key, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)


Blocking = Callable[..., Awaitable[Any]]
"""Runs a blocking ``WebPlay`` call in a worker thread: ``await blocking(function, *args)``."""


def endpoint(
    handler: Callable[[Request, dict[str, Any]], Any],
    blocking: Blocking,
    timeout: float,
    status: int = 200,
) -> Callable[[Request], Awaitable[Response]]:
    """An HTTP endpoint: reads the body, runs ``handler(request, body)`` in a worker thread,
    answers its JSON, or the error as ``{"error": reason}``."""

    async def run(request: Request) -> Response:
        try:
            body = await read_body(request, timeout) if request.method == "POST" else {}
            return _json_response(status, await blocking(handler, request, body))
        except PlayError as err:
            close = {"Connection": "close"} if err.status in (400, 408, 413) else {}
            return _error(err.status, err.reason, **close)
        except GameError as err:  # a move the engine refused after all checks
            return _error(422, str(err))
        except ClientDisconnect:
            return Response(status_code=400)  # the client left; nobody reads this
        except Exception:  # a bug: answer 500 and log it, rather than drop the connection
            traceback.print_exc(file=sys.stderr)
            return _error(500, "internal server error")

    return run


async def _page(request: Request) -> Response:
    # an unknown game id is reported by the page (the API answers 404)
    return Response(_static("index.html"), media_type=STATIC_FILES["index.html"])


async def _analysis_page(request: Request) -> Response:
    return Response(_static("analysis.html"), media_type=STATIC_FILES["analysis.html"])


async def _static_file(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in STATIC_FILES:
        return _error(404, f"nothing at {request.url.path}")
    return Response(_static(name), media_type=STATIC_FILES[name])


async def _favicon(request: Request) -> Response:
    return Response(status_code=204)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        allow = (exc.headers or {}).get("Allow", "")
        reason = f"{request.method} is not allowed on {request.url.path}; use {allow}"
        return _error(405, reason, Allow=allow)
    return _error(exc.status_code, f"nothing at {request.url.path}")


def _api_routes(app: WebPlay, blocking: Blocking) -> list[Route]:
    """The JSON API's routes, each a ``WebPlay`` method."""

    def api(handler: Callable[[Request, dict[str, Any]], Any], status: int = 200) -> Any:
        return endpoint(handler, blocking, app.read_timeout, status)

    def game(method: Callable[..., Any]) -> Any:  # method(game_id, body)
        return api(lambda r, b: method(_game_id(r), b))

    def read(r: Request, b: dict[str, Any]) -> Any:
        return app.get_game(_game_id(r), _after(r), r.query_params.get("token"))

    gid = "/api/games/{game_id}"
    return [
        Route("/api/info", api(lambda r, b: app.info())),
        Route("/api/games", api(lambda r, b: app.new_game(b), 201), methods=["POST"]),
        Route(gid, api(read)),
        Route(gid + "/move", game(app.move), methods=["POST"]),
        Route(gid + "/resign", game(app.resign), methods=["POST"]),
        Route(gid + "/join", game(app.join), methods=["POST"]),
        Route(gid + "/rematch", game(app.rematch), methods=["POST"]),
        Route(gid + "/analysis", api(lambda r, b: app.analysis(_game_id(r)))),
        Route(
            gid + "/review", api(lambda r, b: app.review(_game_id(r), r.query_params.get("token")))
        ),
        Route("/api/players/{name}", api(lambda r, b: app.player(r.path_params["name"][:100]))),
        Route("/api/leaderboard", api(lambda r, b: app.leaderboard())),
        Route("/api/analysis", api(lambda r, b: app.analyse_line(b)), methods=["POST"]),
    ]


def asgi_app(app: WebPlay) -> Starlette:
    """The play site as an ASGI application over ``app``."""
    limiter: list[anyio.CapacityLimiter] = []

    async def blocking(function: Callable[..., Any], *args: Any) -> Any:
        call = partial(function, *args)
        # a request cut off (the client left, the server stops) does not wait for its thread
        return await anyio.to_thread.run_sync(call, limiter=limiter[0], abandon_on_cancel=True)

    async def live(socket: WebSocket) -> None:
        await game_socket(app, socket, blocking)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> Any:
        limiter.append(anyio.CapacityLimiter(MAX_THREADS))
        app.start()  # the server's clock runs while the site is served
        yield

    pages = [Route(path, _page) for path in ("/", "/leaderboard", "/game/{game_id}")]
    return Starlette(
        routes=[
            *_api_routes(app, blocking),
            WebSocketRoute("/api/games/{game_id}/ws", live),
            *pages,
            Route("/analysis", _analysis_page),
            Route("/static/{name}", _static_file),
            Route("/favicon.ico", _favicon),
        ],
        middleware=[Middleware(_SecurityHeaders)],
        exception_handlers={HTTPException: _http_error},
        lifespan=lifespan,
    )


async def game_socket(app: WebPlay, ws: WebSocket, blocking: Blocking) -> None:
    """One page's live connection to one game (see the module doc)."""
    await ws.accept()
    try:
        game_id = _game_id(ws)
        token = ws.query_params.get("token")
        # a game in memory (the usual case, also after a restart: see ``warm_up``) connects on
        # the loop: 600 pages reconnecting at once were 600 thread hops in the relays' way
        if app.in_memory(game_id):
            seat = app.connect(game_id, token)
        else:
            seat = await blocking(app.connect, game_id, token)
    except PlayError as err:
        await ws.send_json({"type": "error", "status": err.status, "error": err.reason})
        await ws.close(code=4000 + err.status)
        return
    loop = asyncio.get_running_loop()
    changed = asyncio.Event()
    stop_listening = app.subscribe(game_id, lambda: loop.call_soon_threadsafe(changed.set))

    async def push() -> None:
        """Sends the game at every change (and when a clock or an away person is due)."""
        last = None
        while True:
            changed.clear()
            # on the loop itself: the game's lock is only ever held for a move's few steps, and
            # a hop to a worker thread per page and change was most of the relay's tail
            game, wake = app.live_view(game_id, seat)
            if game != last:
                await ws.send_json({"type": "game", "game": game})
                last = game
            with anyio.move_on_after(LIVE_WAKE_SECONDS if wake is None else wake + 0.05):
                await changed.wait()

    async def take() -> None:
        """Plays the moves and resigns this page sends."""
        while True:
            text = await ws.receive_text()
            try:
                body = parse_body(text.encode())
                kind = body.get("type")
                if kind not in ("move", "resign"):
                    raise PlayError(400, "send {'type': 'move', 'action': N} or {'type': 'resign'}")
                request = {**body, "token": token, "wait": False}
                method = app.move if kind == "move" else app.resign
                game = method(game_id, request)  # "wait": false never waits: on the loop too
                await ws.send_json({"type": "answer", "game": game})
            except PlayError as err:
                await ws.send_json({"type": "error", "status": err.status, "error": err.reason})
            except GameError as err:
                await ws.send_json({"type": "error", "status": 422, "error": str(err)})

    pushing = asyncio.create_task(push())
    try:
        await take()
    except WebSocketDisconnect:
        pass  # the page went away
    finally:
        pushing.cancel()
        await asyncio.gather(pushing, return_exceptions=True)  # a send racing the close
        stop_listening()
        app.disconnect(game_id, seat)  # the open connection kept the game in memory


def _static(name: str) -> bytes:
    return resources.files("ultimate_rl.play").joinpath("web", name).read_bytes()


class PlayServer:
    """uvicorn serving the play site on a socket bound now (port 0: a free one), so the
    address is known before serving starts; the same calls as ``socketserver``'s servers."""

    def __init__(self, app: WebPlay, host: str, port: int) -> None:
        self.app = app
        self.socket = socket.create_server((host, port), backlog=1024)
        self.server_address = self.socket.getsockname()
        config = uvicorn.Config(
            asgi_app(app),
            log_level="warning",
            access_log=False,
            ws_max_size=MAX_BODY_BYTES,
            ws_per_message_deflate=False,  # small messages: compressing cost more than it saved
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        self._stopped = threading.Event()

    def serve_forever(self) -> None:
        """Serves until ``shutdown`` (or Ctrl-C, in the main thread)."""
        try:
            self._server.run(sockets=[self.socket])
        finally:
            self._stopped.set()

    def shutdown(self) -> None:
        self._server.should_exit = True
        self._stopped.wait(10)
        self.app.close()

    def server_close(self) -> None:
        self.socket.close()

    def __enter__(self) -> PlayServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.server_close()


def make_server(app: WebPlay, host: str = "127.0.0.1", port: int = 8000) -> PlayServer:
    """A server for ``app`` bound to ``host:port`` (port 0 picks a free one); not yet serving."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"port must be 0-65535 (0 picks a free one), got {port!r}")
    return PlayServer(app, host, port)


GC_THRESHOLDS = (100_000, 50, 1000)
"""The server's collector settings: a young collection every 100,000 allocations (Python's
default: 700), an old one about never. In three alternating load runs of the same code
(``docs/benchmarks.md``) the relays' p99 after a restart was 70 / 243 / 297 ms with them and
1,105 / 3,180 / 786 ms with the defaults."""


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
    app.warm_up()
    # what start-up made (torch, numba, the games read back) lives as long as the server: out of
    # the collector's sight, a full collection no longer walks it (such pauses, 150-200 ms, were
    # in the relays' tail)
    gc.collect()
    gc.freeze()
    # and the collector runs less often (GC_THRESHOLDS): the server's garbage is short-lived
    gc.set_threshold(*GC_THRESHOLDS)
    with make_server(app, host, port) as server:
        bound_host, bound_port = server.server_address[:2]
        on_ready(f"Play at http://{bound_host}:{bound_port}/  (Ctrl-C stops the server)")
        try:
            server.serve_forever()
        finally:
            app.close()  # wakes the long polls still waiting in their threads
        on_ready("server stopped")
