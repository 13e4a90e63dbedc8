"""Exact Connect Four values for positions near the end: a test oracle and evaluation labels.

A weak solver (win / draw / loss, not the distance to it): negamax with alpha-beta over two
bitboards in numba, the layout of ``kernels.connect_four`` with row 0 at the bottom, in the form
of Pascal Pons's solver: ``current`` (the mover's stones) and ``mask`` (every stone). Each node
first looks one move ahead: a win at once settles it, two cells where the opponent would win
lose it, one such cell must be filled, and a move right under an opponent's winning cell is
never tried. The remaining moves go in the order of the threats they make (centre first on ties),
and a transposition table keyed by ``current + mask`` keeps the bounds it learns. The table lives
for the process; its keys are exact positions, so one query can reuse another's work.

Only positions with at most ``MAX_EMPTY_CELLS`` empty cells are accepted: beyond that the time a
query takes grows past what a test or an evaluation set wants to pay.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ultimate_rl.games import kernels, layout
from ultimate_rl.games.errors import UnsolvableGameError
from ultimate_rl.games.kernels import connect_four as kc
from ultimate_rl.games.solver import ILLEGAL

MAX_EMPTY_CELLS = 24
"""The most empty cells a position may have to be solved. Measured on one core: 16 empty cells
take about 0.05 ms a position (at most a few ms), 24 at most about 0.05 s, 28 up to 1 s."""

_H1 = kc.COLUMN_BITS
_BOTTOM = sum(1 << (_H1 * col) for col in range(kc.COLS))  # the bottom cell of every column
_BOARD = _BOTTOM * ((1 << kc.ROWS) - 1)  # every cell of the board, no sentinel bits
_COLUMN = np.array([((1 << kc.ROWS) - 1) << (_H1 * c) for c in range(kc.COLS)], dtype=np.int64)
_ORDER = np.array([3, 2, 4, 1, 5, 0, 6], dtype=np.int64)  # centre columns first
_TABLE_SLOTS = 4194301  # a prime: the slot is ``key % _TABLE_SLOTS``
_OPEN = 2  # not a value: the node needs searching


@njit(cache=True)
def _winning_cells(position: np.int64, mask: np.int64) -> np.int64:
    """The empty cells where one more stone would give ``position`` four in a row."""
    r = (position << 1) & (position << 2) & (position << 3)  # vertical: three below
    for shift in (_H1, _H1 - 1, _H1 + 1):  # horizontal and both diagonals
        p = (position << shift) & (position << (2 * shift))
        r |= p & (position << (3 * shift))
        r |= p & (position >> shift)
        p = (position >> shift) & (position >> (2 * shift))
        r |= p & (position << shift)
        r |= p & (position >> (3 * shift))
    return r & (_BOARD ^ mask)


@njit(cache=True)
def _popcount(bits: np.int64) -> int:
    count = 0
    while bits != 0:
        bits &= bits - 1
        count += 1
    return count


@njit(cache=True)
def _ordered_moves(current: np.int64, mask: np.int64, playable: np.int64, moves: np.ndarray) -> int:
    """Writes the single-stone moves of ``playable`` to ``moves``, most threats made first
    (centre first on ties); returns how many."""
    scores = np.zeros(kc.COLS, dtype=np.int64)
    count = 0
    for col in _ORDER:
        move = playable & _COLUMN[col]
        if move != 0:
            score = _popcount(_winning_cells(current | move, mask))
            at = count
            while at > 0 and scores[at - 1] < score:  # insertion sort, stable for ties
                moves[at], scores[at] = moves[at - 1], scores[at - 1]
                at -= 1
            moves[at], scores[at] = move, score
            count += 1
    return count


# Fields of one row of the search stack (one row per ply below the root).
_CURRENT, _MASK, _ALPHA, _BETA, _LOW, _BEST, _LOWER, _UPPER, _KEY, _NEXT, _COUNT = range(11)
_FIELDS = 11


@njit(cache=True)
def _enter(node: np.ndarray, moves: np.ndarray, keys: np.ndarray, bounds: np.ndarray) -> int:
    """Sets up a node whose CURRENT, MASK, ALPHA and BETA are filled in.

    Returns its value when the look-ahead or the table settles it, else _OPEN with the moves to
    try in ``moves`` and the rest of the row ready for the search.
    """
    current, mask = node[_CURRENT], node[_MASK]
    possible = (mask + _BOTTOM) & _BOARD
    if possible == 0:
        return 0  # the board is full: nobody made four
    if _winning_cells(current, mask) & possible != 0:
        return 1
    threats = _winning_cells(current ^ mask, mask)
    forced = possible & threats
    if forced != 0:
        if forced & (forced - 1) != 0:
            return -1  # two cells to fill at once
        possible = forced
    playable = possible & ~(threats >> 1)  # not right under a cell where the opponent wins
    if playable == 0:
        return -1
    key = current + mask
    slot = key % _TABLE_SLOTS
    lower, upper = -1, 1
    if keys[slot] == key:
        lower, upper = bounds[slot, 0], bounds[slot, 1]
        if lower >= node[_BETA] or lower == upper:
            return lower
        if upper <= node[_ALPHA]:
            return upper
        node[_ALPHA], node[_BETA] = max(node[_ALPHA], lower), min(node[_BETA], upper)
    node[_LOW], node[_BEST], node[_LOWER], node[_UPPER] = node[_ALPHA], -1, lower, upper
    node[_KEY], node[_NEXT] = key, 0
    node[_COUNT] = _ordered_moves(current, mask, playable, moves)
    return _OPEN


@njit(cache=True)
def _leave(node: np.ndarray, keys: np.ndarray, bounds: np.ndarray) -> int:
    """A searched node's value; what it proves (a bound or the exact value) goes in the table."""
    best, lower, upper = node[_BEST], node[_LOWER], node[_UPPER]
    if best <= node[_LOW]:
        upper = min(upper, best)
    elif best >= node[_BETA]:
        lower = max(lower, best)
    else:
        lower, upper = best, best
    slot = node[_KEY] % _TABLE_SLOTS
    keys[slot] = node[_KEY]
    bounds[slot, 0], bounds[slot, 1] = lower, upper
    return best


@njit(cache=True)
def _negamax(current: np.int64, mask: np.int64, keys: np.ndarray, bounds: np.ndarray) -> int:
    """Exact value (+1/0/-1) for the mover: fail-soft alpha-beta on an explicit stack.

    (numba's cache cannot hold a recursive function: reloading one crashes, numba issue 6061.)
    """
    stack = np.zeros((kc.NUM_CELLS + 1, _FIELDS), dtype=np.int64)
    moves = np.zeros((kc.NUM_CELLS + 1, kc.COLS), dtype=np.int64)
    stack[0, _CURRENT], stack[0, _MASK], stack[0, _ALPHA], stack[0, _BETA] = current, mask, -1, 1
    depth = 0
    value = _enter(stack[0], moves[0], keys, bounds)
    while True:
        if value != _OPEN:  # the node at `depth` is done: hand its value to its parent
            if depth == 0:
                return value
            depth -= 1
            node = stack[depth]
            node[_BEST] = max(node[_BEST], -value)
            node[_ALPHA] = max(node[_ALPHA], -value)
        node = stack[depth]
        if node[_ALPHA] < node[_BETA] and node[_NEXT] < node[_COUNT]:
            child = stack[depth + 1]
            child[_CURRENT] = node[_CURRENT] ^ node[_MASK]
            child[_MASK] = node[_MASK] | moves[depth, node[_NEXT]]
            child[_ALPHA], child[_BETA] = -node[_BETA], -node[_ALPHA]
            node[_NEXT] += 1
            depth += 1
            value = _enter(child, moves[depth], keys, bounds)
        else:
            value = _leave(node, keys, bounds)


@njit(cache=True)
def _action_values(
    state: np.ndarray, keys: np.ndarray, bounds: np.ndarray, values: np.ndarray
) -> None:
    """``values[col]``: the mover's exact result after dropping a stone in ``col``, or ILLEGAL."""
    player = state[layout.PLAYER]
    current = kc.board(state, player)
    mask = current | kc.board(state, 1 - player)
    for col in range(kc.COLS):
        values[col] = ILLEGAL
        if state[layout.STATUS] != layout.ONGOING or state[kc.HEIGHTS + col] >= kc.ROWS:
            continue
        move = ((mask + _BOTTOM) & _BOARD) & _COLUMN[col]
        if kc.has_four(current | move):
            values[col] = 1
        else:
            values[col] = -_negamax(current ^ mask, mask | move, keys, bounds)


_TABLE: list[np.ndarray] = []  # [keys, bounds] once the first query has made them


def _table() -> tuple[np.ndarray, np.ndarray]:
    """This process's transposition table (about 42 MB), made on first use."""
    if not _TABLE:
        _TABLE.append(np.full(_TABLE_SLOTS, -1, dtype=np.int64))
        _TABLE.append(np.zeros((_TABLE_SLOTS, 2), dtype=np.int8))
    return _TABLE[0], _TABLE[1]


def empty_cells(state: np.ndarray) -> int:
    """How many cells of the board are still empty."""
    return kc.NUM_CELLS - int(state[layout.MOVES])


def action_values(state: np.ndarray) -> np.ndarray:
    """Exact result (+1/0/-1 for the player to move) of every column; ILLEGAL (-2) where illegal.

    Raises UnsolvableGameError for a position with more than ``MAX_EMPTY_CELLS`` empty cells.
    """
    empty = empty_cells(state)
    if empty > MAX_EMPTY_CELLS and not kernels.is_terminal(state):
        raise UnsolvableGameError(
            f"this connect_four position has {empty} empty cells; the solver takes at most "
            f"MAX_EMPTY_CELLS = {MAX_EMPTY_CELLS} (play on, or use a search agent such as uct)"
        )
    values = np.empty(kc.NUM_ACTIONS, dtype=np.int64)
    _action_values(state, *_table(), values)
    return values


def labelled_positions(
    count: int, min_empty: int = 12, max_empty: int = 16, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """``count`` seeded random positions still in play and their ``action_values``.

    Each position gets a number of empty cells drawn from ``min_empty..max_empty`` and is reached
    by uniformly random legal moves from the start; a game that ends on the way is thrown away
    and replayed. Returns states [count, STATE_LEN] int32 and values [count, 7] int64.
    """
    if not 1 <= min_empty <= max_empty:
        raise ValueError(f"need 1 <= min_empty <= max_empty, got {min_empty} and {max_empty}")
    if max_empty > MAX_EMPTY_CELLS:
        raise UnsolvableGameError(
            f"max_empty={max_empty} is past the solver's MAX_EMPTY_CELLS = {MAX_EMPTY_CELLS}"
        )
    rng = np.random.default_rng(seed)
    states = np.zeros((count, layout.STATE_LEN), dtype=layout.STATE_DTYPE)
    values = np.zeros((count, kc.NUM_ACTIONS), dtype=np.int64)
    mask = np.zeros(layout.MAX_ACTIONS, dtype=np.uint8)
    for i in range(count):
        target = int(rng.integers(min_empty, max_empty + 1))
        state = kc.initial_state()
        while kc.NUM_CELLS - state[layout.MOVES] > target:
            kernels.legal_mask(state, mask)
            kernels.apply(state, int(rng.choice(np.flatnonzero(mask[: kc.NUM_ACTIONS]))))
            if kernels.is_terminal(state):
                state = kc.initial_state()
        states[i] = state
        values[i] = action_values(state)
    return states, values
