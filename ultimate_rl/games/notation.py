"""Pieces of forgiving move notation for people, shared by the games' own ``parse_move``.

Text is lower-cased and separators (``,;:-/``...) become spaces before a game reads it, so each
game parses one clean form. Every refusal is a ``MoveError`` that says what to type instead.
"""

from __future__ import annotations

import re

from ultimate_rl.games.errors import MoveError

_SEPARATORS = re.compile(r"[,;:/\\_\-.()\[\]]+")


def normalise(text: str) -> str:
    """Lower case, separators as single spaces, no spaces at the ends."""
    return " ".join(_SEPARATORS.sub(" ", text.lower()).split())


def column_letter(col: int) -> str:
    return chr(ord("a") + col)


def column(letter: str, cols: int) -> int:
    """The 0-based column of ``letter`` on a board ``cols`` wide."""
    col = ord(letter) - ord("a")
    if not 0 <= col < cols:
        raise MoveError(
            f"column {letter!r} is off the board; columns go from a to {column_letter(cols - 1)}"
        )
    return col


def in_range(value: int, high: int, what: str) -> int:
    """``value`` (counted from 1) as a 0-based index, refused unless it is 1..``high``."""
    if not 1 <= value <= high:
        raise MoveError(f"{what} {value} is out of range; {what}s go from 1 to {high}")
    return value - 1


def grid_cell(text: str, rows: int, cols: int) -> int | None:
    """Grid index of a letter+number or number+letter cell name, None if ``text`` is neither."""
    match = re.fullmatch(r"([a-z]) ?(\d+)|(\d+) ?([a-z])", text)
    if match is None:
        return None
    letter = match.group(1) or match.group(4)
    number = int(match.group(2) or match.group(3))
    return in_range(number, rows, "row") * cols + column(letter, cols)


def cell_name(cell: int, cols: int) -> str:
    """``"b2"``-style name of grid cell ``cell``: column letter, row number from the top."""
    row, col = divmod(cell, cols)
    return f"{column_letter(col)}{row + 1}"
