"""Tic-tac-toe on a 3x3, 4x4 or 5x5 board with ``k`` in a row to win (rules in ``kernels``).

Actions are ``row * size + col``. As text an action is a column letter and a row number counted
from 1 at the top, chess style: on 3x3 ``"a1"`` is the top-left cell (action 0), ``"b2"`` the
centre (action 4) and ``"c3"`` the bottom-right one (action 8).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ultimate_rl.games import layout
from ultimate_rl.games.base import Game
from ultimate_rl.games.board import BoardPicture, BoardShape, lines, won_lines
from ultimate_rl.games.errors import InvalidStateError, MoveError, UnknownGameError
from ultimate_rl.games.kernels import tictactoe as kt
from ultimate_rl.games.notation import cell_name, grid_cell, in_range
from ultimate_rl.games.ownership import CELLS
from ultimate_rl.games.solver import SolvedByTables
from ultimate_rl.games.symmetry import board_symmetries

_MARK_CHARS = ("X", "O")


class TicTacToe(SolvedByTables, Game):
    """k-in-a-row on a square board; X (player 0) moves first."""

    name = "tictactoe"
    game_id = kt.GAME_ID
    ownership = (CELLS,)
    title = "Tic-Tac-Toe"
    notation_help = (
        "Type the column letter and row number ('b2' or '2b'), or row then column ('2 2' or "
        "'22'); on 3x3 a single cell number 1-9 from the top left also works ('5' is the centre)."
    )
    size: int
    """The board's side, 3 to 5."""
    k: int
    """Marks in a row that win, from 3 to ``size``."""

    def __init__(self, size: int = 3, k: int = 3) -> None:
        sizes = list(range(kt.MIN_SIZE, kt.MAX_SIZE + 1))
        if isinstance(size, bool) or not isinstance(size, int | np.integer) or size not in sizes:
            raise UnknownGameError(f"tictactoe size must be one of {sizes}, got {size!r}")
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or not kt.MIN_K <= k <= size:
            raise UnknownGameError(
                f"tictactoe k (marks in a row to win) must be an int from {kt.MIN_K} to the "
                f"board size {size}, got {k!r}"
            )
        self.size = int(size)
        self.k = int(k)
        self.num_actions = self.size * self.size
        self.observation_shape = (kt.NUM_PLANES, self.size, self.size)
        self.title = f"Tic-Tac-Toe {self.size}x{self.size}, {self.k} in a row"
        self.board_shape = BoardShape(self.size, self.size)
        self.action_cells = np.arange(self.num_actions)
        self.symmetries = board_symmetries(self.size, self.action_cells)
        self._lines = lines(self.size, self.size, self.k)

    @property
    def rules(self) -> str:
        return (
            f"Tic-tac-toe on {self.size}x{self.size}: {self.k} in a row (across, down or "
            "diagonally) wins."
        )

    @property
    def options(self) -> dict[str, Any]:
        return {"size": self.size, "k": self.k}

    @property
    def rating_key(self) -> str:
        return f"tictactoe-{self.size}x{self.size}-k{self.k}"

    def initial_state(self) -> np.ndarray:
        return kt.initial_state(self.size, self.k)

    def check_state(self, state: np.ndarray) -> np.ndarray:
        """Also rejects a state of another board size or k, which the kernels would misread."""
        super().check_state(state)
        if state[kt.SIZE] != self.size or state[kt.K_IN_ROW] != self.k:
            raise InvalidStateError(
                f"this state is tictactoe size={int(state[kt.SIZE])} k={int(state[kt.K_IN_ROW])}, "
                f"but the game is size={self.size} k={self.k}; use the game that made the state"
            )
        return state

    def action_to_string(self, action: int) -> str:
        """``"b2"``-style name: column letter a.., row number 1.. from the top."""
        if not 0 <= action < self.num_actions:
            raise UnknownGameError(f"action {action!r} is outside 0..{self.num_actions - 1}")
        return cell_name(int(action), self.size)

    def picture(self, state: np.ndarray) -> BoardPicture:
        self.check_state(state)
        owners = [
            next((p for p in (0, 1) if state[kt.MARKS + p] >> cell & 1), -1)
            for cell in range(self.num_actions)
        ]
        last = int(state[layout.LAST])
        return BoardPicture(
            owners=owners,
            labels=["" if o < 0 else _MARK_CHARS[o] for o in owners],
            blocks=[],
            winning_cells=won_lines(owners, self._lines),
            last_cell=None if last < 0 else last,
        )

    def parse_move(self, text: str) -> int:
        """A cell name (``"b2"``), row and column numbers (``"2 2"``), or on 3x3 a cell 1-9."""
        grid = grid_cell(text, self.size, self.size)
        if grid is not None:
            return grid
        pair = re.fullmatch(r"(\d) ?(\d)", text)
        if pair:
            row = in_range(int(pair.group(1)), self.size, "row")
            return row * self.size + in_range(int(pair.group(2)), self.size, "column")
        if self.size == 3 and re.fullmatch(r"\d", text):
            return in_range(int(text), 9, "cell number")
        raise MoveError(f"could not read {text!r} as a move. {self.notation_help}")

    def string_to_action(self, text: str) -> int:
        """Inverse of ``action_to_string`` (for human input); a clear error on bad text."""
        names = {self.action_to_string(a): a for a in range(self.num_actions)}
        key = text.strip().lower()
        if key not in names:
            last = self.action_to_string(self.num_actions - 1)
            raise UnknownGameError(f"{text!r} is not a cell name; use a1..{last} (column, row)")
        return names[key]

    def render(self, state: np.ndarray) -> str:
        self.check_state(state)
        header = "  " + " ".join(chr(ord("a") + c) for c in range(self.size))
        lines = [header]
        for row in range(self.size):
            cells = []
            for col in range(self.size):
                bit = 1 << (row * self.size + col)
                owner = [p for p in (0, 1) if state[kt.MARKS + p] & bit]
                cells.append(_MARK_CHARS[owner[0]] if owner else ".")
            lines.append(f"{row + 1} " + " ".join(cells))
        lines.append(self.outcome_text(state, _MARK_CHARS))
        return "\n".join(lines)


GAME = TicTacToe
