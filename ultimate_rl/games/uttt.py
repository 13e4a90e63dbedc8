"""Ultimate Tic-Tac-Toe: nine small boards in a 3x3 big board (rules in ``kernels/uttt.py``).

Actions are ``9 * board + cell`` (both row-major from the top left). As text an action is the
cell's square on the 9x9 grid, chess style: a column letter ``a``..``i`` and a row number
``1``..``9`` counted from the top, the same convention as ``tictactoe``. So ``"a1"`` is action 0
(top-left cell of the top-left board), ``"e5"`` is action 40 (centre of the centre board) and
``"i9"`` is action 80.
"""

from __future__ import annotations

import numpy as np

from ultimate_rl.games import layout
from ultimate_rl.games.base import Game
from ultimate_rl.games.errors import GameError
from ultimate_rl.games.kernels import uttt as ku
from ultimate_rl.games.symmetry import board_symmetries

_MARKS = ("X", "O")
_COLUMNS = "abcdefghi"


def action_rows_cols() -> tuple[np.ndarray, np.ndarray]:
    """Row and column on the 9x9 grid of every action (the action encoding of DESIGN.md)."""
    board, cell = np.divmod(np.arange(ku.NUM_ACTIONS), 9)
    return 3 * (board // 3) + cell // 3, 3 * (board % 3) + cell % 3


class UltimateTicTacToe(Game):
    """Ultimate Tic-Tac-Toe; X (player 0) moves first. Takes no options."""

    name = "uttt"
    game_id = ku.GAME_ID

    def __init__(self) -> None:
        self.num_actions = ku.NUM_ACTIONS
        self.observation_shape = (ku.NUM_PLANES, 9, 9)
        rows, cols = action_rows_cols()
        self.symmetries = board_symmetries(9, rows * 9 + cols)
        self._action_at = np.empty((9, 9), dtype=np.int64)  # grid square -> action
        self._action_at[rows, cols] = np.arange(self.num_actions)

    def initial_state(self) -> np.ndarray:
        return ku.initial_state()

    def action_to_string(self, action: int) -> str:
        """``"e5"``-style square name of the cell played (see the module docstring)."""
        if not 0 <= action < self.num_actions:
            raise GameError(f"action {action!r} is outside 0..{self.num_actions - 1}")
        row, col = np.argwhere(self._action_at == action)[0]
        return f"{_COLUMNS[col]}{row + 1}"

    def string_to_action(self, text: str) -> int:
        """Inverse of ``action_to_string`` (for human input); a clear error on bad text."""
        key = text.strip().lower()
        if len(key) != 2 or key[0] not in _COLUMNS or key[1] not in "123456789":
            raise GameError(f"{text!r} is not a square name; use a1..i9 (column, row from top)")
        return int(self._action_at[int(key[1]) - 1, _COLUMNS.index(key[0])])

    def playable_boards(self, state: np.ndarray) -> list[int]:
        """The small boards (0..8) the player to move may play in; empty once the game is over."""
        return sorted({int(a) // 9 for a in self.legal_actions(state)})

    def render(self, state: np.ndarray) -> str:
        """The 9x9 grid next to a map of the big board, then whose turn it is or the result.

        Map: X / O a won small board, ``#`` a drawn (full) one, ``*`` a board the mover may play
        in, ``.`` another open board.
        """
        self.check_state(state)
        playable = self.playable_boards(state)
        big = []
        for board in range(9):
            if state[ku.WON_X] >> board & 1:
                big.append("X")
            elif state[ku.WON_O] >> board & 1:
                big.append("O")
            elif state[ku.CLOSED] >> board & 1:
                big.append("#")
            else:
                big.append("*" if board in playable else ".")
        side = ["big board"] + ["  " + " ".join(big[3 * r : 3 * r + 3]) for r in range(3)]
        side += ["", "X/O won", "#   drawn", "*   playable"]
        lines = ["    a b c   d e f   g h i"]
        for row in range(9):
            if row in (3, 6):
                lines.append("   -------+-------+-------")
            cells = []
            for col in range(9):
                action = self._action_at[row, col]
                board, cell = divmod(int(action), 9)
                bit = 1 << cell
                x = state[ku.X_CELLS + board] & bit
                o = state[ku.O_CELLS + board] & bit
                cells.append("X" if x else "O" if o else ".")
                if col in (2, 5):
                    cells.append("|")
            lines.append(f" {row + 1}  " + " ".join(cells))
        lines = [
            f"{line:<30}{side[i]}".rstrip() if i < len(side) else line
            for i, line in enumerate(lines)
        ]
        if state[layout.LAST] >= 0:
            lines.append(f"last move: {self.action_to_string(int(state[layout.LAST]))}")
        outcome = self.outcome_text(state, _MARKS)
        if state[layout.STATUS] == layout.ONGOING:
            if state[ku.FORCED] >= 0:
                outcome += f", in board {playable[0]} only"
            elif state[layout.MOVES] > 0:
                outcome += ", in any open board (sent to a closed one)"
            else:
                outcome += ", in any board"
        lines.append(outcome)
        return "\n".join(lines)


GAME = UltimateTicTacToe
