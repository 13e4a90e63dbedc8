"""A self-play book: a file of positions that a share of the games start from (``selfplay.book``).

Self-play reaches the positions its own search leads to; a book adds those it must learn but
seldom meets: a tournament's openings, or the positions of an every-line walk where the network
must hold its value (``docs/experiments/numerical_ttt_perfect/walk_book.py`` writes them). The
file is ``numpy.save`` of an int32 array ``[N, STATE_LEN]`` of the game's raw states (made with
``game.initial_state`` and ``game.apply``), none of them finished. A run that grows its book
(``selfplay.book.walk``) rewrites its file as it grows; ``BookFile`` reads the new one.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ultimate_rl.games import Game, layout
from ultimate_rl.games.errors import InvalidStateError

EMPTY_BOOK = np.zeros((0, layout.STATE_LEN), dtype=layout.STATE_DTYPE)
"""A run's own book before its first walk (``selfplay.book.walk`` with no starting file)."""


class BookError(ValueError):
    """A book file that is missing, unreadable or not positions of the run's game."""


def load_book(path: str | Path, game: Game, checked: np.ndarray | None = None) -> np.ndarray:
    """The book's states ``[N, STATE_LEN]``, each checked to be an unfinished ``game`` state;
    where the file starts with the rows of ``checked`` (states checked before: a run's book
    grows by appending), only the rows after them (a million rows take seconds to check)."""
    where = f"selfplay.book.path {str(path)!r}"
    try:
        states = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise BookError(
            f"{where}: no such file (a relative path starts in the directory the run was "
            "launched from); give the file numpy.save wrote, or set selfplay.book.fraction=0"
        ) from None
    except (OSError, ValueError) as err:
        raise BookError(f"{where}: not a numpy .npy file of states ({err})") from None
    if states.ndim != 2 or states.shape[1:] != (layout.STATE_LEN,) or len(states) == 0:
        raise BookError(
            f"{where}: holds an array of shape {states.shape}; a book is [N, {layout.STATE_LEN}] "
            "raw states (numpy.save of np.stack of game states), N >= 1"
        )
    states = np.ascontiguousarray(states, dtype=layout.STATE_DTYPE)
    known = 0
    if checked is not None and np.array_equal(states[: len(checked)], checked):
        known = len(checked)
    for row, state in enumerate(states[known:], start=known):
        try:
            game.check_state(state)
        except InvalidStateError as err:
            raise BookError(f"{where}: row {row} is not a {game.name} state: {err}") from None
        if game.is_terminal(state):
            raise BookError(f"{where}: row {row} is a finished game; a book holds games to play")
    return states


class BookFile:
    """The book at ``path`` as it is now: read again when the file's size or time changes (a
    run's walks rewrite it); ``may_be_absent`` (a run's own book before its first walk, or
    before its walk lost a line) reads a missing file as no book."""

    def __init__(self, path: str | Path, game: Game, may_be_absent: bool = False) -> None:
        self.path, self.game, self.may_be_absent = Path(path), game, may_be_absent
        self.read_as: tuple[int, int] | None = None
        self.states: np.ndarray | None = None

    def current(self) -> np.ndarray | None:
        """The book's states, or ``None`` where it may be absent and is."""
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            if not self.may_be_absent:
                return load_book(self.path, self.game)  # the error that names the fix
            self.read_as, self.states = None, None
            return None
        if (stat.st_size, stat.st_mtime_ns) != self.read_as:
            self.states = load_book(self.path, self.game, checked=self.states)
            self.read_as = (stat.st_size, stat.st_mtime_ns)
        return self.states


def lost_path(path: str | Path) -> Path:
    """Beside a run's own book: the file of the latest walk's lost positions
    (``selfplay.book.lost_share``)."""
    path = Path(path)
    return path.with_name(f"{path.stem}_lost{path.suffix}")


def save_book(path: str | Path, states: np.ndarray) -> None:
    """Writes ``states`` as a book file, atomically (readers see the old book or the new one);
    an empty book removes the file."""
    path = Path(path)
    if len(states) == 0:
        path.unlink(missing_ok=True)
        return
    temp = path.with_name(f".{path.name}.tmp")
    with open(temp, "wb") as file:
        np.save(file, states)
    os.replace(temp, path)
