"""The browser API's methods over the shared core (``PlayService``), with the web's threading.

Concurrency: one ``Condition`` per game guards it (moves, resigns, clock checks, saves); the
agent thinks in a worker thread that holds only its level's lock, so reads of this and every other
game go on meanwhile; watchers long-poll on the game's condition (``?after=VERSION``) and wake on
the next change or when the person's clock runs out. The service's cache is guarded by one lock,
and keeps every game a request holds (``_held``), so there is never a second copy of a game in
memory whose saves would overwrite the first's.
"""

from __future__ import annotations

import sys
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ultimate_rl.play.notation import MoveError, parse_move
from ultimate_rl.play.service import GameRecord, PlayError, PlayService
from ultimate_rl.play.session import parse_side, parse_turn_seconds

LONG_POLL_SECONDS = 15.0  # a watcher's request returns after this long even if nothing changed
MOVE_WAIT_SECONDS = 300.0  # a move request with wait=true returns after the reply or this long


class WebPlay:
    """The API: one method per endpoint, each returning JSON-ready data or raising PlayError."""

    def __init__(self, service: PlayService, *, read_timeout: float = 10.0) -> None:
        self.service = service
        self.read_timeout = read_timeout  # seconds a request's headers and body may take
        self._lock = threading.Lock()
        self._conditions: dict[str, threading.Condition] = {}

    @contextmanager
    def _held(self, game_id: str) -> Iterator[tuple[GameRecord, threading.Condition]]:
        """The game and its condition, kept in the service's memory while the request holds it:
        were it dropped, the next request would load a second copy of the game and each copy's
        saves would overwrite the other's moves."""
        with self._lock:
            record = self.service.load(game_id)
            condition = self._conditions.setdefault(game_id, threading.Condition())
            record.users += 1
        try:
            yield record, condition
        finally:
            with self._lock:
                record.users -= 1

    def _json(self, record: GameRecord) -> dict[str, Any]:
        return {
            "id": record.id,
            "version": record.version,
            "level": record.level.to_json(),
            "rated": record.rated,
            "player": record.player,
            "rating_change": record.rating_change,
            "thinking": record.thinking,
            **record.match.to_json(self.service.clock()),
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
        level = body.get("level")
        if level is not None and not isinstance(level, str):
            raise PlayError(400, "'level' must be a level's name, see /api/info")
        with self._lock:
            created = self.service.create(
                human,
                level=level,
                turn_seconds=turn_seconds,
                rated=rated,
                player=body.get("player"),
            )
        with self._held(created.id) as (record, condition), condition:
            self._start_agent(record, condition)
            self._wait_for_agent(record, condition, body)
            return {
                **self._json(record),
                "token": record.token,
                "play_url": f"/game/{record.id}#play={record.token}",
                "watch_url": f"/game/{record.id}",
            }

    def get_game(self, game_id: str, after: int | None = None) -> dict[str, Any]:
        """The game; with ``after``, waits until its version differs (or a while passes)."""
        clock = self.service.clock
        with self._held(game_id) as (record, condition), condition:
            self.service.refresh_clock(record)
            self._start_agent(record, condition)  # e.g. the agent's turn when the server stopped
            end = time.monotonic() + LONG_POLL_SECONDS
            while after is not None and record.version == after:
                left = end - time.monotonic()
                if left <= 0:
                    break
                clock_left = record.match.seconds_left(clock())
                condition.wait(left if clock_left is None else min(left, clock_left + 0.05))
                self.service.refresh_clock(record)
            return self._json(record)

    def move(self, game_id: str, body: dict[str, Any]) -> dict[str, Any]:
        with self._held(game_id) as (record, condition), condition:
            self.service.check_token(record, body.get("token"))
            self.service.refresh_clock(record)
            match = record.match
            if "ply" in body and not match.over and body["ply"] != len(match.actions):
                raise PlayError(
                    409,
                    f"the game has moved on ({len(match.actions)} moves, your page showed "
                    f"{body['ply']}); it is redrawn now",
                )
            if not match.over and match.human_to_move:
                action = self._read_action(record, body)
            else:
                action = -1  # human_move says why no move can be played now
            self.service.human_move(record, action)
            condition.notify_all()
            self._start_agent(record, condition)
            self._wait_for_agent(record, condition, body)
            return self._json(record)

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
            self.service.check_token(record, body.get("token"))
            self.service.resign(record)
            condition.notify_all()
            return self._json(record)

    def _wait_for_agent(
        self, record: GameRecord, condition: threading.Condition, body: dict[str, Any]
    ) -> None:
        """Unless the body says ``"wait": false``, waits (lock released) for the agent's reply."""
        if body.get("wait", True) is not False:
            condition.wait_for(lambda: not record.thinking, MOVE_WAIT_SECONDS)

    def _start_agent(self, record: GameRecord, condition: threading.Condition) -> None:
        """Starts the agent's worker if it is to move and not already thinking (lock held)."""
        if record.thinking or not self.service.agent_to_move(record):
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
                condition.notify_all()

    def analysis(self, game_id: str) -> dict[str, Any]:
        """The level's policy and value for the position (not during a rated game)."""
        with self._held(game_id) as (record, condition):
            with condition:
                match = record.match
                if match.over:
                    raise PlayError(409, "the game is over; nothing to analyse (see its review)")
                if record.rated:
                    raise PlayError(403, "no analysis during a rated game")
                state, ply = match.state.copy(), len(match.actions)
                to_move = match.to_move
            analysis = self.service.analyse_position(record, state)
        return {"id": game_id, "to_move": to_move, "moves": ply, **analysis}

    def review(self, game_id: str) -> dict[str, Any]:
        """The finished game move by move with the agent's value and preferred move."""
        with self._held(game_id) as (record, condition):
            with condition:
                missing = self.service.review_missing(record)
            found = self.service.analyse_plies(record, missing)  # slow: without the game's lock
            with condition:
                self.service.add_reviews(record, found)
                return self.service.review(record)

    def end_expired_games(self) -> None:
        """Ends on time the games whose clock ran out unread, so ratings never wait for a read
        (a player cannot dodge a loss by closing the page)."""
        for game_id in self.service.db.expired_games(self.service.clock()):
            try:
                with self._held(game_id) as (record, condition), condition:
                    self.service.refresh_clock(record)
                    condition.notify_all()
            except PlayError:  # another game's row (another game type in the same file)
                continue

    def player(self, name: str) -> dict[str, Any]:
        self.end_expired_games()
        return self.service.player(name)

    def leaderboard(self) -> dict[str, Any]:
        self.end_expired_games()
        return self.service.leaderboard()


def _text(body: dict[str, Any], key: str, default: str) -> str:
    value = body.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f"'{key}' must be text, e.g. {default!r}")
    return value
