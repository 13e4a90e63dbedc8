"""Positions the every-line walk searches for a solver-like player (the solver's first best
move), as first and as second player: the walk's cost at a budget is these x its search.

    python docs/experiments/numerical_ttt_perfect/sizes.py numerical_ttt
    python docs/experiments/numerical_ttt_perfect/sizes.py tictactoe 4 4      (size, k)
"""

from __future__ import annotations

import sys
import time

import numpy as np

from ultimate_rl.agents import every_line
from ultimate_rl.games import make, solve


def main(name: str, options: list[str]) -> None:
    game = make(name, **({"size": int(options[0]), "k": int(options[1])} if options else {}))
    searched = [0]

    def solver(states: np.ndarray) -> list[np.ndarray]:
        searched[0] += len(states)
        return [solve(game, s)[1][:1] for s in states]

    for side in (0, 1):
        searched[0] = 0
        started = time.perf_counter()
        worst = every_line.worst_line(game, solver, side, max_positions=10**7)
        seconds = time.perf_counter() - started
        where = f"{name} {options} side {side}"
        print(f"{where}: worst {worst}, {searched[0]} positions, {seconds:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
