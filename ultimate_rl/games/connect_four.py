"""Connect Four: 7 columns x 6 rows, stones drop to the lowest empty cell (rules in ``kernels``).

Action ``col``, 0..6 from the left. As text an action is its column letter, ``"a"`` (leftmost)
to ``"g"``; the digits ``"1"`` to ``"7"`` are accepted too. Gravity breaks every board symmetry
but the left-right mirror, so the game has two: the identity and the mirror (column c -> 6 - c).
"""

from __future__ import annotations

import numpy as np

from ultimate_rl.games import connect_four_solver as solver
from ultimate_rl.games import layout
from ultimate_rl.games.base import Game
from ultimate_rl.games.board import BoardPicture, BoardShape, lines, won_lines
from ultimate_rl.games.errors import MoveError, UnknownGameError
from ultimate_rl.games.kernels import connect_four as kc
from ultimate_rl.games.ownership import CELLS
from ultimate_rl.games.symmetry import MIRROR, board_symmetries

_STONE_CHARS = ("X", "O")
_COLUMN_LETTERS = "abcdefg"
_FOURS = lines(kc.ROWS, kc.COLS, 4)


class ConnectFour(Game):
    """Four in a row on a 7 x 6 upright board; X (player 0) moves first."""

    name = "connect_four"
    game_id = kc.GAME_ID
    ownership = (CELLS,)
    title = "Connect Four"
    notation_help = (
        "Type the column: a letter a-g or a number 1-7 from the left ('d' or '4' is the centre); "
        "the piece drops to the lowest empty cell."
    )
    rules = (
        "Connect Four: drop a piece into one of the seven columns; it falls to the lowest empty "
        "cell. Four in a row across, down or diagonally wins; a full board is a draw."
    )

    def __init__(self) -> None:
        self.num_actions = kc.NUM_ACTIONS
        self.observation_shape = (kc.NUM_PLANES, kc.ROWS, kc.COLS)
        self.board_shape = BoardShape(kc.ROWS, kc.COLS)
        self.action_cells = np.arange(kc.COLS)  # the top row: only for the mirror below
        self.symmetries = board_symmetries(kc.ROWS, self.action_cells, kc.COLS, MIRROR)

    def initial_state(self) -> np.ndarray:
        return kc.initial_state()

    def action_to_string(self, action: int) -> str:
        """The column letter, ``"a"`` (leftmost) to ``"g"``."""
        if not 0 <= action < self.num_actions:
            raise UnknownGameError(f"action {action!r} is outside 0..{self.num_actions - 1}")
        return _COLUMN_LETTERS[int(action)]

    def string_to_action(self, text: str) -> int:
        """Inverse of ``action_to_string``, also taking "1".."7"; a clear error on bad text."""
        key = text.strip().lower()
        if len(key) == 1 and key in _COLUMN_LETTERS:
            return _COLUMN_LETTERS.index(key)
        if key in {str(n) for n in range(1, kc.COLS + 1)}:
            return int(key) - 1
        raise UnknownGameError(
            f"{text!r} is not a column; use a..g (or 1..7), counted from the left"
        )

    def action_cell(self, state: np.ndarray, action: int) -> int:
        """The cell the piece lands on: the lowest empty one of the column (its top if full)."""
        row = max(kc.ROWS - 1 - int(state[kc.HEIGHTS + action]), 0)
        return row * kc.COLS + int(action)

    def picture(self, state: np.ndarray) -> BoardPicture:
        self.check_state(state)
        owners = [kc.cell_owner(state, r, c) for r in range(kc.ROWS) for c in range(kc.COLS)]
        last = int(state[layout.LAST])
        top = kc.ROWS - int(state[kc.HEIGHTS + last]) if last >= 0 else 0  # its highest piece
        return BoardPicture(
            owners=owners,
            labels=["" if o < 0 else _STONE_CHARS[o] for o in owners],
            blocks=[],
            winning_cells=won_lines(owners, _FOURS),
            last_cell=None if last < 0 else top * kc.COLS + last,
        )

    def parse_move(self, text: str) -> int:
        """A column letter a-g or number 1-7."""
        try:
            return self.string_to_action(text)
        except UnknownGameError:
            raise MoveError(f"could not read {text!r} as a move. {self.notation_help}") from None

    def why_illegal(self, state: np.ndarray, action: int) -> str:
        return f"{self.move_text(action)}: that column is full; pick another"

    def exact_action_values(self, state: np.ndarray) -> np.ndarray | None:
        """The solver's values for a position with at most ``MAX_EMPTY_CELLS`` empty cells."""
        if solver.empty_cells(self.check_state(state)) > solver.MAX_EMPTY_CELLS:
            return None
        return solver.action_values(state)

    def exact_positions(self, count: int, seed: int) -> list[np.ndarray]:
        """Random positions with 12-16 empty cells (the solver is exact and quick there) where
        the choice matters: some legal column keeps the value and some loses it. (Random play
        keeps it on 58% of all such positions, 34% of these.)"""
        found: list[np.ndarray] = []
        batch = 0
        while len(found) < count:
            states, values = solver.labelled_positions(2 * count, seed=seed + 7919 * batch)
            for state, row in zip(states, values, strict=True):
                legal = row[row != solver.ILLEGAL]
                if legal.min() < legal.max() and len(found) < count:
                    found.append(state)
            batch += 1
        return found

    def render(self, state: np.ndarray) -> str:
        self.check_state(state)
        lines = [" ".join(_COLUMN_LETTERS)]
        for row in range(kc.ROWS):
            owners = [kc.cell_owner(state, row, col) for col in range(kc.COLS)]
            lines.append(" ".join(_STONE_CHARS[p] if p >= 0 else "." for p in owners))
        lines.append(self.outcome_text(state, _STONE_CHARS))
        return "\n".join(lines)


GAME = ConnectFour
