"""Numerical tic-tac-toe: odd numbers against even ones, a line summing to 15 wins (see kernels).

Actions are ``9 * cell + (number - 1)`` with cells row-major 0..8 from the top left. As text an
action is ``"<number>@<cell>"`` with cells 1..9, as people type them (``parse_move``): ``"7@5"``
writes 7 in the centre (action 9 * 4 + 6 = 42).

Besides the 8 board symmetries the game has a number symmetry: n -> 10 - n keeps odd numbers odd,
even numbers even and turns a + b + c = 15 into 30 - 15 = 15, so it keeps every outcome. Both
together give 16 symmetries, all used for training augmentation.
"""

from __future__ import annotations

import re

import numpy as np

from ultimate_rl.games import layout
from ultimate_rl.games.base import Game
from ultimate_rl.games.board import BoardPicture, BoardShape, lines
from ultimate_rl.games.errors import MoveError, UnknownGameError
from ultimate_rl.games.kernels import numerical_ttt as kn
from ultimate_rl.games.notation import grid_cell, in_range
from ultimate_rl.games.ownership import CELLS
from ultimate_rl.games.solver import SolvedByTables
from ultimate_rl.games.symmetry import board_symmetries, with_relabelling

_ACTION_TEXT = re.compile(r"\s*([1-9])\s*@\s*([1-9])\s*")
_PLAYER_NAMES = ("odd (first player)", "even (second player)")
_MOVE_TEXT = re.compile(r"(\d+) ?(?:at|@|on|in|to)? ?([a-z]?\d+[a-z]?)")
_LINES = lines(3, 3, 3)


def _complement_numbers() -> tuple[np.ndarray, np.ndarray]:
    """Where n -> 10 - n sends each action and each plane (see ``kernels.numerical_ttt.encode``).

    Action ``9 * cell + (n - 1)`` becomes ``9 * cell + (9 - n)``; in the two blocks of 9 planes
    (where number n stands, whether n is unused) plane k of a block swaps with plane 8 - k; the
    mover plane stays.
    """
    cell, number_index = np.divmod(np.arange(kn.NUM_ACTIONS), 9)
    actions = 9 * cell + (8 - number_index)
    channels = np.concatenate([8 - np.arange(9), 17 - np.arange(9), [18]])
    return actions, channels


class NumericalTicTacToe(SolvedByTables, Game):
    """Graham's numerical tic-tac-toe; the odd player (player 0) moves first."""

    name = "numerical_ttt"
    game_id = kn.GAME_ID
    ownership = (CELLS,)
    title = "Numerical Tic-Tac-Toe"
    mark_names = ("odd", "even")
    notation_help = (
        "Type the number, then the cell 1-9 from the top left or its name a1..c3: '7 at 5', "
        "'7@5', '7 5' or '7 at b2' writes 7 in the centre. The first player writes the odd "
        "numbers, the second the even ones, each number once; a line summing to 15 wins."
    )
    rules = (
        "Numerical tic-tac-toe: the first player writes odd numbers 1-9, the second even ones, "
        "each once. Complete a line of three cells summing to 15 to win."
    )
    side_notes = ("     cells: 1 2 3", "     cells: 4 5 6", "     cells: 7 8 9")

    def __init__(self) -> None:
        self.num_actions = kn.NUM_ACTIONS
        self.observation_shape = (kn.NUM_PLANES, 3, 3)
        self.board_shape = BoardShape(3, 3)
        self.action_cells = np.arange(self.num_actions) // 9
        # an action keeps its number when the board turns: only its cell moves
        board = board_symmetries(3, self.action_cells)
        self.symmetries = with_relabelling(board, "10-n", *_complement_numbers())

    def initial_state(self) -> np.ndarray:
        return kn.initial_state()

    def action_to_string(self, action: int) -> str:
        """``"<number>@<cell 1-9>"``, e.g. ``"7@5"`` for 7 in the centre: what ``parse_move``
        reads too."""
        if not 0 <= action < self.num_actions:
            raise UnknownGameError(f"action {action!r} is outside 0..{self.num_actions - 1}")
        cell, number_index = divmod(int(action), 9)
        return f"{number_index + 1}@{cell + 1}"

    def string_to_action(self, text: str) -> int:
        """Inverse of ``action_to_string`` (for human input); a clear error on bad text."""
        match = _ACTION_TEXT.fullmatch(text)
        if match is None:
            raise UnknownGameError(
                f"{text!r} is not a move; write <number 1-9>@<cell 1-9>, e.g. '7@5' for 7 in "
                "the centre (cells row by row from the top left)"
            )
        return 9 * (int(match.group(2)) - 1) + int(match.group(1)) - 1

    def picture(self, state: np.ndarray) -> BoardPicture:
        self.check_state(state)
        numbers = [int(state[kn.CELLS + cell]) for cell in range(9)]
        owners = [-1 if n == 0 else (n + 1) % 2 for n in numbers]  # odd numbers: player 0
        winning = {
            c
            for line in _LINES
            if all(numbers[c] for c in line) and sum(numbers[c] for c in line) == kn.TARGET
            for c in line
        }
        last = int(state[layout.LAST])
        return BoardPicture(
            owners=owners,
            labels=[str(n) if n else "" for n in numbers],
            blocks=[],
            winning_cells=sorted(winning),
            last_cell=None if last < 0 else last // 9,
        )

    def piece_of(self, action: int) -> str:
        return str(int(action) % 9 + 1)

    def parse_move(self, text: str) -> int:
        """The number, then the cell 1-9 or its name: ``"7 at 5"``, ``"7@5"``, ``"7 b2"``."""
        match = _MOVE_TEXT.fullmatch(text)
        if match is None:
            raise MoveError(f"could not read {text!r} as a move. {self.notation_help}")
        number = in_range(int(match.group(1)), 9, "number")
        where = match.group(2)
        cell = grid_cell(where, 3, 3)
        if cell is None:
            cell = in_range(int(where), 9, "cell number")
        return 9 * cell + number

    def move_text(self, action: int) -> str:
        cell, number = divmod(int(action), 9)
        return f"{number + 1} at {cell + 1}"

    def refusal(self, state: np.ndarray, action: int) -> str:
        number, mover = action % 9 + 1, self.current_player(state)
        if number % 2 != (1 if mover == 0 else 0):
            return f": {number} is not yours; you write the {self.mark_names[mover]} numbers"
        return f": {number} has already been used"

    def where_to_play(self, state: np.ndarray) -> str:
        left = self.numbers_left(state, self.current_player(state))
        return "Your numbers: " + ", ".join(map(str, left)) + "."

    def numbers_left(self, state: np.ndarray, player: int) -> list[int]:
        """The numbers ``player`` (0 odd, 1 even) has not written yet."""
        used = int(self.check_state(state)[kn.USED])
        return [n for n in range(1 + player, 10, 2) if not used >> n & 1]

    def render(self, state: np.ndarray) -> str:
        self.check_state(state)
        lines = []
        for row in range(3):
            numbers = [int(state[kn.CELLS + 3 * row + col]) for col in range(3)]
            lines.append(" ".join(str(n) if n else "." for n in numbers))
        lines.append(self.outcome_text(state, _PLAYER_NAMES))
        lines.append(
            f"odd left: {self.numbers_left(state, 0)}  even left: {self.numbers_left(state, 1)}"
        )
        return "\n".join(lines)


GAME = NumericalTicTacToe
