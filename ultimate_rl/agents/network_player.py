"""The network's moves for many positions at once, as training's evaluation and the every-line
walk (``agents/every_line.py``) ask for them: the raw policy's argmax, or one batched search of
many trees."""

from __future__ import annotations

import numpy as np

from ultimate_rl.games import Game, kernels
from ultimate_rl.search import BatchedSearch, Evaluator, SearchConfig
from ultimate_rl.search.tree import greedy_score


class NetworkPlayer:
    """The network's moves for many positions at once: raw policy argmax, or a search."""

    def __init__(
        self, game: Game, evaluate: Evaluator, num_simulations: int, search: SearchConfig
    ) -> None:
        self.game = game
        self.evaluate = evaluate
        self.num_simulations = num_simulations
        self.search = search
        self._searcher: BatchedSearch | None = None

    def actions(self, states: np.ndarray) -> np.ndarray:
        """Best move of each row of ``states`` (no noise, temperature 0)."""
        return self.scored_moves(states)[1]

    def scored_moves(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each row's move scores and best move: the raw policy's masked logits and their
        argmax, or the search's ``greedy_score`` (visits, ties broken by the prior) and the
        move the agent plays (exact ties broken at random: every top-scored move is one it may
        play)."""
        n = len(states)
        if self.num_simulations == 0:
            planes = np.zeros((n, *self.game.observation_shape), dtype=np.float32)
            masks = np.zeros((n, self.game.num_actions), dtype=bool)
            kernels.encode_batch(states, planes, masks)
            logits = np.where(masks, self.evaluate(planes, masks)[0], -np.inf)
            return logits, logits.argmax(axis=1)
        if self._searcher is None or self._searcher.batch_size < n:
            self._searcher = BatchedSearch(self.game, n, self.search, seed=0)
        for i in range(n):
            self._searcher.reset(i)
        out = self._searcher.search(
            states,
            self.evaluate,
            add_noise=False,
            num_simulations=self.num_simulations,
            temperature=0.0,
            stop_early=True,  # the same move, once it can no longer change
        )
        return greedy_score(out.visit_counts, out.prior), out.action
