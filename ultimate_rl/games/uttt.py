"""Ultimate Tic-Tac-Toe: nine small boards in a 3x3 big board (rules in ``kernels/uttt.py``).

Actions are ``9 * board + cell`` (both row-major from the top left). As text an action is the
cell's square on the 9x9 grid, chess style: a column letter ``a``..``i`` and a row number
``1``..``9`` counted from the top, the same convention as ``tictactoe``. So ``"a1"`` is action 0
(top-left cell of the top-left board), ``"e5"`` is action 40 (centre of the centre board) and
``"i9"`` is action 80.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ultimate_rl.games import layout
from ultimate_rl.games.base import Game
from ultimate_rl.games.board import BoardPicture, BoardShape, lines
from ultimate_rl.games.errors import GameError, MoveError, UnknownGameError
from ultimate_rl.games.kernels import uttt as ku
from ultimate_rl.games.notation import cell_name, grid_cell, in_range
from ultimate_rl.games.ownership import BLOCKS, CELLS
from ultimate_rl.games.symmetry import board_symmetries

_MARKS = ("X", "O")
_COLUMNS = "abcdefghi"
BOARD_NAMES = (
    "top left",
    "top",
    "top right",
    "left",
    "centre",
    "right",
    "bottom left",
    "bottom",
    "bottom right",
)
_BIG_LINES = lines(3, 3, 3)  # the lines of small boards that win the game


def action_rows_cols() -> tuple[np.ndarray, np.ndarray]:
    """Row and column on the 9x9 grid of every action (the action encoding of DESIGN.md)."""
    board, cell = np.divmod(np.arange(ku.NUM_ACTIONS), 9)
    return 3 * (board // 3) + cell // 3, 3 * (board % 3) + cell % 3


class UltimateTicTacToe(Game):
    """Ultimate Tic-Tac-Toe; X (player 0) moves first. Its one option changes what a network
    sees, not the rules."""

    name = "uttt"
    game_id = ku.GAME_ID
    ownership = (CELLS, BLOCKS)
    title = "Ultimate Tic-Tac-Toe"
    notation_help = (
        "Type the big board and the cell, both numbered 1-9 from the top left like a phone "
        "keypad read row by row ('5 3' or '53': centre board, top-right cell), or the column "
        "a-i and row 1-9 on the 9x9 grid ('e5' or '5e')."
    )
    rules = (
        "Ultimate tic-tac-toe: nine small boards in a 3x3 grid. Your move's cell picks the "
        "small board your opponent must play in next (any open board if that one is closed); "
        "win three small boards in a line."
    )
    side_notes = ("    boards and cells:", "      1 2 3", "      4 5 6", "      7 8 9")

    threat_planes: bool
    """``encode`` adds seven planes of threats (``kernels/uttt.py``: the cells that win a small
    board for either side, where each move sends the opponent, the boards that win the game)."""

    strategy_planes: bool
    """With ``threat_planes``: five planes more (``kernels/uttt.py``: the boards each side can
    no longer win, how many big-board lines each side can still complete through each board,
    the moves that let the opponent win the game at once)."""

    def __init__(self, threat_planes: bool = False, strategy_planes: bool = False) -> None:
        for name, value in (("threat_planes", threat_planes), ("strategy_planes", strategy_planes)):
            if not isinstance(value, bool | np.bool_):
                raise UnknownGameError(f"uttt {name} must be true or false, got {value!r}")
        if strategy_planes and not threat_planes:
            raise UnknownGameError(
                "uttt strategy_planes come after the threat planes: set threat_planes=true too "
                "(game.threat_planes=true game.strategy_planes=true)"
            )
        self.threat_planes = bool(threat_planes)
        self.strategy_planes = bool(strategy_planes)
        self.num_actions = ku.NUM_ACTIONS
        planes = ku.NUM_PLANES + (ku.THREAT_PLANES if self.threat_planes else 0)
        planes += ku.STRATEGY_PLANES if self.strategy_planes else 0
        self.observation_shape = (planes, 9, 9)
        self.board_shape = BoardShape(9, 9, block=3)
        rows, cols = action_rows_cols()
        self.action_cells = rows * 9 + cols
        self.symmetries = board_symmetries(9, self.action_cells)
        self._action_at = np.empty((9, 9), dtype=np.int64)  # grid square -> action
        self._action_at[rows, cols] = np.arange(self.num_actions)

    @property
    def options(self) -> dict[str, Any]:
        chosen = {"threat_planes": self.threat_planes, "strategy_planes": self.strategy_planes}
        return {name: True for name, on in chosen.items() if on}

    @property
    def rules_options(self) -> dict[str, Any]:
        return {}

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

    def picture(self, state: np.ndarray) -> BoardPicture:
        self.check_state(state)
        owners = [-1] * 81
        for action, cell in enumerate(self.action_cells):
            board, bit = divmod(action, 9)
            for player, plane in enumerate((ku.X_CELLS, ku.O_CELLS)):
                if state[plane + board] >> bit & 1:
                    owners[cell] = player
        blocks = []
        for board in range(9):
            won = [p for p, field in enumerate((ku.WON_X, ku.WON_O)) if state[field] >> board & 1]
            closed = state[ku.CLOSED] >> board & 1
            blocks.append(_MARKS[won[0]] if won else "draw" if closed else "")
        winning = {
            int(self.action_cells[9 * board + c])
            for line in _BIG_LINES
            if blocks[line[0]] in _MARKS and blocks[line[0]] == blocks[line[1]] == blocks[line[2]]
            for board in line
            for c in range(9)
        }
        last = int(state[layout.LAST])
        return BoardPicture(
            owners=owners,
            labels=["" if o < 0 else _MARKS[o] for o in owners],
            blocks=blocks,
            winning_cells=sorted(winning),
            last_cell=None if last < 0 else int(self.action_cells[last]),
        )

    def parse_move(self, text: str) -> int:
        """``"5 3"`` (board, cell, both 1-9) or a square name on the 9x9 grid (``"e5"``)."""
        pair = re.fullmatch(r"(\d) ?(\d)", text)
        if pair:
            board = in_range(int(pair.group(1)), 9, "board number")
            return 9 * board + in_range(int(pair.group(2)), 9, "cell number")
        grid = grid_cell(text, 9, 9)
        if grid is None:
            raise MoveError(f"could not read {text!r} as a move. {self.notation_help}")
        return int(self._action_at.flat[grid])

    def move_text(self, action: int) -> str:
        board, cell = divmod(int(action), 9)
        grid = cell_name(int(self.action_cells[action]), 9)
        return f"{grid} (board {board + 1}, cell {cell + 1})"

    def refusal(self, state: np.ndarray, action: int) -> str:
        playable = self.playable_boards(state)
        if len(playable) == 1:
            return (
                f": you must play in board {playable[0] + 1} (highlighted), "
                "where the last move sent you"
            )
        return f": board {action // 9 + 1} is closed (won or full); play in any open board"

    def where_to_play(self, state: np.ndarray) -> str:
        playable = self.playable_boards(state)
        if len(playable) == 1:
            return f"Play in board {playable[0] + 1} ({BOARD_NAMES[playable[0]]})."
        return "Play in any open board."

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
