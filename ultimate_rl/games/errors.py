"""Exceptions raised by the game layer. They subclass ValueError so generic handlers still work."""

from __future__ import annotations

from collections.abc import Iterable


class GameError(ValueError):
    """Base class for every error the game layer raises on bad input."""


class IllegalActionError(GameError):
    """An action that is not legal in the given position."""

    def __init__(self, action: object, legal: Iterable[int], reason: str = "") -> None:
        legal = [int(a) for a in legal]
        self.action = action
        self.legal_actions = legal
        why = f" ({reason})" if reason else ""
        super().__init__(f"illegal action {action!r}{why}; legal actions: {legal}")


class GameOverError(GameError):
    """An action was applied to a finished game."""


class InvalidStateError(GameError):
    """A state array of the wrong type, shape or game."""


class UnknownGameError(GameError, KeyError):
    """An unknown game name or option."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0])


class UnsolvableGameError(GameError):
    """The exact solver was asked for a game too large to solve."""


class MoveError(GameError):
    """Typed text that is not a move here; the message says what was wrong and what to type."""
