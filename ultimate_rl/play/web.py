"""Play an agent in the browser: a small standard-library web server with a JSON API.

The standard library's ``ThreadingHTTPServer`` is enough for a local page: no new dependency,
and the server stays simple to audit. It listens on 127.0.0.1 unless told otherwise, serves only
a fixed list of static files, bounds request bodies and the number of stored games, keeps every
game's state itself and validates every move; agent moves are computed here, never in the page.

API (JSON in and out; errors are ``{"error": reason}`` with a 4xx status):

- ``GET  /api/info``                     the game, the agent, whether analysis is available
- ``POST /api/games``  ``{"side": "x"}``  a new game (201); the agent moves first if side is o
- ``GET  /api/games/<id>``               the game: board, whose turn, result
- ``POST /api/games/<id>/move``  ``{"action": 40}`` or ``{"move": "e5"}``: the person's move,
  answered with the game after the agent's reply
- ``POST /api/games/<id>/resign``        the person resigns
- ``GET  /api/games/<id>/analysis``      the agent's policy and value for the position
- ``GET  /`` and ``/game/<id>``          the page (each game has its own link)
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any

import numpy as np

from ultimate_rl.games.base import Game
from ultimate_rl.games.errors import GameError
from ultimate_rl.play.notation import NOTATION_HELP, MoveError, parse_move, why_illegal
from ultimate_rl.play.session import Agent, Match, parse_side

MAX_BODY_BYTES = 4096
STATIC_FILES = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}
_GAME_ID = r"[A-Za-z0-9_-]{6,32}"
_SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
}


class ApiError(Exception):
    """A request the server refuses: an HTTP status and a reason the page can show."""

    def __init__(self, status: HTTPStatus, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class GameStore:
    """Games by id, at most ``max_games``: creating one more drops the least recently used."""

    def __init__(self, max_games: int) -> None:
        if max_games < 1:
            raise ValueError(f"max_games must be at least 1, got {max_games}")
        self.max_games = max_games
        self._games: OrderedDict[str, tuple[Match, threading.Lock]] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, match: Match) -> str:
        game_id = secrets.token_urlsafe(9)
        with self._lock:
            self._games[game_id] = (match, threading.Lock())
            while len(self._games) > self.max_games:
                self._games.popitem(last=False)
        return game_id

    def get(self, game_id: str) -> tuple[Match, threading.Lock]:
        with self._lock:
            if game_id not in self._games:
                raise ApiError(
                    HTTPStatus.NOT_FOUND,
                    f"no game {game_id!r} on this server (it keeps the {self.max_games} most "
                    "recently used games, and forgets all when it stops); start a new game",
                )
            self._games.move_to_end(game_id)
            return self._games[game_id]

    def __len__(self) -> int:
        return len(self._games)


def analyse(agent: Agent, game: Game, state: np.ndarray) -> dict[str, Any] | None:
    """The agent's policy and value (for the player to move) if it can analyse, else None.

    ``agent.analyse(game, state)`` may return an object or a mapping with ``policy`` (one entry
    per action) and ``value`` (in [-1, 1] for the player to move).
    """
    method = getattr(agent, "analyse", None)
    if method is None:
        return None
    result = method(game, state)
    get = result.get if isinstance(result, dict) else lambda key: getattr(result, key, None)
    policy = np.asarray(get("policy"), dtype=np.float64).reshape(-1)
    if policy.shape != (game.num_actions,) or not np.all(np.isfinite(policy)):
        raise ValueError(
            f"agent.analyse returned a policy of shape {policy.shape}; expected "
            f"({game.num_actions},) finite values"
        )
    total = policy.sum()
    value = get("value")
    return {
        "policy": (policy / total if total > 0 else policy).round(4).tolist(),
        "value": None if value is None else round(float(value), 4),
    }


class WebPlay:
    """The server's state: the game, the agent and the stored matches; one method per API call."""

    def __init__(
        self, game: Game, agent: Agent, *, agent_name: str = "agent", max_games: int = 256
    ) -> None:
        self.game = game
        self.agent = agent
        self.agent_name = agent_name
        self.store = GameStore(max_games)
        # One agent serves every game; agents may keep search trees, so calls are serialised.
        self._agent_lock = threading.Lock()
        self.can_analyse = callable(getattr(agent, "analyse", None))

    def info(self) -> dict[str, Any]:
        return {
            "game": self.game.name,
            "agent": self.agent_name,
            "can_analyse": self.can_analyse,
            "notation": NOTATION_HELP[self.game.name],
        }

    def _agent_replies(self, match: Match) -> None:
        while not match.over and not match.human_to_move:
            with self._agent_lock:
                action = int(self.agent.select_action(self.game, match.state.copy()))
            match.play(action)

    def _game_json(self, game_id: str, match: Match) -> dict[str, Any]:
        return {"id": game_id, **match.to_json()}

    def new_game(self, body: dict[str, Any]) -> dict[str, Any]:
        side = body.get("side", "x")
        if not isinstance(side, str):
            raise ApiError(HTTPStatus.BAD_REQUEST, "'side' must be a string: 'x' or 'o'")
        try:
            human = parse_side(side)
        except ValueError as err:
            raise ApiError(HTTPStatus.BAD_REQUEST, str(err)) from None
        match = Match(self.game, human)
        game_id = self.store.add(match)
        _, lock = self.store.get(game_id)
        with lock:
            self._agent_replies(match)
            return self._game_json(game_id, match)

    def get_game(self, game_id: str) -> dict[str, Any]:
        match, lock = self.store.get(game_id)
        with lock:
            return self._game_json(game_id, match)

    def move(self, game_id: str, body: dict[str, Any]) -> dict[str, Any]:
        match, lock = self.store.get(game_id)
        with lock:
            if match.over:
                raise ApiError(HTTPStatus.CONFLICT, "the game is over; start a new game")
            if not match.human_to_move:
                raise ApiError(HTTPStatus.CONFLICT, "it is the agent's turn, not yours")
            action = self._read_action(match, body)
            match.play(action)
            self._agent_replies(match)
            return self._game_json(game_id, match)

    def _read_action(self, match: Match, body: dict[str, Any]) -> int:
        """The legal action a move request names, or a 422 saying why it cannot be played."""
        if "move" in body:
            if not isinstance(body["move"], str):
                raise ApiError(HTTPStatus.BAD_REQUEST, "'move' must be text such as 'e5'")
            try:
                return parse_move(self.game, match.state, body["move"], match.view())
            except MoveError as err:
                raise ApiError(HTTPStatus.UNPROCESSABLE_ENTITY, str(err)) from None
        action = body.get("action")
        if isinstance(action, bool) or not isinstance(action, int):
            raise ApiError(
                HTTPStatus.BAD_REQUEST,
                "send {'action': <integer>} or {'move': '<text>'}, e.g. {'action': 40}",
            )
        if not 0 <= action < self.game.num_actions:
            raise ApiError(
                HTTPStatus.UNPROCESSABLE_ENTITY,
                f"action {action} is outside 0..{self.game.num_actions - 1}",
            )
        if not self.game.legal_mask(match.state)[action]:
            reason = why_illegal(self.game, match.state, action, match.view())
            raise ApiError(HTTPStatus.UNPROCESSABLE_ENTITY, f"illegal move: {reason}")
        return action

    def resign(self, game_id: str) -> dict[str, Any]:
        match, lock = self.store.get(game_id)
        with lock:
            if match.over:
                raise ApiError(HTTPStatus.CONFLICT, "the game is already over")
            match.resign()
            return self._game_json(game_id, match)

    def analysis(self, game_id: str) -> dict[str, Any]:
        match, lock = self.store.get(game_id)
        if not self.can_analyse:
            raise ApiError(HTTPStatus.NOT_FOUND, f"agent {self.agent_name!r} cannot analyse")
        with lock:
            if match.over:
                raise ApiError(HTTPStatus.CONFLICT, "the game is over; nothing to analyse")
            state = match.state.copy()
            with self._agent_lock:
                result = analyse(self.agent, self.game, state)
            return {"id": game_id, "to_move": match.to_move, "moves": len(match.actions), **result}


Route = tuple[str, re.Pattern[str], Callable[..., Any]]


def _routes(app: WebPlay) -> list[Route]:
    """(method, path pattern, handler(match groups..., body)) for every API endpoint."""
    return [
        ("GET", re.compile(r"/api/info"), lambda body: app.info()),
        ("POST", re.compile(r"/api/games"), lambda body: app.new_game(body)),
        ("GET", re.compile(rf"/api/games/({_GAME_ID})"), lambda gid, body: app.get_game(gid)),
        ("POST", re.compile(rf"/api/games/({_GAME_ID})/move"), app.move),
        ("POST", re.compile(rf"/api/games/({_GAME_ID})/resign"), lambda gid, body: app.resign(gid)),
        (
            "GET",
            re.compile(rf"/api/games/({_GAME_ID})/analysis"),
            lambda gid, body: app.analysis(gid),
        ),
    ]


def _static(name: str) -> bytes:
    return resources.files("ultimate_rl.play").joinpath("web", name).read_bytes()


def make_handler(app: WebPlay) -> type[BaseHTTPRequestHandler]:
    """The request handler class bound to ``app``."""
    routes = _routes(app)

    class Handler(BaseHTTPRequestHandler):
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
                raise ApiError(HTTPStatus.BAD_REQUEST, "bad Content-Length header")
            length = int(length_text)
            if length > MAX_BODY_BYTES:
                raise ApiError(
                    HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                    f"request body of {length} bytes; at most {MAX_BODY_BYTES} are accepted",
                )
            raw = self.rfile.read(length) if length else b"{}"
            try:
                body = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as err:
                raise ApiError(
                    HTTPStatus.BAD_REQUEST, f"the body is not valid JSON ({err})"
                ) from None
            if not isinstance(body, dict):
                raise ApiError(HTTPStatus.BAD_REQUEST, "the body must be a JSON object, e.g. {}")
            return body

        def _page(self, path: str) -> bool:
            """Serves the page and its static files; False when ``path`` is not one of them."""
            if path == "/" or re.fullmatch(rf"/game/{_GAME_ID}", path):
                # an unknown or expired game id is reported by the page (the API answers 404)
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

        def _handle(self) -> None:
            path = self.path.split("?", 1)[0]
            allowed: list[str] = []
            try:
                if self.command in ("GET", "HEAD") and self._page(path):
                    return
                for method, pattern, handler in routes:
                    match = pattern.fullmatch(path)
                    if match is None:
                        continue
                    allowed.append(method)
                    if method == self.command or (method == "GET" and self.command == "HEAD"):
                        body = self._read_body() if method == "POST" else {}
                        status = HTTPStatus.CREATED if path == "/api/games" else HTTPStatus.OK
                        self._send_json(status, handler(*match.groups(), body))
                        return
                if allowed:
                    raise ApiError(
                        HTTPStatus.METHOD_NOT_ALLOWED,
                        f"{self.command} is not allowed on {path}; use {', '.join(allowed)}",
                    )
                raise ApiError(HTTPStatus.NOT_FOUND, f"nothing at {path}")
            except ApiError as err:
                headers = {"Allow": ", ".join(allowed)} if err.status == 405 else {}
                self._send_json(err.status, {"error": err.reason}, **headers)
            except GameError as err:  # a move the engine refused after all checks
                self._send_json(HTTPStatus.UNPROCESSABLE_ENTITY, {"error": str(err)})

        do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = do_PATCH = _handle

    return Handler


def make_server(app: WebPlay, host: str = "127.0.0.1", port: int = 8000) -> ThreadingHTTPServer:
    """A server for ``app`` bound to ``host:port`` (port 0 picks a free one); not yet serving."""
    server = ThreadingHTTPServer((host, port), make_handler(app))
    server.daemon_threads = True
    return server


def serve(
    app: WebPlay,
    host: str = "127.0.0.1",
    port: int = 8000,
    on_ready: Callable[[str], None] = print,
) -> None:
    """Serves until Ctrl-C; ``on_ready`` gets the page's address."""
    with make_server(app, host, port) as server:
        bound_host, bound_port = server.server_address[:2]
        on_ready(f"Play at http://{bound_host}:{bound_port}/  (Ctrl-C stops the server)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            on_ready("server stopped")
