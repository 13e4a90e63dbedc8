"""What a front end draws: the board as a grid of cells, rebuilt from the game's move history.

The terminal and the browser draw the same ``BoardView``. It is built from the actions played and
the game's public API only (``legal_actions``, ``current_player``...), never from the private
layout of a state, so a change inside the engines cannot break the pictures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ultimate_rl.games.base import Game

# Every line of three in a 3x3 grid (cells row-major 0..8).
LINES_3X3 = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


@dataclass(frozen=True)
class Geometry:
    """Where each action of a game lands on the drawn square grid."""

    game: str
    side: int  # the grid is side x side cells
    action_cells: np.ndarray  # grid index (row * side + col) each action plays on
    mark_names: tuple[str, str]  # how the two players are called: ("X", "O") or ("odd", "even")

    @property
    def is_uttt(self) -> bool:
        return self.game == "uttt"

    @property
    def writes_numbers(self) -> bool:
        """Numerical tic-tac-toe: an action writes a number instead of a player's mark."""
        return self.game == "numerical_ttt"

    def number_of(self, action: int) -> int:
        """The number an action writes (numerical tic-tac-toe only)."""
        return int(action) % 9 + 1


def uttt_action_cell(action: int) -> int:
    """Grid index on the 9x9 grid of uttt action ``9 * board + cell`` (DESIGN.md's encoding)."""
    board, cell = divmod(int(action), 9)
    return (3 * (board // 3) + cell // 3) * 9 + 3 * (board % 3) + cell % 3


def geometry_of(game: Game) -> Geometry:
    """The drawing geometry of one of the three games; a clear error for any other game."""
    if game.name == "uttt":
        cells = np.array([uttt_action_cell(a) for a in range(81)], dtype=np.int64)
        return Geometry("uttt", 9, cells, ("X", "O"))
    if game.name == "numerical_ttt":
        return Geometry("numerical_ttt", 3, np.arange(81, dtype=np.int64) // 9, ("odd", "even"))
    if game.name == "tictactoe":
        side = math.isqrt(game.num_actions)
        return Geometry("tictactoe", side, np.arange(game.num_actions, dtype=np.int64), ("X", "O"))
    raise ValueError(
        f"no board drawing for game {game.name!r}; play uttt, numerical_ttt or tictactoe"
    )


@dataclass(frozen=True)
class BoardView:
    """One position as a front end draws it. Cell indices are grid indices (row * side + col)."""

    geometry: Geometry
    cells: list[str]  # "" for an empty cell, else "X"/"O" or the number written
    owners: list[int]  # -1 empty, else the player (0 or 1) who played the cell
    last_cell: int | None
    playable_cells: list[bool]  # some legal action plays on this cell
    to_move: int | None  # None once the game is over
    boards: list[str]  # uttt: per small board "" (open), "X", "O" or "draw"; empty otherwise
    active_boards: list[int]  # uttt: small boards the mover may play in
    numbers_left: list[int]  # numerical_ttt: numbers the mover may still write
    winning_cells: list[int]  # the cells of the line(s) that won the game (uttt: whole boards)

    def to_json(self) -> dict[str, Any]:
        """Plain data for the browser."""
        return {
            "game": self.geometry.game,
            "side": self.geometry.side,
            "cells": self.cells,
            "owners": self.owners,
            "last_cell": self.last_cell,
            "playable_cells": self.playable_cells,
            "to_move": self.to_move,
            "boards": self.boards,
            "active_boards": self.active_boards,
            "numbers_left": self.numbers_left,
            "winning_cells": self.winning_cells,
            "action_cells": self.geometry.action_cells.tolist(),
            "mark_names": list(self.geometry.mark_names),
        }


def small_board_results(owners: list[int]) -> list[str]:
    """uttt: each small board's result from the 9x9 owners grid: "", "X", "O" or "draw"."""
    results = []
    for board in range(9):
        marks = [owners[uttt_action_cell(9 * board + c)] for c in range(9)]
        winner = next(
            (
                marks[a]
                for a, b, c in LINES_3X3
                if marks[a] >= 0 and marks[a] == marks[b] == marks[c]
            ),
            -1,
        )
        if winner >= 0:
            results.append("XO"[winner])
        else:
            results.append("draw" if min(marks) >= 0 else "")
    return results


def _lines(side: int, k: int) -> list[list[int]]:
    """Every run of ``k`` cells in a row, column or diagonal of a ``side`` x ``side`` grid."""
    runs = []
    for row in range(side):
        for col in range(side):
            for d_row, d_col in ((0, 1), (1, 0), (1, 1), (1, -1)):
                end_row, end_col = row + d_row * (k - 1), col + d_col * (k - 1)
                if 0 <= end_row < side and 0 <= end_col < side:
                    runs.append([(row + d_row * i) * side + col + d_col * i for i in range(k)])
    return runs


def winning_cells(game: Game, cells: list[str], owners: list[int], boards: list[str]) -> list[int]:
    """The cells of every winning line on the board: the picture's highlight once a game is won."""
    won: set[int] = set()
    if game.name == "uttt":
        for line in LINES_3X3:
            if (
                boards[line[0]] in ("X", "O")
                and boards[line[0]] == boards[line[1]] == boards[line[2]]
            ):
                won.update(uttt_action_cell(9 * b + c) for b in line for c in range(9))
    elif game.name == "numerical_ttt":
        for line in LINES_3X3:
            if all(cells[c] for c in line) and sum(int(cells[c]) for c in line) == 15:
                won.update(line)
    else:
        for line in _lines(game.size, game.k):
            if owners[line[0]] >= 0 and all(owners[c] == owners[line[0]] for c in line):
                won.update(line)
    return sorted(won)


def board_view(game: Game, actions: list[int], state: np.ndarray) -> BoardView:
    """The picture of ``state``, reached from the start by playing ``actions``."""
    geometry = geometry_of(game)
    size = geometry.side * geometry.side
    cells = [""] * size
    owners = [-1] * size
    for ply, action in enumerate(actions):
        cell = int(geometry.action_cells[action])
        player = ply % 2  # all three games strictly alternate
        owners[cell] = player
        if geometry.writes_numbers:
            cells[cell] = str(geometry.number_of(action))
        else:
            cells[cell] = geometry.mark_names[player]
    over = game.is_terminal(state)
    legal = [] if over else [int(a) for a in game.legal_actions(state)]
    playable = [False] * size
    for action in legal:
        playable[int(geometry.action_cells[action])] = True
    boards = small_board_results(owners) if geometry.is_uttt else []
    return BoardView(
        geometry=geometry,
        cells=cells,
        owners=owners,
        last_cell=int(geometry.action_cells[actions[-1]]) if actions else None,
        playable_cells=playable,
        to_move=None if over else game.current_player(state),
        boards=boards,
        active_boards=sorted({a // 9 for a in legal}) if geometry.is_uttt else [],
        numbers_left=(
            sorted({geometry.number_of(a) for a in legal}) if geometry.writes_numbers else []
        ),
        winning_cells=winning_cells(game, cells, owners, boards) if over else [],
    )
