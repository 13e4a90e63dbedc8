"""The browser API's methods over the shared core (``PlayService``), with the web's threading.

Concurrency: one ``Condition`` per game guards it (moves, resigns, clock checks, saves); the
agent thinks in a worker thread that holds only its level's lock, so reads of this and every other
game go on meanwhile; watchers long-poll on the game's condition (``?after=VERSION``) and wake on
the next change. The server's own clock (``timekeeper``) ends games on time and starts the
computer for an away person when the moment comes, whoever reads. The service's cache is guarded
by one lock,
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

from ultimate_rl.games.registry import GAME_NAMES
from ultimate_rl.play.analysis_board import AnalysisBoard, check_analysable
from ultimate_rl.play.bodies import move_action
from ultimate_rl.play.game_json import game_json, seat_urls
from ultimate_rl.play.review import add_reviews, analyse_plies, missing_plies, review_json
from ultimate_rl.play.service import DEFAULT_AWAY_SECONDS, GameRecord, PlayError, PlayService
from ultimate_rl.play.session import parse_side, parse_turn_seconds
from ultimate_rl.play.timekeeper import POLL_SECONDS, Timekeeper
from ultimate_rl.play.view import board_view

LONG_POLL_SECONDS = 15.0  # a watcher's request returns after this long even if nothing changed
MOVE_WAIT_SECONDS = 300.0  # a move request with wait=true returns after the reply or this long


class WebPlay:
    """The API: one method per endpoint, each returning JSON-ready data or raising PlayError."""

    def __init__(
        self,
        service: PlayService,
        *,
        read_timeout: float = 10.0,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        """``poll_seconds``: how often the server's clock is read at least (see ``timekeeper``)."""
        self.service = service
        self.read_timeout = read_timeout  # seconds a request's headers and body may take
        self._lock = threading.Lock()  # the service's cache and the maps below
        self._loading = threading.Lock()  # one game read from the file at a time
        self._conditions: dict[str, threading.Condition] = {}
        self._listeners: dict[str, list[Callable[[], None]]] = {}
        self._watchers: dict[str, int] = {}  # open live connections without a seat, per game
        self.closing = False  # the server stops: long polls answer now
        self.timekeeper = Timekeeper(service.clock, self._act, self._beat, poll_seconds)
        self.given_back: float | None = None  # seconds of the clocks given back at start
        self.board = AnalysisBoard(service)

    def warm_up(self) -> int:
        """Loads the game's compiled kernels a page's requests use (a move, the board view) and
        reads the most recently played games back into memory, so the first requests after a
        start or a restart (every open page reconnecting at once) wait for neither; the count
        of games read."""
        game = self.service.game
        board_view(game, game.load_kernels()).to_json()
        self._give_back()
        with self._lock:
            return self.service.preload()

    def _give_back(self) -> None:
        """Once, before any game is read: the turn clocks get back the time no server ran."""
        if self.given_back is None:
            self.given_back = self.service.db.give_back(self.service.clock())

    def start(self) -> None:
        """Starts the server's clock (the server starts serving): every game in memory, and every
        stored game with a turn clock, is watched from now on."""
        self._give_back()
        now = self.service.clock()
        for game_id, deadline in self.service.db.deadlines():
            self.timekeeper.schedule(game_id, deadline - now)
        with self._lock:
            held = list(self.service.games())
        for record in held:
            with self._lock:
                condition = self._conditions.setdefault(record.id, threading.Condition())
            with condition:
                self._schedule(record)
        self.timekeeper.start()

    def _beat(self) -> None:
        """The heartbeat: a server runs now (``store.Database.give_back``)."""
        self.service.db.beat(self.service.clock())

    def close(self) -> None:
        """Ends every long poll now and stops the clock (the server is stopping); the heartbeat
        says when, so a restart gives the turn clocks back the time until then."""
        self.closing = True
        if self.timekeeper.running:
            self.timekeeper.stop()
            self._beat()
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
        """For a live connection: the game as the page with this seat (None: a watcher) draws
        it, and the seconds until the server acts on it unasked (None: nothing is coming), when
        the page's clock and presence are to be redrawn."""
        with self._held(game_id) as (record, condition), condition:
            return self._json(record, seat), self.service.due_in(record)

    def _act(self, game_id: str) -> None:
        """The server's clock says the game is due: it ends on time or the computer starts."""
        try:
            with self._held(game_id) as (record, condition), condition:
                ended = self.service.refresh_clock(record)
                if self._start_agent(record, condition) or ended:
                    self._changed(record, condition)
        except PlayError:  # no longer there (another game type's row in the same file)
            return

    def _schedule(self, record: GameRecord) -> None:
        """Tells the server's clock when the game is next due (the game's lock held)."""
        self.timekeeper.schedule(record.id, self.service.due_in(record))

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
            with condition:  # whatever the request changed, the clock knows the next moment
                self._schedule(record)
            with self._lock:
                record.users -= 1

    def in_memory(self, game_id: str) -> bool:
        """Whether the game is in memory (holding it reads nothing from the file)."""
        with self._lock:
            return self.service.cached(game_id) is not None

    def _json(self, record: GameRecord, seat: int | None = None) -> dict[str, Any]:
        """The game for a page; ``seat``: the asking person's (None: a watcher)."""
        return game_json(self.service, record, seat, self._watchers.get(record.id, 0))

    def info(self) -> dict[str, Any]:
        return {
            **self.service.info(),
            "notation": self.service.game.notation_help,
            "analysis_games": list(GAME_NAMES),
        }

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
            answer = {**self._json(record, human), **seat_urls(record, human)}
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
            return {**self._json(record, seat), **seat_urls(record, seat)}

    def rematch(self, game_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """The next game between the same people, sides swapped; each keeps their token."""
        with self._held(game_id) as (record, condition), condition:
            seat = self.service.check_token(record, body.get("token"))
            with self._lock:
                created = self.service.rematch(record, seat)
            self._changed(record, condition)
            mine = 1 - seat
            return {**self._json(created, mine), **seat_urls(created, mine)}

    def get_game(
        self, game_id: str, after: int | None = None, token: str | None = None
    ) -> dict[str, Any]:
        """The game; with ``after``, waits until its version differs (or a while passes). A
        seat's ``token`` says its person is here (presence) and gets the seat's view."""
        service = self.service
        with self._held(game_id) as (record, condition), condition:
            seat = None if token is None else service.check_token(record, token)
            service.refresh_clock(record)
            self._start_agent(record, condition)  # e.g. the agent's turn when the server stopped
            end = time.monotonic() + LONG_POLL_SECONDS
            while after is not None and record.version == after and not self.closing:
                left = end - time.monotonic()
                if left <= 0:
                    break
                condition.wait(left)  # the server's clock wakes it for its own changes
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
                action = move_action(self.service.game, match.state, body)
            else:
                action = -1  # human_move says why no move can be played now
            self.service.human_move(record, action, seat)
            self._changed(record, condition)
            self._start_agent(record, condition)
            self._wait_for_agent(record, condition, body)
            return self._json(record, seat)

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

    def _start_agent(self, record: GameRecord, condition: threading.Condition) -> bool:
        """Starts the agent's worker if it is to move and not already thinking (lock held);
        whether it did."""
        if record.thinking or not self.service.computer_to_move(record):
            return False
        record.thinking = True
        ply = len(record.match.actions)
        state = record.match.state.copy()
        worker = threading.Thread(
            target=self._agent_worker, args=(record, condition, state, ply), daemon=True
        )
        worker.start()
        return True

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
                self._schedule(record)

    def analysis(self, game_id: str) -> dict[str, Any]:
        """The level's policy and value for the position (not during a rated game)."""
        with self._held(game_id) as (record, condition):
            with condition:
                match = record.match
                if match.over:
                    raise PlayError(409, "the game is over; nothing to analyse (see its review)")
                check_analysable(record)
                state, ply = match.state.copy(), len(match.actions)
                to_move = match.to_move
            analysis = self.service.analyse_position(record, state)
        return {"id": game_id, "to_move": to_move, "moves": ply, **analysis}

    def analyse_line(self, body: dict[str, Any]) -> dict[str, Any]:
        """The analysis board: the position after ``body["moves"]``, or after the moves of the
        game ``body["from_game"]`` (refused while it is a rated game or one between people in
        progress), with the strongest level's analysis (``analysis_board``)."""
        game_id = body.get("from_game")
        if game_id is None:
            return self.board.analyse(body)
        if not isinstance(game_id, str) or not 0 < len(game_id) <= 32:
            raise PlayError(400, "'from_game' must be a game's id (the end of its /game/ link)")
        if "moves" in body:
            raise PlayError(400, "send 'moves' or 'from_game', not both: they could disagree")
        if body.get("game", self.service.game.name) != self.service.game.name:
            raise PlayError(400, f"this site's games are of {self.service.game.name}")
        with self._held(game_id) as (record, condition), condition:
            check_analysable(record)
            actions = list(record.match.actions)
        return {**self.board.analyse({**body, "moves": actions}), "from_game": game_id}

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
