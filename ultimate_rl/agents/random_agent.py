"""The random player: a uniformly random legal move (the weakest rung of the ladder)."""

from __future__ import annotations

import numpy as np

from ultimate_rl.agents.base import Agent, check_playable
from ultimate_rl.games.base import Game


class RandomAgent(Agent):
    """Uniformly random legal moves; ``seed`` makes them reproducible."""

    def __init__(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)

    def select_action(self, game: Game, state: np.ndarray) -> int:
        return int(self._rng.choice(game.legal_actions(check_playable(game, state))))
