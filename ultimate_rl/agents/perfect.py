"""The perfect player: the exact solver's optimal moves (numerical_ttt, tictactoe 3x3 / 4x4)."""

from __future__ import annotations

import numpy as np

from ultimate_rl.agents.base import Agent, Analysis, check_playable
from ultimate_rl.games import solve
from ultimate_rl.games.base import Game


class PerfectAgent(Agent):
    """Plays a uniformly random move among those that keep the game's exact value (``seed``
    makes the choice reproducible). Games too large to solve (uttt) raise UnsolvableGameError."""

    def __init__(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)

    def select_action(self, game: Game, state: np.ndarray) -> int:
        _, optimal = solve(game, check_playable(game, state))
        return int(self._rng.choice(optimal))

    def analyse(self, game: Game, state: np.ndarray) -> Analysis:
        value, optimal = solve(game, check_playable(game, state))
        policy = np.zeros(game.num_actions, np.float32)
        policy[optimal] = 1.0 / len(optimal)
        return Analysis(policy, float(value), pv=(int(optimal[0]),))
