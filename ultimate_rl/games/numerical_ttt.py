"""Numerical tic-tac-toe: odd numbers against even ones, a line summing to 15 wins (see kernels).

Actions are ``9 * cell + (number - 1)`` with cells row-major 0..8 from the top left. As text an
action is ``"<number>@<cell>"``: ``"7@4"`` writes 7 in the centre (action 9 * 4 + 6 = 42).

Besides the 8 board symmetries the game has a number symmetry: n -> 10 - n keeps odd numbers odd,
even numbers even and turns a + b + c = 15 into 30 - 15 = 15, so it keeps every outcome. Both
together give 16 symmetries, all used for training augmentation.
"""

from __future__ import annotations

import re

import numpy as np

from ultimate_rl.games.base import Game
from ultimate_rl.games.errors import UnknownGameError
from ultimate_rl.games.kernels import numerical_ttt as kn
from ultimate_rl.games.symmetry import board_symmetries, with_relabelling

_ACTION_TEXT = re.compile(r"\s*([1-9])\s*@\s*([0-8])\s*")
_PLAYER_NAMES = ("odd (first player)", "even (second player)")


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


class NumericalTicTacToe(Game):
    """Graham's numerical tic-tac-toe; the odd player (player 0) moves first."""

    name = "numerical_ttt"
    game_id = kn.GAME_ID

    def __init__(self) -> None:
        self.num_actions = kn.NUM_ACTIONS
        self.observation_shape = (kn.NUM_PLANES, 3, 3)
        # an action keeps its number when the board turns: only its cell moves
        board = board_symmetries(3, np.arange(self.num_actions) // 9)
        self.symmetries = with_relabelling(board, "10-n", *_complement_numbers())

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


GAME = NumericalTicTacToe
