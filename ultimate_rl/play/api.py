"""The browser API's methods over the shared core (``PlayService``), with the web's threading.

Concurrency: one ``Condition`` per game guards it (moves, resigns, clock checks, saves); the
agent thinks in a worker thread that holds only its level's lock, so reads of this and every other
game go on meanwhile; watchers long-poll on the game's condition (``?after=VERSION``) and wake on
the next change or when the person's clock runs out. The service's cache is guarded by one lock,
and keeps every game a request holds (``_held``), so there is never a second copy of a game in
memory whose saves would overwrite the first's; games are read from the file under a second
lock, outside the first, so a read never stalls requests for games already in memory.
"""

from __future__ import annotations

import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ultimate_rl.play.notation import MoveError, parse_move
from ultimate_rl.play.review import add_reviews, analyse_plies, missing_plies, review_json
from ultimate_rl.play.service import DEFAULT_AWAY_SECONDS, GameRecord, PlayError, PlayService
from ultimate_rl.play.session import parse_side, parse_turn_seconds
from ultimate_rl.play.view import board_view

LONG_POLL_SECONDS = 15.0  # a watcher's request returns after this long even if nothing changed
MOVE_WAIT_SECONDS = 300.0  # a move request with wait=true returns after the reply or this long


class WebPlay:
    """The API: one method per endpoint, each returning JSON-ready data or raising PlayError."""

    def __init__(self, service: PlayService, *, read_timeout: float = 10.0) -> None:
        self.service = service
        self.read_timeout = read_timeout  # seconds a request's headers and body may take
        self._lock = threading.Lock()  # the service's cache and the maps below
        self._loading = threading.Lock()  # one game read from the file at a time
        self._conditions: dict[str, threading.Condition] = {}
        self._listeners: dict[str, list[Callable[[], None]]] = {}
        self._watchers: dict[str, int] = {}  # open live connections without a seat, per game
        self.closing = False  # the server stops: long polls answer now

    def warm_up(self) -> int:
        """Loads the game's compiled kernels a page's requests use (a move, the board view) and
        reads the most recently played games back into memory, so the first requests after a
        start or a restart (every open page reconnecting at once) wait for neither; the count
        of games read."""
        game = self.service.game
        board_view(game, game.load_kernels()).to_json()
        with self._lock:
            return self.service.preload()

    def close(self) -> None:
        """Ends every long poll now (the server is stopping)."""
        self.closing = True
        with self._lock:
            conditions = list(self._conditions.values())
        for condition in conditions:
            with condition:
                condition.notify_all()

    def _changed(self, record: GameRecord, condition: threading.Condition) -> None:
        """Wakes the long polls of this game (lock held) and tells its live connections."""
        condition.notify_all()
        with self._lock:
            listeners = list(self._listeners.get(record.id, ()))
        for listener in listeners:
            listener()

    def subscribe(self, game_id: str, listener: Callable[[], None]) -> Callable[[], None]:
        """Calls ``listener`` (from any thread; it must not block) after every change of the
        game; returns the function that stops it."""
        with self._lock:
            self._listeners.setdefault(game_id, []).append(listener)

        def unsubscribe() -> None:
            with self._lock:
                self._listeners[game_id].remove(listener)
                if not self._listeners[game_id]:
                    del self._listeners[game_id]

        return unsubscribe

    def connect(self, game_id: str, token: str | None) -> int | None:
        """A live connection opens (a page's WebSocket): its seat (None: a watcher), whose
        person counts as here until ``disconnect``; the game stays in memory meanwhile."""
        with self._held(game_id) as (record, condition), condition:
            seat = None if token is None else self.service.check_token(record, token)
            with self._lock:
                record.users += 1  # until ``disconnect``
                if seat is None:
                    self._watchers[game_id] = self._watchers.get(game_id, 0) + 1
            if seat is not None:
                record.seats[seat].connections += 1
            # news to the live pages, not a new version: versions are the stored game's
            self._changed(record, condition)
        return seat

    def disconnect(self, game_id: str, seat: int | None) -> None:
        """The live connection of ``connect`` closed: its person is away from now on."""
        with self._held(game_id) as (record, condition), condition:
            if seat is None:
                with self._lock:
                    self._watchers[game_id] -= 1
            else:
                record.seats[seat].connections -= 1
                record.seats[seat].last_seen = self.service.clock()
            self._changed(record, condition)
            with self._lock:
                record.users -= 1  # the one ``connect`` took

    def live_view(self, game_id: str, seat: int | None) -> tuple[dict[str, Any], float | None]:
        """For a live connection: ends the game on time or lets the computer take over an away
        person if due, then the game as the page with this seat (None: a watcher) draws it, and
        the seconds until the next such moment (None: none is coming)."""
        with self._held(game_id) as (record, condition), condition:
            self.service.refresh_clock(record)
            self._start_agent(record, condition)
            waits = [
                record.match.seconds_left(self.service.clock()),
                None if record.thinking else self.service.away_left(record),
            ]
            wake = min((w for w in waits if w is not None), default=None)
            return self._json(record, seat), wake

    @contextmanager
    def _held(self, game_id: str) -> Iterator[tuple[GameRecord, threading.Condition]]:
        """The game and its condition, kept in the service's memory while the request holds it:
        were it dropped, the next request would load a second copy of the game and each copy's
        saves would overwrite the other's moves. A game read from the file is read outside the
        cache's lock (other games' requests, the event loop's among them, go on meanwhile) but
        under the loading lock, so it is read once; ``remember`` keeps one copy whatever races
        it."""
        with self._lock:
            record = self.service.cached(game_id)
            if record is not None:
                record.users += 1
        if record is None:
            with self._loading:
                with self._lock:
                    record = self.service.cached(game_id)
                if record is None:
                    record = self.service.read(game_id)
                with self._lock:
                    record = self.service.remember(record)
                    record.users += 1
        with self._lock:
            condition = self._conditions.setdefault(game_id, threading.Condition())
        try:
            yield record, condition
        finally:
            with self._lock:
                record.users -= 1

    def in_memory(self, game_id: str) -> bool:
        """Whether the game is in memory (holding it reads nothing from the file)."""
        with self._lock:
            return self.service.cached(game_id) is not None

    def _json(self, record: GameRecord, seat: int | None = None) -> dict[str, Any]:
        """The game for a page; ``seat``: the asking person's (None: a watcher)."""
        service = self.service
        away, now = service.away_left(record), service.clock()
        seats = []
        for index, held in enumerate(record.seats):
            left = held.away_in(now, record.away_seconds)
            here = left is None or left > 0
            to_move = record.match.to_move == index
            seats.append(
                {
                    "kind": held.kind,
                    "player": held.player,
                    "present": here,
                    "connected": held.connections > 0,
                    "computer": held.kind == "level" or (to_move and away == 0.0),
                }
            )
        return {
            "id": record.id,
            "version": record.version,
            "level": record.level.to_json(),
            "opponent": record.opponent,
            "rated": record.rated,
            "player": record.player,
            "seats": seats,
            "seat": seat,
            "away_seconds": record.away_seconds,
            "computer_moves": list(record.computer_moves),
            "rating_change": record.rating_change,
            "rating_changes": record.rating_changes,
            "rematch": record.rematch,
            "watchers": self._watchers.get(record.id, 0),
            "thinking": record.thinking,
            **record.match.to_json(now),
        }

    def _seat_urls(self, record: GameRecord, seat: int) -> dict[str, Any]:
        """A seat's secret token and play link, and the watch link (for the person it is for)."""
        token = record.seats[seat].token
        return {
            "seat": seat,
            "token": token,
            "play_url": f"/game/{record.id}#play={token}",
            "watch_url": f"/game/{record.id}",
        }

    def info(self) -> dict[str, Any]:
        return {**self.service.info(), "notation": self.service.game.notation_help}

    def new_game(self, body: dict[str, Any]) -> dict[str, Any]:
        try:
            human = parse_side(_text(body, "side", "x"))
            turn_seconds = parse_turn_seconds(body.get("turn_seconds"))
        except ValueError as err:
            raise PlayError(400, str(err)) from None
        rated = body.get("rated", False)
        if not isinstance(rated, bool):
            raise PlayError(400, "'rated' must be true or false")
        level = _level(body)
        opponent = _text(body, "opponent", "level")
        with self._lock:
            created = self.service.create(
                human,
                level=level,
                turn_seconds=turn_seconds,
                rated=rated,
                player=body.get("player"),
                opponent=opponent,
                away_seconds=body.get("away_seconds", DEFAULT_AWAY_SECONDS),
            )
        with self._held(created.id) as (record, condition), condition:
            self._start_agent(record, condition)
            self._wait_for_agent(record, condition, body)
            answer = {**self._json(record, human), **self._seat_urls(record, human)}
            invite = record.seats[1 - human].invite
            if invite is not None:
                answer["invite_url"] = f"/game/{record.id}#invite={invite}"
            return answer

    def join(self, game_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Takes the open seat (``{"invite": CODE, "player": NAME}``), or the creator gives it to
        a level (``{"token": T, "level": NAME}``)."""
        with self._held(game_id) as (record, condition), condition:
            if "invite" in body:
                seat = self.service.join(record, body["invite"], body.get("player"))
            else:
                seat = self.service.check_token(record, body.get("token"))
                self.service.start_level(record, seat, _level(body))
            self._changed(record, condition)
            self._start_agent(record, condition)
            return {**self._json(record, seat), **self._seat_urls(record, seat)}

    def rematch(self, game_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """The next game between the same people, sides swapped; each keeps their token."""
        with self._held(game_id) as (record, condition), condition:
            seat = self.service.check_token(record, body.get("token"))
            with self._lock:
                created = self.service.rematch(record, seat)
            self._changed(record, condition)
            mine = 1 - seat
            return {**self._json(created, mine), **self._seat_urls(created, mine)}

    def get_game(
        self, game_id: str, after: int | None = None, token: str | None = None
    ) -> dict[str, Any]:
        """The game; with ``after``, waits until its version differs (or a while passes). A
        seat's ``token`` says its person is here (presence) and gets the seat's view."""
        service, clock = self.service, self.service.clock
        with self._held(game_id) as (record, condition), condition:
            seat = None if token is None else service.check_token(record, token)
            service.refresh_clock(record)
            self._start_agent(record, condition)  # e.g. the agent's turn when the server stopped
            end = time.monotonic() + LONG_POLL_SECONDS
            while after is not None and record.version == after and not self.closing:
                left = end - time.monotonic()
                if left <= 0:
                    break
                waits = [left, record.match.seconds_left(clock()), service.away_left(record)]
                condition.wait(min(w for w in waits if w is not None) + 0.05)
                service.refresh_clock(record)
                self._start_agent(record, condition)  # the person to move went away
            if seat is not None:
                service.check_token(record, token)  # here until the end of the wait
            return self._json(record, seat)

    def move(self, game_id: str, body: dict[str, Any]) -> dict[str, Any]:
        with self._held(game_id) as (record, condition), condition:
            seat = self.service.check_token(record, body.get("token"))
            self.service.refresh_clock(record)
            match = record.match
            if "ply" in body and not match.over and body["ply"] != len(match.actions):
                raise PlayError(
                    409,
                    f"the game has moved on ({len(match.actions)} moves, your page showed "
                    f"{body['ply']}); it is redrawn now",
                )
            if not match.over and match.to_move == seat:
                action = self._read_action(record, body)
            else:
                action = -1  # human_move says why no move can be played now
            self.service.human_move(record, action, seat)
            self._changed(record, condition)
            self._start_agent(record, condition)
            self._wait_for_agent(record, condition, body)
            return self._json(record, seat)

    def _read_action(self, record: GameRecord, body: dict[str, Any]) -> int:
        """The legal action a move request names, or a 4xx saying why it cannot be played."""
        game, match = self.service.game, record.match
        if "move" in body and "action" in body:
            raise PlayError(400, "send 'action' or 'move', not both: they could disagree")
        if "move" in body:
            if not isinstance(body["move"], str):
                raise PlayError(400, "'move' must be text such as 'e5'")
            try:
                return parse_move(game, match.state, body["move"])
            except MoveError as err:
                raise PlayError(422, str(err)) from None
        action = body.get("action")
        if isinstance(action, bool) or not isinstance(action, int):
            raise PlayError(
                400, "send {'action': <integer>} or {'move': '<text>'}, e.g. {'action': 40}"
            )
        if not 0 <= action < game.num_actions:
            raise PlayError(422, f"action {action} is outside 0..{game.num_actions - 1}")
        if not game.legal_mask(match.state)[action]:
            raise PlayError(422, f"illegal move: {game.why_illegal(match.state, action)}")
        return action

    def resign(self, game_id: str, body: dict[str, Any]) -> dict[str, Any]:
        with self._held(game_id) as (record, condition), condition:
            seat = self.service.check_token(record, body.get("token"))
            self.service.resign(record, seat)
            self._changed(record, condition)
            return self._json(record, seat)

    def _wait_for_agent(
        self, record: GameRecord, condition: threading.Condition, body: dict[str, Any]
    ) -> None:
        """Unless the body says ``"wait": false``, waits (lock released) for the agent's reply."""
        if body.get("wait", True) is not False:
            condition.wait_for(lambda: not record.thinking, MOVE_WAIT_SECONDS)

    def _start_agent(self, record: GameRecord, condition: threading.Condition) -> None:
        """Starts the agent's worker if it is to move and not already thinking (lock held)."""
        if record.thinking or not self.service.computer_to_move(record):
            return
        record.thinking = True
        ply = len(record.match.actions)
        state = record.match.state.copy()
        worker = threading.Thread(
            target=self._agent_worker, args=(record, condition, state, ply), daemon=True
        )
        worker.start()

    def _agent_worker(
        self, record: GameRecord, condition: threading.Condition, state: np.ndarray, ply: int
    ) -> None:
        try:
            decision = self.service.think(record, state, ply)
        except Exception:  # a broken agent must not take the server down; the next read retries
            traceback.print_exc(file=sys.stderr)
            decision = None
        with condition:
            try:
                if decision is None or not self.service.agent_plays(record, ply, decision):
                    record.version += 1  # wake the waiters all the same
            finally:  # only now may the cache drop the record: the move is saved
                record.thinking = False
                self._changed(record, condition)

    def analysis(self, game_id: str) -> dict[str, Any]:
        """The level's policy and value for the position (not during a rated game)."""
        with self._held(game_id) as (record, condition):
            with condition:
                match = record.match
                if match.over:
                    raise PlayError(409, "the game is over; nothing to analyse (see its review)")
                if record.rated:
                    raise PlayError(403, "no analysis during a rated game")
                if record.opponent == "person":
                    raise PlayError(403, "no analysis during a game between two people")
                state, ply = match.state.copy(), len(match.actions)
                to_move = match.to_move
            analysis = self.service.analyse_position(record, state)
        return {"id": game_id, "to_move": to_move, "moves": ply, **analysis}

    def review(self, game_id: str, token: str | None = None) -> dict[str, Any]:
        """The finished game move by move with the agent's value and preferred move; the values
        for the seat of ``token`` (403 for a wrong one), else as ``review_json`` says (a watcher
        of a game between people: X's)."""
        with self._held(game_id) as (record, condition):
            with condition:
                seat = None if token is None else self.service.seat_of(record, token)
                missing = missing_plies(record)
            game = self.service.game
            found = analyse_plies(game, record, missing)  # slow: without the game's lock
            with condition:
                if add_reviews(record, found):
                    self.service.save(record)
                return review_json(game, record, seat)

    def end_expired_games(self) -> None:
        """Ends on time the games whose clock ran out unread, so ratings never wait for a read
        (a player cannot dodge a loss by closing the page)."""
        for game_id in self.service.db.expired_games(self.service.clock()):
            try:
                with self._held(game_id) as (record, condition), condition:
                    self.service.refresh_clock(record)
                    self._changed(record, condition)
            except PlayError:  # another game's row (another game type in the same file)
                continue

    def player(self, name: str) -> dict[str, Any]:
        self.end_expired_games()
        return self.service.player(name)

    def leaderboard(self) -> dict[str, Any]:
        self.end_expired_games()
        return self.service.leaderboard()


def _level(body: dict[str, Any]) -> str | None:
    level = body.get("level")
    if level is not None and not isinstance(level, str):
        raise PlayError(400, "'level' must be a level's name, see /api/info")
    return level


def _text(body: dict[str, Any], key: str, default: str) -> str:
    value = body.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f"'{key}' must be text, e.g. {default!r}")
    return value
