"""Exact solvers for the small games: numerical tic-tac-toe and tic-tac-toe 3x3 / 4x4 (any k).

One numba negamax over the shared kernels serves every solvable game. It memoises exact values
in a dense int8 table indexed by a perfect hash of the position, so each position is solved once
per process and a later call costs a few table look-ups:

- tic-tac-toe: the board read as a base-3 number (3^9 entries for 3x3, 3^16 = 43M for 4x4);
- numerical tic-tac-toe: an offset per set of numbers written plus the rank of the cells they sit
  in (about 9.3M entries: every way to place a legal set of numbers on the board).

Both hashes read only the board, which also fixes whose turn it is and whether the game is over.
Each new position first gets a one-move look-ahead (a win at once settles it; two cells where the
opponent would win lose it; one such cell leaves only the moves that fill it), and a node's search
stops at its first winning move. Positions skipped that way are solved when a query reaches them.
Tables live in memory for the process: the first query solves from scratch (numerical_ttt about
4 s of CPU, 4x4 k=4 about 14 s, 3x3 and 4x4 k=3 well under a second) and no file is written.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ultimate_rl.games import kernels, layout
from ultimate_rl.games.base import Game
from ultimate_rl.games.errors import UnsolvableGameError
from ultimate_rl.games.kernels import numerical_ttt as kn
from ultimate_rl.games.kernels import tictactoe as kt
from ultimate_rl.games.positions import sample_positions

ILLEGAL = -2  # entry of ``action_values`` for an action that is not legal
_UNKNOWN = 0  # table entry of a position not solved yet; solved ones hold value + _SHIFT
_SHIFT = 2
_UNSETTLED = 2  # not a game value: a one-move look-ahead did not decide the position
_MAX_SOLVABLE_CELLS = 16  # tic-tac-toe up to 4x4: 3^16 table entries
_MAX_DEPTH = _MAX_SOLVABLE_CELLS + 1  # the root plus one node per move left

_POW3 = 3 ** np.arange(_MAX_SOLVABLE_CELLS, dtype=np.int64)


def _numerical_tables() -> tuple[np.ndarray, np.ndarray, int]:
    """Offsets per 9-bit set of numbers (bit n-1 for number n), popcounts, and the table size.

    A set is reachable when it holds as many odd numbers as even ones, or one more; its block
    has one entry per injective placement of its numbers on the 9 cells: 9! / (9 - m)! of them.
    """
    popcount = np.array([bin(s).count("1") for s in range(512)], dtype=np.int64)
    odd_bits, even_bits = 0b101010101, 0b010101010
    offsets = np.zeros(512, dtype=np.int64)
    total = 0
    for numbers in range(512):
        odd, even = popcount[numbers & odd_bits], popcount[numbers & even_bits]
        offsets[numbers] = total
        if odd - even in (0, 1):
            total += int(np.prod(np.arange(9 - popcount[numbers] + 1, 10, dtype=np.int64)))
    return offsets, popcount, total


_NUMERICAL_OFFSETS, _POPCOUNT9, _NUMERICAL_TABLE_SIZE = _numerical_tables()


@njit(cache=True)
def _numerical_index(state: np.ndarray) -> int:
    """Offset of the set of numbers written plus the mixed-radix rank of their cells."""
    cell_of = 0  # 4 bits per number: the cell it is written in
    for cell in range(9):
        number = state[kn.CELLS + cell]
        if number > 0:
            cell_of |= cell << (4 * number)
    free = 0x1FF
    rank = 0
    placed = 0
    for number in range(1, 10):
        if (state[kn.USED] >> number) & 1:
            cell = (cell_of >> (4 * number)) & 15
            rank = rank * (9 - placed) + _POPCOUNT9[free & ((1 << cell) - 1)]
            free &= ~(1 << cell)
            placed += 1
    return _NUMERICAL_OFFSETS[(state[kn.USED] >> 1) & 0x1FF] + rank


@njit(cache=True)
def _tictactoe_index(state: np.ndarray) -> int:
    """The board as a base-3 number: digit 1 for the first player's mark, 2 for the second's."""
    index = 0
    for cell in range(state[kt.SIZE] * state[kt.SIZE]):
        if (state[kt.MARKS] >> cell) & 1:
            index += _POW3[cell]
        elif (state[kt.MARKS + 1] >> cell) & 1:
            index += 2 * _POW3[cell]
    return index


@njit(cache=True)
def _position_index(state: np.ndarray) -> int:
    if state[layout.GAME] == kn.GAME_ID:
        return _numerical_index(state)
    return _tictactoe_index(state)


@njit(cache=True)
def _terminal_value(state: np.ndarray) -> int:
    """Result of a finished game for the player whose turn it would be."""
    if state[layout.STATUS] == layout.DRAW:
        return 0
    return 1 if state[layout.STATUS] - layout.FIRST_WON == state[layout.PLAYER] else -1


@njit(cache=True)
def _action_cell(state: np.ndarray, action: int) -> int:
    """The board cell an action writes in."""
    if state[layout.GAME] == kn.GAME_ID:
        return action // 9
    return action


@njit(cache=True)
def _winning_cells(state: np.ndarray, mask: np.ndarray, scratch: np.ndarray) -> int:
    """Bitmask of the cells where a move in ``mask`` would win at once for the mover."""
    winner_status = layout.FIRST_WON + state[layout.PLAYER]
    cells = 0
    for a in range(kernels.num_actions(state)):
        if mask[a]:
            scratch[:] = state
            kernels.apply(scratch, a)
            if scratch[layout.STATUS] == winner_status:
                cells |= 1 << _action_cell(state, a)
    return cells


@njit(cache=True)
def _settle_or_prune(
    node: np.ndarray, mask: np.ndarray, scratch: np.ndarray, scratch_mask: np.ndarray
) -> int:
    """Value of ``node`` when a one-move look-ahead settles it, else _UNSETTLED.

    The mover wins at once (+1), or the opponent threatens to win on two cells and only one can
    be filled (-1). With one threatened cell every move elsewhere loses, so ``mask`` is cut down
    to the moves into that cell. ``mask`` holds the mover's legal moves and is edited in place;
    ``scratch`` (two states) and ``scratch_mask`` are work space.
    """
    if _winning_cells(node, mask, scratch[0]) != 0:
        return 1
    opponent_view = scratch[1]
    opponent_view[:] = node
    opponent_view[layout.PLAYER] = 1 - node[layout.PLAYER]
    kernels.legal_mask(opponent_view, scratch_mask)
    threats = _winning_cells(opponent_view, scratch_mask, scratch[0])
    if threats & (threats - 1) != 0:
        return -1
    if threats != 0:
        for a in range(kernels.num_actions(node)):
            if mask[a] and (threats >> _action_cell(node, a)) & 1 == 0:
                mask[a] = 0
    return _UNSETTLED


@njit(cache=True)
def _solve_from(root: np.ndarray, table: np.ndarray) -> int:
    """Negamax value of ``root`` for its mover, filling ``table`` (explicit stack, no recursion)."""
    known = table[_position_index(root)]
    if known != _UNKNOWN:  # the common case once solved: skip allocating the stack
        return known - _SHIFT
    states = np.empty((_MAX_DEPTH + 2, layout.STATE_LEN), dtype=root.dtype)  # + 2 scratch rows
    masks = np.zeros((_MAX_DEPTH + 1, layout.MAX_ACTIONS), dtype=np.uint8)  # + 1 scratch row
    next_action = np.zeros(_MAX_DEPTH, dtype=np.int64)
    best = np.zeros(_MAX_DEPTH, dtype=np.int64)
    index = np.zeros(_MAX_DEPTH, dtype=np.int64)
    states[0, :] = root
    depth = 0
    while True:
        # enter the node at `depth`: known, terminal, or to be expanded
        node = states[depth]
        idx = _position_index(node)
        value = 0
        resolved = True
        if table[idx] != _UNKNOWN:
            value = table[idx] - _SHIFT
        elif node[layout.STATUS] != layout.ONGOING:
            value = _terminal_value(node)
            table[idx] = value + _SHIFT
        else:
            kernels.legal_mask(node, masks[depth])
            value = _settle_or_prune(node, masks[depth], states[_MAX_DEPTH:], masks[_MAX_DEPTH])
            if value != _UNSETTLED:
                table[idx] = value + _SHIFT
            else:
                index[depth] = idx
                next_action[depth] = 0
                best[depth] = -1
                resolved = False
        # pass resolved values up until some node still has a child to try, then descend into it
        while True:
            if resolved:
                if depth == 0:
                    return value
                depth -= 1
                best[depth] = max(best[depth], -value)
            action = -1
            if best[depth] < 1:  # a winning move settles the node: skip its other children
                for a in range(next_action[depth], kernels.num_actions(states[depth])):
                    if masks[depth, a]:
                        action = a
                        break
            if action < 0:
                value = best[depth]
                table[index[depth]] = value + _SHIFT
                resolved = True
                continue
            next_action[depth] = action + 1
            states[depth + 1, :] = states[depth]
            kernels.apply(states[depth + 1], action)
            depth += 1
            break


@njit(cache=True)
def _action_values(state: np.ndarray, table: np.ndarray, values: np.ndarray) -> None:
    """``values[a]``: the mover's exact result after playing ``a``; ILLEGAL if ``a`` is illegal."""
    mask = np.zeros(layout.MAX_ACTIONS, dtype=np.uint8)
    kernels.legal_mask(state, mask)
    child = np.empty_like(state)
    for a in range(values.shape[0]):
        values[a] = ILLEGAL
        if mask[a]:
            child[:] = state
            kernels.apply(child, a)
            values[a] = -_solve_from(child, table)


_TABLES: dict[tuple[int, int, int], np.ndarray] = {}


def _table_key(game: Game) -> tuple[tuple[int, int, int], int] | None:
    """The key and size of ``game``'s value table; None for a game too large to solve."""
    if game.game_id == kn.GAME_ID:
        return (game.game_id, 0, 0), _NUMERICAL_TABLE_SIZE
    if game.game_id == kt.GAME_ID and game.num_actions <= _MAX_SOLVABLE_CELLS:
        return (game.game_id, game.size, game.k), 3**game.num_actions
    return None


def is_solvable(game: Game) -> bool:
    """Whether ``solve`` handles ``game`` (numerical_ttt, tictactoe up to 4x4); costs nothing."""
    return _table_key(game) is not None


def _table(game: Game) -> np.ndarray:
    """This process's value table for ``game``, created empty on first use."""
    found = _table_key(game)
    if found is None:
        raise UnsolvableGameError(
            f"no exact solver for {game!r}: only numerical_ttt and tictactoe 3x3 and 4x4 (any k) "
            "are small enough; use a search agent (e.g. uct) for this game"
        )
    key, size = found
    if key not in _TABLES:
        _TABLES[key] = np.zeros(size, dtype=np.int8)
    return _TABLES[key]


def action_values(game: Game, state: np.ndarray) -> np.ndarray:
    """Exact result (+1/0/-1 for the player to move) of every action; ILLEGAL (-2) where illegal.

    The fast path for agents that query many positions: one compiled call per position.
    """
    table = _table(game)
    values = np.empty(game.num_actions, dtype=np.int64)
    _action_values(game.check_state(state), table, values)
    return values


def solve(game: Game, state: np.ndarray) -> tuple[int, np.ndarray]:
    """Exact value of ``state`` for the player to move and the sorted actions that achieve it,
    from the game's own solver (``Game.exact_action_values``: these tables, or Connect Four's).

    A finished game gets its result from the view of the player whose turn it would be (so -1
    after a win) and no actions.
    """
    if game.is_terminal(state):
        return int(_terminal_value(state)), np.zeros(0, dtype=np.int64)
    values = game.exact_action_values(state)
    if values is None:
        raise UnsolvableGameError(
            f"no exact solver for this position of {game!r}; use a search agent (e.g. uct)"
        )
    legal = values != ILLEGAL
    if not legal.any():
        return int(_terminal_value(state)), np.zeros(0, dtype=np.int64)
    value = int(values[legal].max())
    return value, np.flatnonzero(values == value).astype(np.int64)


class SolvedByTables:
    """The exact-solver hooks of a ``Game`` these tables solve (numerical_ttt, tictactoe up to
    4x4): values from ``action_values``, test positions from random play."""

    def exact_action_values(self: Game, state: np.ndarray) -> np.ndarray | None:
        return action_values(self, state) if is_solvable(self) else None

    def exact_positions(self: Game, count: int, seed: int) -> list[np.ndarray]:
        return sample_positions(self, count, seed) if is_solvable(self) else []
