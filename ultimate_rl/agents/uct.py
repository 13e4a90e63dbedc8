"""The UCT baseline as a player (``ultimate_rl.search.uct``)."""

from __future__ import annotations

import numpy as np

from ultimate_rl.agents.base import Agent, Analysis, check_playable
from ultimate_rl.games.base import Game
from ultimate_rl.search.uct import UCT, UctResult


class UctAgent(Agent):
    """UCT with random rollouts and proven wins/losses. Options (see ``search.uct.UCT``):
    ``num_simulations`` and/or ``time_per_move`` seconds, ``exploration``, ``seed``."""

    def __init__(
        self,
        num_simulations: int | None = None,
        time_per_move: float | None = None,
        exploration: float = 1.4,
        seed: int | None = None,
    ) -> None:
        self.search = UCT(num_simulations, time_per_move, exploration, seed)

    def _run(self, game: Game, state: np.ndarray) -> UctResult:
        return self.search.search(check_playable(game, state))

    def select_action(self, game: Game, state: np.ndarray) -> int:
        return self._run(game, state).action

    def analyse(self, game: Game, state: np.ndarray) -> Analysis:
        result = self._run(game, state)
        policy = (result.visit_counts / max(result.visit_counts.sum(), 1)).astype(np.float32)
        pv = (int(result.action),)  # its tree stays in the kernel's arrays: the move it plays
        return Analysis(policy, result.root_value, result.visit_counts, pv)
