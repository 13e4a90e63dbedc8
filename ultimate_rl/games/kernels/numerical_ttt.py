"""Numerical tic-tac-toe (Graham) as numba kernels over the flat int32 state.

The first player writes the odd numbers 1..9, the second the even ones, each number once, in any
empty cell of a 3x3 board. Whoever completes a line of three filled cells summing to 15 wins, no
matter who wrote the other two numbers. A full board without such a line is a draw (the first
player, with 5 numbers for at most 5 turns, never runs out).

Body layout (indices into the flat int32 state of ``layout.py``):

- ``CELLS + c`` (c = 0..8, row-major from the top left): the number written in cell c, 0 if empty;
- ``USED``: bitmask of the numbers written so far, bit n for number n.

Action ``9 * cell + (number - 1)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ultimate_rl.games import layout
from ultimate_rl.games.board import lines
from ultimate_rl.games.registry import game_id

GAME_ID = game_id("numerical_ttt")
CELLS = layout.BODY
USED = layout.BODY + 9

NUM_ACTIONS = 81
TARGET = 15
# planes 0..8: where number n+1 is written; 9..17: number n-8 not yet used; 18: all ones if the
# first (odd) player moves
NUM_PLANES = 19

_LINES = lines(3, 3, 3)


def _cell_lines() -> np.ndarray:
    """``CELL_LINES[c]``: the lines (as cell triples) through cell c, padded with -1 rows."""
    table = np.full((9, 4, 3), -1, dtype=np.int64)
    count = np.zeros(9, dtype=np.int64)
    for line in _LINES:
        for cell in line:
            table[cell, count[cell]] = line
            count[cell] += 1
    return table


CELL_LINES = _cell_lines()


def initial_state() -> np.ndarray:
    """The empty board, the odd player to move."""
    return layout.start_state(GAME_ID)


@njit(cache=True)
def num_actions(state: np.ndarray) -> int:
    return NUM_ACTIONS


@njit(cache=True)
def legal_mask(state: np.ndarray, mask: np.ndarray) -> int:
    mask[:NUM_ACTIONS] = 0
    if state[layout.STATUS] != layout.ONGOING:
        return 0
    used = state[USED]
    first_number = 1 if state[layout.PLAYER] == 0 else 2
    count = 0
    for cell in range(9):
        if state[CELLS + cell] == 0:
            for number in range(first_number, 10, 2):
                if (used >> number) & 1 == 0:
                    mask[9 * cell + number - 1] = 1
                    count += 1
    return count


@njit(cache=True)
def apply(state: np.ndarray, action: int) -> None:
    player = state[layout.PLAYER]
    cell = action // 9
    number = action % 9 + 1
    state[CELLS + cell] = number
    state[USED] |= 1 << number
    state[layout.MOVES] += 1
    state[layout.LAST] = action
    won = False
    for j in range(4):
        a, b, c = CELL_LINES[cell, j, 0], CELL_LINES[cell, j, 1], CELL_LINES[cell, j, 2]
        if a < 0:
            break
        x, y, z = state[CELLS + a], state[CELLS + b], state[CELLS + c]
        if x > 0 and y > 0 and z > 0 and x + y + z == TARGET:
            won = True
            break
    if won:
        state[layout.STATUS] = layout.FIRST_WON + player
    elif state[layout.MOVES] == 9:
        state[layout.STATUS] = layout.DRAW
    state[layout.PLAYER] = 1 - player


@njit(cache=True)
def encode(state: np.ndarray, planes: np.ndarray) -> None:
    """Planes (19, 3, 3): where each number is written, which numbers are left, who moves."""
    planes[:] = 0.0
    for cell in range(9):
        number = state[CELLS + cell]
        if number > 0:
            planes[number - 1, cell // 3, cell % 3] = 1.0
    used = state[USED]
    for number in range(1, 10):
        if (used >> number) & 1 == 0:
            planes[8 + number] = 1.0
    if state[layout.PLAYER] == 0:
        planes[18] = 1.0
