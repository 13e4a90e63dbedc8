"""One game between a person and an agent, shared by the terminal and the browser front ends.

A ``Match`` keeps the move history (the board view and "reload resumes" need it), whose side the
person plays, and how the game ended, including by resignation, which the engines do not know.
"""

from __future__ import annotations

from typing import Any

from ultimate_rl.agents.base import Agent
from ultimate_rl.games.base import Game
from ultimate_rl.play.view import BoardView, board_view

SIDE_CHOICES = ("x", "o", "first", "second", "odd", "even")
__all__ = ["SIDE_CHOICES", "Agent", "Match", "parse_side"]


def parse_side(side: str) -> int:
    """The player index (0 moves first) of a side name: x/first/odd -> 0, o/second/even -> 1."""
    key = str(side).strip().lower()
    if key not in SIDE_CHOICES:
        raise ValueError(
            f"unknown side {side!r}; choose x (moves first), o (moves second) or alternate "
            "(also first/second, or odd/even for numerical_ttt)"
        )
    return SIDE_CHOICES.index(key) % 2


class Match:
    """A game in progress: the state, the actions so far, the person's player index, the end."""

    def __init__(self, game: Game, human: int) -> None:
        if human not in (0, 1):
            raise ValueError(f"the person plays player 0 (first) or 1 (second), got {human!r}")
        self.game = game
        self.human = human
        self.state = game.initial_state()
        self.actions: list[int] = []
        self.resigned: int | None = None  # the player who resigned

    @property
    def over(self) -> bool:
        return self.resigned is not None or self.game.is_terminal(self.state)

    @property
    def to_move(self) -> int | None:
        return None if self.over else self.game.current_player(self.state)

    @property
    def human_to_move(self) -> bool:
        return self.to_move == self.human

    def play(self, action: int) -> None:
        """Plays ``action`` for whoever is to move; the game's own errors say why it is illegal."""
        if self.resigned is not None:
            raise ValueError("the game is over (resigned); start a new one")
        self.state = self.game.apply(self.state, int(action))
        self.actions.append(int(action))

    def resign(self) -> None:
        """The person gives up the game."""
        if self.over:
            raise ValueError("the game is already over")
        self.resigned = self.human

    def winner(self) -> int | None:
        """0 or 1, or None for a draw or a game still going."""
        if self.resigned is not None:
            return 1 - self.resigned
        return self.game.winner(self.state)

    def human_result(self) -> str | None:
        """``"win"``, ``"loss"`` or ``"draw"`` from the person's side, None while playing."""
        if not self.over:
            return None
        winner = self.winner()
        if winner is None:
            return "draw"
        return "win" if winner == self.human else "loss"

    def result_text(self) -> str:
        """One sentence on the end of the game, for people."""
        result = self.human_result()
        if result is None:
            return "game in progress"
        if self.resigned is not None:
            return "You resigned: the agent wins."
        return {"win": "You win!", "loss": "The agent wins.", "draw": "Draw."}[result]

    def view(self) -> BoardView:
        return board_view(self.game, self.actions, self.state)

    def to_json(self) -> dict[str, Any]:
        """Everything a front end needs to draw the game and its status."""
        return {
            "human": self.human,
            "to_move": self.to_move,
            "human_to_move": self.human_to_move,
            "over": self.over,
            "result": self.human_result(),
            "result_text": self.result_text() if self.over else "",
            "resigned": self.resigned,
            "actions": list(self.actions),
            "board": self.view().to_json(),
        }
