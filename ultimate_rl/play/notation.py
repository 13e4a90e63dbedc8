"""Forgiving move notation for people, per game, with a reason for every move that is refused.

- ``uttt``: big-board then cell number, both 1-9 row-major from the top left (``"5 3"``, ``"53"``),
  or a column letter a-i and a row number 1-9 (from the top) on the 9x9 grid (``"e5"``, ``"5e"``).
- ``tictactoe``: column letter and row number (``"b2"``, ``"2b"``), row then column numbers
  (``"2 2"``, ``"22"``), or on 3x3 a single cell number 1-9 row-major (``"5"`` is the centre).
- ``numerical_ttt``: the number, then the cell 1-9 row-major or by name (``"7 at 5"``, ``"7@5"``,
  ``"7 5"``, ``"7 at b2"``).

Case, extra spaces and separators (``,;:-/``) are ignored.
"""

from __future__ import annotations

import re

import numpy as np

from ultimate_rl.games.base import Game
from ultimate_rl.play.view import BoardView, geometry_of, uttt_action_cell

NOTATION_HELP = {
    "uttt": (
        "Type the big board and the cell, both numbered 1-9 from the top left like a phone "
        "keypad read row by row ('5 3' or '53': centre board, top-right cell), or the column "
        "a-i and row 1-9 on the 9x9 grid ('e5' or '5e')."
    ),
    "tictactoe": (
        "Type the column letter and row number ('b2' or '2b'), or row then column ('2 2' or "
        "'22'); on 3x3 a single cell number 1-9 from the top left also works ('5' is the centre)."
    ),
    "numerical_ttt": (
        "Type the number, then the cell 1-9 from the top left or its name a1..c3: '7 at 5', "
        "'7@5', '7 5' or '7 at b2' writes 7 in the centre. The first player writes the odd "
        "numbers, the second the even ones, each number once; a line summing to 15 wins."
    ),
}

_SEPARATORS = re.compile(r"[,;:/\\_\-.()\[\]]+")


class MoveError(ValueError):
    """Typed text that is not a move here; the message says what was wrong and what to type."""


def _normalise(text: str) -> str:
    return " ".join(_SEPARATORS.sub(" ", text.lower()).split())


def _column(letter: str, side: int) -> int:
    col = ord(letter) - ord("a")
    if not 0 <= col < side:
        raise MoveError(
            f"column {letter!r} is off the board; columns go from a to {chr(96 + side)}"
        )
    return col


def _in_range(value: int, side: int, what: str) -> int:
    if not 1 <= value <= side:
        raise MoveError(f"{what} {value} is out of range; {what}s go from 1 to {side}")
    return value - 1


def _grid_cell(text: str, side: int) -> int | None:
    """Grid index of a letter+number or number+letter cell name, None if ``text`` is neither."""
    match = re.fullmatch(r"([a-z]) ?(\d+)|(\d+) ?([a-z])", text)
    if match is None:
        return None
    letter = match.group(1) or match.group(4)
    number = int(match.group(2) or match.group(3))
    return _in_range(number, side, "row") * side + _column(letter, side)


def _parse_uttt(text: str) -> int:
    pair = re.fullmatch(r"(\d) ?(\d)", text)
    if pair:
        board = _in_range(int(pair.group(1)), 9, "board number")
        cell = _in_range(int(pair.group(2)), 9, "cell number")
        return 9 * board + cell
    grid = _grid_cell(text, 9)
    if grid is None:
        raise MoveError(f"could not read {text!r} as a move. {NOTATION_HELP['uttt']}")
    return next(a for a in range(81) if uttt_action_cell(a) == grid)


def _parse_tictactoe(text: str, side: int) -> int:
    grid = _grid_cell(text, side)
    if grid is not None:
        return grid
    pair = re.fullmatch(r"(\d) ?(\d)", text)
    if pair:
        row = _in_range(int(pair.group(1)), side, "row")
        return row * side + _in_range(int(pair.group(2)), side, "column")
    if side == 3 and re.fullmatch(r"\d", text):
        return _in_range(int(text), 9, "cell number")
    raise MoveError(f"could not read {text!r} as a move. {NOTATION_HELP['tictactoe']}")


def _parse_numerical(text: str) -> int:
    match = re.fullmatch(r"(\d+) ?(?:at|@|on|in|to)? ?([a-z]?\d+[a-z]?)", text)
    if match is None:
        raise MoveError(f"could not read {text!r} as a move. {NOTATION_HELP['numerical_ttt']}")
    number = _in_range(int(match.group(1)), 9, "number")
    where = match.group(2)
    cell = _grid_cell(where, 3)
    if cell is None:
        cell = _in_range(int(where), 9, "cell number")
    return 9 * cell + number


def parse_move(game: Game, state: np.ndarray, text: str, view: BoardView) -> int:
    """The legal action ``text`` names in ``state``; ``MoveError`` says why when there is none.

    ``view`` is the position's ``board_view`` (it knows which cells are taken, for the reasons).
    """
    if game.is_terminal(state):
        raise MoveError("the game is over; start a new one")
    cleaned = _normalise(text)
    if not cleaned:
        raise MoveError(f"type a move. {NOTATION_HELP[game.name]}")
    if game.name == "uttt":
        action = _parse_uttt(cleaned)
    elif game.name == "numerical_ttt":
        action = _parse_numerical(cleaned)
    elif game.name == "tictactoe":
        action = _parse_tictactoe(cleaned, view.geometry.side)
    else:
        raise MoveError(f"no move notation for game {game.name!r}")
    if not game.legal_mask(state)[action]:
        raise MoveError(why_illegal(game, state, action, view))
    return action


def why_illegal(game: Game, state: np.ndarray, action: int, view: BoardView) -> str:
    """A sentence saying why a well-formed ``action`` cannot be played in ``state``."""
    name = move_to_text(game, action)
    cell = int(view.geometry.action_cells[action])
    if view.owners[cell] >= 0:
        return f"{name}: that cell is already taken"
    if game.name == "uttt":
        board = action // 9
        if len(view.active_boards) == 1:
            return (
                f"{name}: you must play in board {view.active_boards[0] + 1} (highlighted), "
                "where the last move sent you"
            )
        return f"{name}: board {board + 1} is closed (won or full); play in any open board"
    if game.name == "numerical_ttt":
        number = action % 9 + 1
        mover = game.current_player(state)
        if number % 2 != (1 if mover == 0 else 0):
            own = "odd" if mover == 0 else "even"
            return f"{name}: {number} is not yours; you write the {own} numbers"
        return f"{name}: {number} has already been used"
    return f"{name} is not legal here"


def move_to_text(game: Game, action: int) -> str:
    """How a move is shown to people, in the same notation ``parse_move`` reads."""
    action = int(action)
    if game.name == "uttt":
        grid = uttt_action_cell(action)
        board, cell = divmod(action, 9)
        return f"{chr(97 + grid % 9)}{grid // 9 + 1} (board {board + 1}, cell {cell + 1})"
    if game.name == "numerical_ttt":
        cell, number = divmod(action, 9)
        return f"{number + 1} at {cell + 1}"
    side = geometry_of(game).side
    row, col = divmod(action, side)
    return f"{chr(97 + col)}{row + 1}"
