"""Milliseconds per position of the walk's search (``every_line.budget_player``) at each budget,
the preset's MLP (untrained: the cost does not depend on the weights), 256 random positions.

    python docs/experiments/numerical_ttt_perfect/rates.py 0 32 200 800
"""

from __future__ import annotations

import sys
import time

import numpy as np

from ultimate_rl.agents import every_line
from ultimate_rl.games import make, sample_positions
from ultimate_rl.nn import make_evaluator
from ultimate_rl.nn.models import build_model


def main(budgets: list[int]) -> None:
    game = make("numerical_ttt")
    model = build_model(game, {"arch": "mlp", "mlp_hidden": [256, 256]}, seed=0)
    evaluate = make_evaluator(model, "cpu")
    states = np.stack(sample_positions(game, 256, seed=3))
    for budget in budgets:
        choices = every_line.budget_player(game, evaluate, budget)
        choices(states[:8])  # compile and warm up
        started = time.perf_counter()
        choices(states)
        print(f"{budget}: {(time.perf_counter() - started) / len(states) * 1000:.2f} ms/position")


if __name__ == "__main__":
    main([int(b) for b in sys.argv[1:]])
