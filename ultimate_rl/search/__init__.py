"""Search: the UCT baseline (random rollouts, MCTS-Solver) and batched PUCT / Gumbel search for a
network (MCTS-Solver optional), all numba kernels over flat arrays that serve every game of
``ultimate_rl.games``.

The network is only an ``Evaluator`` callable here; this package never imports ``nn``.
"""

from __future__ import annotations

from ultimate_rl.search.batched import BatchedSearch, Evaluator, SearchOutput
from ultimate_rl.search.config import ALGORITHMS, SearchConfig, SearchError
from ultimate_rl.search.uct import UCT, UctResult

__all__ = [
    "ALGORITHMS",
    "UCT",
    "BatchedSearch",
    "Evaluator",
    "SearchConfig",
    "SearchError",
    "SearchOutput",
    "UctResult",
]
