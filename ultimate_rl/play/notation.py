"""Reading a person's move: the game's own forgiving notation, then a reason for any refusal.

Each game parses its notation (``Game.parse_move``, described by ``Game.notation_help``) and says
why a move is illegal (``Game.why_illegal``); this adds what is the same for every game. Case,
extra spaces and separators (``,;:-/``) are ignored.

A move list (the analysis board's) is one text of such moves: separated by commas, semicolons
or new lines, each piece is one move (``"5 3, 3 2"``); without them, each move is the fewest
words (at most three: ``"7 at 5"``) that read as one (``"e5 e4 d2"``, ``"7 at 5 2 at 1"``).
``line_text`` writes a list that reads back so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from ultimate_rl.games.base import Game
from ultimate_rl.games.errors import MoveError
from ultimate_rl.games.notation import normalise

__all__ = ["MoveError", "line_text", "move_word", "parse_move", "play_line", "split_moves"]

_LIST_SEPARATORS = re.compile(r"[,;\n]")
MAX_WORDS_A_MOVE = 3  # the longest move in words: numerical_ttt's "7 at 5"


def parse_move(game: Game, state: np.ndarray, text: str) -> int:
    """The legal action ``text`` names in ``state``; ``MoveError`` says why when there is none."""
    if game.is_terminal(state):
        raise MoveError("the game is over; start a new one")
    cleaned = normalise(text)
    if not cleaned:
        raise MoveError(f"type a move. {game.notation_help}")
    action = game.parse_move(cleaned)
    if not game.legal_mask(state)[action]:
        raise MoveError(game.why_illegal(state, action))
    return action


def move_word(game: Game, action: int) -> str:
    """A move as the review shows it and a move list reads it back: ``e5``, ``7 at 5``, ``d``."""
    return game.move_text(int(action)).split(" (")[0]


def line_text(game: Game, actions: Sequence[int]) -> str:
    """A move list that ``split_moves`` reads back as ``actions``."""
    return " ".join(move_word(game, action) for action in actions)


def split_moves(game: Game, text: str) -> list[str]:
    """The moves of a move list as typed (see the module doc); ``MoveError`` names the first
    piece that reads as no move, counted from 1."""
    return [piece for piece, _ in _read_list(game, text)]


def _read_list(game: Game, text: str) -> list[tuple[str, int]]:
    """Each move of a move list as typed, with the action it names (``split_moves``)."""
    pieces = [p for p in (normalise(p) for p in _LIST_SEPARATORS.split(text)) if p]
    if len(pieces) > 1:
        return [(piece, _read(game, piece, number)) for number, piece in enumerate(pieces, 1)]
    words, moves = normalise(text).split(), []
    while words:
        for count in range(1, min(MAX_WORDS_A_MOVE, len(words)) + 1):
            candidate = " ".join(words[:count])
            try:
                action = game.parse_move(candidate)
            except MoveError:
                continue
            moves.append((candidate, action))
            del words[:count]
            break
        else:
            _read(game, words[0], len(moves) + 1)  # raises, saying why
    return moves


def _read(game: Game, text: str, number: int) -> int:
    try:
        return game.parse_move(text)
    except MoveError as err:
        raise MoveError(f"move {number} {text!r} is not a move: {err}") from None


def play_line(game: Game, moves: Sequence[int] | str) -> tuple[list[int], np.ndarray]:
    """The actions of a move list (action numbers, or one text in the game's notation) and the
    position after them; ``MoveError`` names the first move that cannot be played (counted from
    1) and why: not a move, illegal there, or after the game's end."""
    if isinstance(moves, str):
        typed = [(repr(text), action) for text, action in _read_list(game, moves)]
    else:
        typed = [(f"(action {a})", _action_number(game, a, n)) for n, a in enumerate(moves, 1)]
    state, actions = game.initial_state(), []
    for number, (label, action) in enumerate(typed, 1):
        if game.is_terminal(state):
            outcome = game.outcome_text(state, game.mark_names)
            raise MoveError(
                f"move {number} {label} comes after the end of the game ({outcome} after move "
                f"{number - 1}); drop it and the moves after it"
            )
        if not game.legal_mask(state)[action]:
            raise MoveError(f"move {number} {label} is illegal: {game.why_illegal(state, action)}")
        state = game.apply(state, action)
        actions.append(action)
    return actions, state


def _action_number(game: Game, action: object, number: int) -> int:
    """A move list's action number, checked (``number``: its place in the list, from 1)."""
    if isinstance(action, bool) or not isinstance(action, int | np.integer):
        raise MoveError(
            f"move {number} is {action!r}; send action numbers (integers) or one text in the "
            "game's notation"
        )
    if not 0 <= action < game.num_actions:
        raise MoveError(f"move {number} (action {action}) is outside 0..{game.num_actions - 1}")
    return int(action)
