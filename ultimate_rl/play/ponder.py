"""Pondering: a level that keeps a search tree thinks on the person's time.

After a level moves against a person, its agent searches the person's position (``ponder``:
``NetworkAgent.ponder``) until the person moves or ``seconds`` pass, so the reply starts from the
pondered subtree of the move the person made. Bounded so that a busy site stays responsive: one
ponder on the whole site at a time (a new one ends the last), and any level's move ends it
before it thinks (the move gets the cores). Agents without ``ponder`` (random, UCT, perfect)
never ponder.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ultimate_rl.games.base import Game


class Ponderer:
    """The site's one ponder: ``start`` after a level's move, ``stop`` before any level thinks."""

    def __init__(self, seconds: float) -> None:
        if not (isinstance(seconds, int | float) and 0 <= seconds < float("inf")):
            raise ValueError(
                f"ponder_seconds must be seconds >= 0 (0: no pondering), got {seconds!r}"
            )
        self.seconds = float(seconds)
        self._lock = threading.Lock()
        self._stop: threading.Event | None = None
        self._thread: threading.Thread | None = None

    def start(self, agent: Any, game: Game, state: np.ndarray) -> bool:
        """Ponders ``state`` (the person to move) with ``agent`` in a thread, ending the site's
        last ponder; False when the agent cannot ponder or pondering is off."""
        if self.seconds <= 0 or not callable(getattr(agent, "ponder", None)):
            return False
        stop = threading.Event()
        thread = threading.Thread(
            target=agent.ponder,
            args=(game, state.copy(), self.seconds),
            kwargs={"stop": stop},
            name="ponder",
            daemon=True,
        )
        with self._lock:
            if self._stop is not None:
                self._stop.set()
            self._stop, self._thread = stop, thread
        thread.start()
        return True

    def stop(self) -> None:
        """Ends the running ponder (within one network call); it keeps the tree it grew."""
        with self._lock:
            if self._stop is not None:
                self._stop.set()
            self._stop = self._thread = None

    @property
    def running(self) -> bool:
        with self._lock:
            return self._thread is not None and self._thread.is_alive()
