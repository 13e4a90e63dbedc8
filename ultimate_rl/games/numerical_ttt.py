"""Numerical tic-tac-toe: odd numbers against even ones, a line summing to 15 wins (see kernels).

Actions are ``9 * cell + (number - 1)`` with cells row-major 0..8 from the top left. As text an
action is ``"<number>@<cell>"``: ``"7@4"`` writes 7 in the centre (action 9 * 4 + 6 = 42).
"""

from __future__ import annotations

import re

import numpy as np

from ultimate_rl.games import layout as L
from ultimate_rl.games.base import Game
from ultimate_rl.games.errors import UnknownGameError
from ultimate_rl.games.kernels import numerical_ttt as kn
from ultimate_rl.games.symmetry import board_symmetries

_ACTION_TEXT = re.compile(r"\s*([1-9])\s*@\s*([0-8])\s*")
_PLAYER_NAMES = ("odd (first player)", "even (second player)")


class NumericalTicTacToe(Game):
    """Graham's numerical tic-tac-toe; the odd player (player 0) moves first."""

    name = "numerical_ttt"
    game_id = L.NUMERICAL_TTT_ID

    def __init__(self) -> None:
        self.num_actions = kn.NUM_ACTIONS
        self.observation_shape = (kn.NUM_PLANES, 3, 3)
        # an action keeps its number when the board turns: only its cell moves
        self.symmetries = board_symmetries(3, np.arange(self.num_actions) // 9)

    def initial_state(self) -> np.ndarray:
        return kn.initial_state()

    def action_to_string(self, action: int) -> str:
        """``"<number>@<cell>"``, e.g. ``"7@4"`` for 7 in the centre."""
        if not 0 <= action < self.num_actions:
            raise UnknownGameError(f"action {action!r} is outside 0..{self.num_actions - 1}")
        cell, number_index = divmod(int(action), 9)
        return f"{number_index + 1}@{cell}"

    def string_to_action(self, text: str) -> int:
        """Inverse of ``action_to_string`` (for human input); a clear error on bad text."""
        match = _ACTION_TEXT.fullmatch(text)
        if match is None:
            raise UnknownGameError(
                f"{text!r} is not a move; write <number 1-9>@<cell 0-8>, e.g. '7@4' for 7 in "
                "the centre (cells row-major from the top left)"
            )
        return 9 * int(match.group(2)) + int(match.group(1)) - 1

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
