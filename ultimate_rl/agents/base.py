"""The one interface every player implements: ``select_action(game, state) -> action``.

The arena, the environments and the play front ends only see this interface. (contract)
"""

from __future__ import annotations

from abc import ABCMeta, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np

from ultimate_rl.games.base import Game
from ultimate_rl.games.errors import GameOverError


@dataclass(frozen=True)
class Analysis:
    """What an agent thinks of a position, for analysis front ends.

    ``policy`` is its move distribution over ``game.num_actions`` (search visit shares, the
    solver's optimal set, ...); ``value`` the expected result for the player to move in [-1, 1]
    (None if the agent has no estimate); ``visit_counts`` the search's root visits, if it searched;
    ``pv`` its principal variation, the moves it expects from the position (empty if it has none).
    """

    policy: np.ndarray
    value: float | None
    visit_counts: np.ndarray | None = None
    pv: tuple[int, ...] = ()


class Agent(metaclass=ABCMeta):
    """The player contract, and the base class of our players.

    Any object with a ``select_action`` method is an ``Agent`` (``isinstance`` says so, as for the
    ``collections.abc`` types), so users' players need not subclass it. Subclasses implement
    ``select_action`` and inherit ``analyse``: a one-hot policy on the chosen move, no value.
    """

    @classmethod
    def __subclasshook__(cls, other: type) -> Any:
        if cls is Agent and any("select_action" in vars(base) for base in other.__mro__):
            return True
        return NotImplemented

    @abstractmethod
    def select_action(self, game: Game, state: np.ndarray) -> int:
        """The move to play in ``state`` (a legal action of ``game``)."""

    def analyse(self, game: Game, state: np.ndarray) -> Analysis:
        policy = np.zeros(game.num_actions, np.float32)
        action = self.select_action(game, state)
        policy[action] = 1.0
        return Analysis(policy, None, pv=(int(action),))


def check_playable(game: Game, state: np.ndarray) -> np.ndarray:
    """``state`` if it is a state of ``game`` with a move to play, else a clear error."""
    game.check_state(state)
    if game.is_terminal(state):
        raise GameOverError(f"no move to choose: the game is over ({game.outcome_text(state)})")
    return state
