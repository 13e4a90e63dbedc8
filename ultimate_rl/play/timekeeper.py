"""The server's own clock: it acts on a game when the game is due, whoever is or is not reading.

A game is due when its mover's turn clock runs out or the computer is to move for an away person
(``PlayService.due_in``). Requests only say when each game is next due (``schedule``); one thread
sleeps until the earliest such moment and then calls ``act(game_id)``, which ends the game on
time or starts the computer and schedules what comes next. Moments come from the service's
clock, which tests replace with a fake one: the thread therefore looks at it at least every
``poll_seconds`` rather than trusting one long sleep. The same thread writes the heartbeat
(``beat``) that lets a restarted server give back the time no server ran (``store``).
"""

from __future__ import annotations

import heapq
import sys
import threading
import traceback
from collections.abc import Callable

POLL_SECONDS = 1.0  # the longest the thread sleeps without reading the clock
BEAT_SECONDS = 1.0  # a heartbeat at most this often (by the clock): one small write each


class Timekeeper:
    """Calls ``act(game_id)`` once each scheduled moment has come, in its own thread."""

    def __init__(
        self,
        clock: Callable[[], float],
        act: Callable[[str], None],
        beat: Callable[[], None],
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        self.clock = clock
        self.act = act
        self.beat = beat
        self.poll_seconds = poll_seconds
        self._condition = threading.Condition()
        self._queue: list[tuple[float, str]] = []  # (when, game id), earliest first
        self._next: dict[str, float] = {}  # game id -> its earliest moment in the queue
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._beaten = float("-inf")  # when the last heartbeat was

    def schedule(self, game_id: str, seconds: float | None) -> None:
        """The game is due in ``seconds`` (None: nothing is coming). A later moment than one
        already queued changes nothing: ``act`` reschedules the game when the earlier one comes."""
        if seconds is None:
            return
        when = self.clock() + seconds
        with self._condition:
            if self._next.get(game_id, float("inf")) <= when:
                return
            self._next[game_id] = when
            heapq.heappush(self._queue, (when, game_id))
            if self._queue[0] == (when, game_id):
                self._condition.notify()

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._stopping

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="timekeeper", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stops the thread (its last heartbeat stays where it was)."""
        with self._condition:
            self._stopping = True
            self._condition.notify()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(10)

    def _due(self) -> list[str]:
        """Waits until some game is due (or a poll passes); the due games' ids."""
        with self._condition:
            now = self.clock()
            if not self._queue or self._queue[0][0] > now:
                wait = self.poll_seconds if not self._queue else self._queue[0][0] - now
                self._condition.wait(min(wait, self.poll_seconds))
                now = self.clock()
            due = []
            while self._queue and self._queue[0][0] <= now:
                when, game_id = heapq.heappop(self._queue)
                if self._next.get(game_id) == when:  # else a stale, superseded moment
                    del self._next[game_id]
                    due.append(game_id)
            return due

    def _run(self) -> None:
        while not self._stopping:
            for game_id in self._due():
                self._guarded(self.act, game_id)
            if self.clock() >= self._beaten + BEAT_SECONDS:
                self._beaten = self.clock()
                self._guarded(self.beat)

    @staticmethod
    def _guarded(call: Callable[..., None], *args: str) -> None:
        """A failing game or database must not stop the clock of every other game."""
        try:
            call(*args)
        except Exception:
            traceback.print_exc(file=sys.stderr)
