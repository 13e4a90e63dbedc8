"""Reading a person's move: the game's own forgiving notation, then a reason for any refusal.

Each game parses its notation (``Game.parse_move``, described by ``Game.notation_help``) and says
why a move is illegal (``Game.why_illegal``); this adds what is the same for every game. Case,
extra spaces and separators (``,;:-/``) are ignored.
"""

from __future__ import annotations

import numpy as np

from ultimate_rl.games.base import Game
from ultimate_rl.games.errors import MoveError
from ultimate_rl.games.notation import normalise

__all__ = ["MoveError", "parse_move"]


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
