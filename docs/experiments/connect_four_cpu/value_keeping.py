"""The trained Connect Four network's value-keeping rate on the solver's positions.

python docs/experiments/connect_four_cpu/value_keeping.py RUN/checkpoints/latest.pt [SIMS...]

``ConnectFour.exact_positions(200, 1234)`` (the training evaluation's set: 12-16 empty cells,
the choice matters) and, for comparison, the same number of positions without that filter; for
each simulation count, the share where the network agent's move keeps the exact value.
"""

from __future__ import annotations

import sys

import numpy as np

from ultimate_rl.agents.network import NetworkAgent
from ultimate_rl.games import connect_four_solver as solver
from ultimate_rl.games import make, solve

game = make("connect_four")
decisive = game.exact_positions(200, 1234)
plain = list(solver.labelled_positions(200, seed=1234)[0])
for sims in [int(s) for s in sys.argv[2:]] or [0, 200]:
    agent = NetworkAgent(sys.argv[1], num_simulations=sims, seed=0)
    for label, positions in (("decisive", decisive), ("all", plain)):
        kept = [
            int(agent.select_action(game, state)) in set(solve(game, state)[1].tolist())
            for state in positions
        ]
        print(f"{sims:>5} simulations, {label:>8} positions: {np.mean(kept):.3f} ({sum(kept)}/200)")
