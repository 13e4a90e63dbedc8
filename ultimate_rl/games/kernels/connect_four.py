"""Connect Four rules (7 columns x 6 rows, four in a row wins) as numba kernels over bitboards.

Body layout (indices into the flat int32 state of ``layout.py``):

- ``STONES + 2 * p`` and ``STONES + 2 * p + 1`` (p = 0, 1): the low and high 32-bit halves of
  player p's 49-bit bitboard. Bit ``7 * col + row`` is the cell of column ``col`` (0..6 from the
  left) and row ``row`` (0 at the BOTTOM); the 7th bit of each column stays empty, so the
  shift-and win test cannot wrap from one column into the next;
- ``HEIGHTS + col``: stones in column ``col``, 0..6.

Action ``col``: the stone lands on cell ``7 * col + heights[col]``. Only the mover's board can
have gained a line, so ``apply`` tests that one board, in int64 assembled from its two halves.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ultimate_rl.games import layout
from ultimate_rl.games.registry import game_id

GAME_ID = game_id("connect_four")
STONES = layout.BODY  # 4 entries: (low, high) halves of player 0's board, then player 1's
HEIGHTS = layout.BODY + 4  # 7 entries: stones per column

ROWS = 6
COLS = 7
NUM_ACTIONS = COLS
NUM_CELLS = ROWS * COLS
NUM_PLANES = 3  # own stones, opponent stones, "the first player moves"
COLUMN_BITS = ROWS + 1  # a column's cells plus the empty sentinel bit above them
_LOW = 0xFFFFFFFF


def initial_state() -> np.ndarray:
    """The empty board, the first player to move."""
    return layout.start_state(GAME_ID)


@njit(cache=True)
def board(state: np.ndarray, player: int) -> np.int64:
    """Player ``player``'s 49-bit bitboard, put together from its two int32 halves."""
    low = np.int64(state[STONES + 2 * player]) & _LOW
    return low | (np.int64(state[STONES + 2 * player + 1]) << 32)


@njit(cache=True)
def set_board(state: np.ndarray, player: int, bits: np.int64) -> None:
    """Stores ``bits`` as player ``player``'s two int32 halves (the low one may read negative)."""
    low = bits & _LOW
    if low >= 2**31:
        low -= 2**32
    state[STONES + 2 * player] = low
    state[STONES + 2 * player + 1] = bits >> 32


@njit(cache=True)
def has_four(bits: np.int64) -> bool:
    """Whether ``bits`` holds four in a row: vertical, horizontal and both diagonals."""
    for shift in (1, COLUMN_BITS, COLUMN_BITS - 1, COLUMN_BITS + 1):
        pairs = bits & (bits >> shift)
        if pairs & (pairs >> (2 * shift)) != 0:
            return True
    return False


@njit(cache=True)
def cell_bit(row: int, col: int) -> int:
    """The bitboard bit of the cell on ``row`` (counted from the TOP) and column ``col``."""
    return COLUMN_BITS * col + ROWS - 1 - row


@njit(cache=True)
def cell_owner(state: np.ndarray, row: int, col: int) -> int:
    """0 or 1 for the player whose stone is on (``row`` from the TOP, ``col``), -1 if empty."""
    bit = np.int64(1) << cell_bit(row, col)
    for player in range(2):
        if board(state, player) & bit != 0:
            return player
    return -1


@njit(cache=True)
def num_actions(state: np.ndarray) -> int:
    return NUM_ACTIONS


@njit(cache=True)
def legal_mask(state: np.ndarray, mask: np.ndarray) -> int:
    if state[layout.STATUS] != layout.ONGOING:
        mask[:NUM_ACTIONS] = 0
        return 0
    count = 0
    for col in range(COLS):
        free = state[HEIGHTS + col] < ROWS
        mask[col] = free
        count += free
    return count


@njit(cache=True)
def apply(state: np.ndarray, action: int) -> None:
    player = state[layout.PLAYER]
    height = state[HEIGHTS + action]
    bits = board(state, player) | (np.int64(1) << (COLUMN_BITS * action + height))
    set_board(state, player, bits)
    state[HEIGHTS + action] = height + 1
    state[layout.MOVES] += 1
    state[layout.LAST] = action
    if has_four(bits):
        state[layout.STATUS] = layout.FIRST_WON + player
    elif state[layout.MOVES] == NUM_CELLS:
        state[layout.STATUS] = layout.DRAW
    state[layout.PLAYER] = 1 - player


@njit(cache=True)
def encode(state: np.ndarray, planes: np.ndarray) -> None:
    """Planes (3, 6, 7), row 0 the top row: the mover's stones, the opponent's, ones if X moves."""
    player = state[layout.PLAYER]
    own = board(state, player)
    other = board(state, 1 - player)
    for row in range(ROWS):
        for col in range(COLS):
            bit = cell_bit(row, col)
            planes[0, row, col] = (own >> bit) & 1
            planes[1, row, col] = (other >> bit) & 1
            planes[2, row, col] = 1.0 if player == 0 else 0.0


@njit(cache=True)
def random_playout(state: np.ndarray) -> float:
    """Plays uniformly random moves from a COPY of ``state``; +1/0/-1 from the first player's view.

    The UCT baseline's hot loop: both boards and the heights live in local variables, and each
    move costs one draw from numba's generator (seeded by ``kernels.seed``) and one win test.
    """
    status = np.int64(state[layout.STATUS])
    player = np.int64(state[layout.PLAYER])
    moves = np.int64(state[layout.MOVES])
    boards = np.array([board(state, 0), board(state, 1)])
    heights = state[HEIGHTS : HEIGHTS + COLS].copy()
    free = np.empty(COLS, dtype=np.int64)
    while status == layout.ONGOING:
        count = 0
        for col in range(COLS):
            if heights[col] < ROWS:
                free[count] = col
                count += 1
        if count == 0:
            raise ValueError("random_playout: inconsistent connect_four state (no legal move)")
        col = free[np.random.randint(count)]
        boards[player] |= np.int64(1) << (COLUMN_BITS * col + heights[col])
        heights[col] += 1
        moves += 1
        if has_four(boards[player]):
            status = layout.FIRST_WON + player
        elif moves == NUM_CELLS:
            status = layout.DRAW
        player = 1 - player
    if status == layout.FIRST_WON:
        return 1.0
    if status == layout.SECOND_WON:
        return -1.0
    return 0.0
