"""Milliseconds a position of the network agent's search at 200 and 800 simulations, on 1,024
positions drawn from a 4x4 run's book (float32, the walk's own chooser: ``budget_player``).

    python docs/experiments/tictactoe4_perfect/search_cost.py CHECKPOINT RUN/book.npy
"""

import sys
import time

import numpy as np

from ultimate_rl.agents.every_line import budget_player
from ultimate_rl.nn.checkpoint import load_checkpoint
from ultimate_rl.nn.choice import make_evaluator

checkpoint = load_checkpoint(sys.argv[1])
game = checkpoint.make_game()
model = checkpoint.build_model("cpu").for_inference()
evaluate = make_evaluator(model, "cpu", game=game, reduced=False)
book = np.load(sys.argv[2], mmap_mode="r")
rows = np.array(book[np.sort(np.random.default_rng(0).choice(len(book), 1024, replace=False))])
for budget in (200, 800):
    choices = budget_player(game, evaluate, budget)
    started = time.perf_counter()
    choices(rows)
    each = 1000 * (time.perf_counter() - started) / len(rows)
    print(f"{budget} simulations: {each:.1f} ms a position")
