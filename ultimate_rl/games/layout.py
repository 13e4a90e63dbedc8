"""Layout of the flat state array shared by every game and every kernel.

A state is a 1-D ``int32`` array of ``STATE_LEN`` entries. The header (the first ``BODY``
entries) means the same thing in every game, so search and self-play kernels can read whose turn
it is and whether the game is over without knowing which game they run. The rest is the game's own.
"""

from __future__ import annotations

import numpy as np

STATE_LEN = 32
STATE_DTYPE = np.int32

# Header fields (indices into the state array).
GAME = 0  # game id: the game's index in registry.GAME_NAMES
PLAYER = 1  # player to move: 0 (first player) or 1
STATUS = 2  # one of the STATUS_* constants below
MOVES = 3  # number of moves played so far
LAST = 4  # last action played, -1 at the start
BODY = 5  # first game-specific index

# Values of state[STATUS].
ONGOING = 0
FIRST_WON = 1
SECOND_WON = 2
DRAW = 3

# Largest action space of any game: kernels size scratch masks with it.
MAX_ACTIONS = 81


def start_state(game_id: int) -> np.ndarray:
    """A state whose header says: game ``game_id``, first player to move, no move yet; the body
    is all zeros for the game's ``initial_state`` to fill."""
    state = np.zeros(STATE_LEN, dtype=STATE_DTYPE)
    state[GAME] = game_id
    state[STATUS] = ONGOING
    state[LAST] = -1
    return state
