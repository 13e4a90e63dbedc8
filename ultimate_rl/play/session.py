"""One game, shared by the terminal and the browser front ends: a person against an agent, or
two people.

A ``Match`` keeps the move history (the board view, the review and persistence need it), whose
side the person plays (``human``: the creator's seat, the side its texts speak to), the seats
people play (``people``: their turn clocks run; both in a game between two people), and how the
game ended, including by resignation or on time, which the engines do not know. Times are
seconds since the epoch, passed in by the caller, so a stored game's clock keeps running while
the server is down and tests need not sleep."""

from __future__ import annotations

import math
from typing import Any

from ultimate_rl.agents.base import Agent
from ultimate_rl.games.base import Game
from ultimate_rl.play.view import BoardView, board_view

SIDE_CHOICES = ("x", "o", "first", "second", "odd", "even")
__all__ = ["SIDE_CHOICES", "Agent", "Match", "parse_side", "parse_turn_seconds"]


def parse_side(side: str) -> int:
    """The player index (0 moves first) of a side name: x/first/odd -> 0, o/second/even -> 1."""
    key = str(side).strip().lower()
    if key not in SIDE_CHOICES:
        raise ValueError(
            f"unknown side {side!r}; choose x (moves first), o (moves second) or alternate "
            "(also first/second, or odd/even for numerical_ttt)"
        )
    return SIDE_CHOICES.index(key) % 2


def parse_turn_seconds(value: Any) -> float | None:
    """A turn limit: None/0/"off" for none, else a positive number of seconds (e.g. 30, 60)."""
    if value is None or value == 0 or (isinstance(value, str) and value.lower() == "off"):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"turn_seconds must be a number of seconds or 'off', got {value!r}")
    if not math.isfinite(value) or value <= 0 or value > 86400:
        raise ValueError(f"turn_seconds must be between 0 and 86400 (off: 0), got {value!r}")
    return float(value)


class Match:
    """A game in progress: state, actions, the person's player index and clock, and the end."""

    def __init__(
        self,
        game: Game,
        human: int,
        turn_seconds: float | None = None,
        now: float = 0.0,
        people: tuple[int, ...] | None = None,
    ) -> None:
        if human not in (0, 1):
            raise ValueError(f"the person plays player 0 (first) or 1 (second), got {human!r}")
        self.game = game
        self.human = human
        self.people = (human,) if people is None else tuple(sorted(set(people)))
        self.state = game.initial_state()
        self.actions: list[int] = []
        self.resigned: int | None = None  # the player who resigned
        self.timed_out: int | None = None  # the player whose clock ran out
        self.turn_seconds = turn_seconds
        self.deadline: float | None = None  # when the person's move must have arrived
        self._board: tuple[int, dict[str, Any]] | None = None  # (moves, board JSON)
        self.start_clock(now)

    @property
    def over(self) -> bool:
        return (
            self.resigned is not None
            or self.timed_out is not None
            or self.game.is_terminal(self.state)
        )

    @property
    def to_move(self) -> int | None:
        return None if self.over else self.game.current_player(self.state)

    @property
    def human_to_move(self) -> bool:
        return self.to_move == self.human

    def start_clock(self, now: float) -> None:
        """A person's clock starts when their turn does; only people's thinking time counts."""
        timed = self.turn_seconds and self.to_move in self.people
        self.deadline = now + self.turn_seconds if timed else None

    def check_clock(self, now: float) -> bool:
        """Ends the game on time if the mover's deadline has passed; True if it just did."""
        if self.deadline is None or self.over or now <= self.deadline:
            return False
        self.timed_out = self.to_move
        self.deadline = None
        return True

    def seconds_left(self, now: float) -> float | None:
        return None if self.deadline is None else max(0.0, self.deadline - now)

    def play(self, action: int, now: float = 0.0) -> None:
        """Plays ``action`` for whoever is to move; the game's own errors say why it is illegal."""
        if self.resigned is not None or self.timed_out is not None:
            raise ValueError("the game is over; start a new one")
        self.state = self.game.apply(self.state, int(action))
        self.actions.append(int(action))
        self.start_clock(now)

    def resign(self, player: int | None = None) -> None:
        """``player`` (default: the person) gives up the game."""
        if self.over:
            raise ValueError("the game is already over")
        self.resigned = self.human if player is None else player
        self.deadline = None

    def winner(self) -> int | None:
        """0 or 1, or None for a draw or a game still going."""
        loser = self.resigned if self.resigned is not None else self.timed_out
        if loser is not None:
            return 1 - loser
        return self.game.winner(self.state)

    def result_for(self, player: int) -> str | None:
        """``"win"``, ``"loss"`` or ``"draw"`` from ``player``'s side, None while playing."""
        if not self.over:
            return None
        winner = self.winner()
        if winner is None:
            return "draw"
        return "win" if winner == player else "loss"

    def human_result(self) -> str | None:
        """The result from the person's side (``result_for(human)``)."""
        return self.result_for(self.human)

    def reason(self) -> str | None:
        """How the game ended: ``"line"``, ``"draw"``, ``"resign"`` or ``"time"``."""
        if not self.over:
            return None
        if self.resigned is not None:
            return "resign"
        if self.timed_out is not None:
            return "time"
        return "draw" if self.winner() is None else "line"

    def result_text(self) -> str:
        """One sentence on the end of the game, for people: to the person, or (two people) to
        anyone, naming the sides."""
        result = self.human_result()
        if result is None:
            return "game in progress"
        if len(self.people) == 2:
            marks = self.game.mark_names
            winner = self.winner()
            won = "Draw." if winner is None else f"{marks[winner]} wins."
            if self.resigned is not None:
                return f"{marks[self.resigned]} resigned: {won}"
            if self.timed_out is not None:
                return f"{marks[self.timed_out]}'s time ran out: {won}"
            return won
        if self.resigned is not None:
            return "You resigned: the agent wins."
        if self.timed_out is not None:
            return "Your time ran out: the agent wins on time."
        return {"win": "You win!", "loss": "The agent wins.", "draw": "Draw."}[result]

    def view(self) -> BoardView:
        return board_view(self.game, self.state)

    def board_json(self) -> dict[str, Any]:
        """The board view's JSON, built once per position (every page of a game draws it)."""
        if self._board is None or self._board[0] != len(self.actions):
            self._board = (len(self.actions), self.view().to_json())
        return self._board[1]

    def to_json(self, now: float = 0.0) -> dict[str, Any]:
        """Everything a front end needs to draw the game, its clock and its status."""
        outcome = self.human_result()
        result = None
        if outcome is not None:
            result = {"outcome": outcome, "winner": self.winner(), "reason": self.reason()}
        return {
            "human": self.human,
            "to_move": self.to_move,
            "human_to_move": self.human_to_move,
            "over": self.over,
            "result": result,
            "result_text": self.result_text() if self.over else "",
            "resigned": self.resigned,
            "turn_seconds": self.turn_seconds,
            "seconds_left": self.seconds_left(now),
            "actions": list(self.actions),
            "board": self.board_json(),
        }

    def to_record(self) -> dict[str, Any]:
        """The match as plain data for the database (``from_record`` rebuilds it)."""
        return {
            "human": self.human,
            "actions": list(self.actions),
            "resigned": self.resigned,
            "timed_out": self.timed_out,
            "turn_seconds": self.turn_seconds,
            "deadline": self.deadline,
            "people": list(self.people),
        }

    @classmethod
    def from_record(cls, game: Game, record: dict[str, Any]) -> Match:
        human = int(record["human"])
        people = tuple(int(p) for p in record.get("people", [human]))
        match = cls(game, human, record.get("turn_seconds"), people=people)
        match.state = game.apply_sequence([int(a) for a in record["actions"]])
        match.actions = [int(a) for a in record["actions"]]
        match.resigned = record.get("resigned")
        match.timed_out = record.get("timed_out")
        match.deadline = record.get("deadline")
        return match
