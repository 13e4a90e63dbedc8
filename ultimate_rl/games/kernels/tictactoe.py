"""Tic-tac-toe rules (``size`` x ``size`` board, ``k`` in a row wins) as numba kernels.

Body layout (indices into the flat int32 state of ``layout.py``):

- ``SIZE``: the board side, 3..5;
- ``K_IN_ROW``: how many marks in a row win, 3..size;
- ``MARKS + p`` (p = 0, 1): bitboard of player p's marks, bit ``row * size + col``
  (at most 25 bits, so it fits the int32 entry).

Size and k live in the state so the kernels need no other argument. Action ``row * size + col``.
A win is found by testing only the lines through the cell just played, from a table built once
per (size, k) at import: ``LINES_THROUGH[size, k, cell, :LINE_COUNT[size, k, cell]]``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ultimate_rl.games import layout
from ultimate_rl.games.board import lines
from ultimate_rl.games.registry import game_id

GAME_ID = game_id("tictactoe")
SIZE = layout.BODY
K_IN_ROW = layout.BODY + 1
MARKS = layout.BODY + 2

MIN_SIZE = 3
MAX_SIZE = 5
MIN_K = 3
NUM_PLANES = 3  # own marks, opponent marks, "the first player moves"


def _line_masks(size: int, k: int) -> list[int]:
    """Bitmasks of every k-cell straight line on a size x size board."""
    return [sum(1 << cell for cell in line) for line in lines(size, size, k)]


def _line_tables() -> tuple[np.ndarray, np.ndarray]:
    """Lines through each cell, for every supported (size, k)."""
    most = 4 * MAX_SIZE  # a cell lies on at most k <= size lines per direction
    shape = (MAX_SIZE + 1, MAX_SIZE + 1, MAX_SIZE * MAX_SIZE)
    lines_through = np.zeros((*shape, most), dtype=np.int64)
    line_count = np.zeros(shape, dtype=np.int64)
    for size in range(MIN_SIZE, MAX_SIZE + 1):
        for k in range(MIN_K, size + 1):
            for line in _line_masks(size, k):
                for cell in range(size * size):
                    if line >> cell & 1:
                        lines_through[size, k, cell, line_count[size, k, cell]] = line
                        line_count[size, k, cell] += 1
    return lines_through, line_count


LINES_THROUGH, LINE_COUNT = _line_tables()


def initial_state(size: int, k: int) -> np.ndarray:
    """The empty board, first player (X) to move; size and k are assumed already validated."""
    state = layout.start_state(GAME_ID)
    state[SIZE] = size
    state[K_IN_ROW] = k
    return state


@njit(cache=True)
def num_actions(state: np.ndarray) -> int:
    return state[SIZE] * state[SIZE]


@njit(cache=True)
def legal_mask(state: np.ndarray, mask: np.ndarray) -> int:
    n = num_actions(state)
    if state[layout.STATUS] != layout.ONGOING:
        mask[:n] = 0
        return 0
    occupied = state[MARKS] | state[MARKS + 1]
    count = 0
    for cell in range(n):
        free = (occupied >> cell) & 1 == 0
        mask[cell] = free
        count += free
    return count


@njit(cache=True)
def apply(state: np.ndarray, action: int) -> None:
    player = state[layout.PLAYER]
    size = state[SIZE]
    k = state[K_IN_ROW]
    marks = state[MARKS + player] | (1 << action)
    state[MARKS + player] = marks
    state[layout.MOVES] += 1
    state[layout.LAST] = action
    won = False
    for j in range(LINE_COUNT[size, k, action]):
        line = LINES_THROUGH[size, k, action, j]
        if marks & line == line:
            won = True
            break
    if won:
        state[layout.STATUS] = layout.FIRST_WON + player
    elif state[layout.MOVES] == size * size:
        state[layout.STATUS] = layout.DRAW
    state[layout.PLAYER] = 1 - player


@njit(cache=True)
def encode(state: np.ndarray, planes: np.ndarray) -> None:
    """Planes (3, size, size): the mover's marks, the opponent's marks, all ones if X moves."""
    player = state[layout.PLAYER]
    size = state[SIZE]
    own = state[MARKS + player]
    other = state[MARKS + 1 - player]
    for row in range(size):
        for col in range(size):
            cell = row * size + col
            planes[0, row, col] = (own >> cell) & 1
            planes[1, row, col] = (other >> cell) & 1
            planes[2, row, col] = 1.0 if player == 0 else 0.0
