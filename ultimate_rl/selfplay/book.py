"""A self-play book: a file of positions that a share of the games start from (``selfplay.book``).

Self-play reaches the positions its own search leads to; a book adds those it must learn but
seldom meets: a tournament's openings, or the positions of an every-line walk where the network
must hold its value (``docs/experiments/numerical_ttt_perfect/walk_book.py`` writes them). The
file is ``numpy.save`` of an int32 array ``[N, STATE_LEN]`` of the game's raw states (made with
``game.initial_state`` and ``game.apply``), none of them finished.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ultimate_rl.games import Game, layout
from ultimate_rl.games.errors import InvalidStateError


class BookError(ValueError):
    """A book file that is missing, unreadable or not positions of the run's game."""


def load_book(path: str | Path, game: Game) -> np.ndarray:
    """The book's states ``[N, STATE_LEN]``, each checked to be an unfinished ``game`` state."""
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
    for row, state in enumerate(states):
        try:
            game.check_state(state)
        except InvalidStateError as err:
            raise BookError(f"{where}: row {row} is not a {game.name} state: {err}") from None
        if game.is_terminal(state):
            raise BookError(f"{where}: row {row} is a finished game; a book holds games to play")
    return states
