"""Issue 41's check of one tic-tac-toe checkpoint, as a user plays it: the network agent at the
raw policy and at 32, 200 and 800 simulations against every line of opponent moves, as X and
as O, its tree kept from move to move (one agent walking every line) and searched afresh in
each position, every move tied for the most visits followed (the agent picks one at random).
Prints the lines lost (0 everywhere for a perfect network) and seconds per walk.

    python docs/experiments/tictactoe_perfect/walk.py RUN_DIR      (its checkpoints/latest.pt)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests"))  # the walk of tests/test_train_learns.py, not a copy

from test_train_learns import BUDGETS, SearchAgent, lost_lines  # noqa: E402

from ultimate_rl.games import make  # noqa: E402


def main(run_dir: Path) -> None:
    game = make("tictactoe")
    for budget in BUDGETS:
        for tree, options in (("kept", {}), ("fresh", {"tree_reuse": False}))[: 2 if budget else 1]:
            policy = SearchAgent(run_dir, game, budget, **options)
            for side in (0, 1):
                started = time.perf_counter()
                lost = lost_lines(game, policy.choices, game.initial_state(), side)
                seconds = time.perf_counter() - started
                first = f", first {list(lost[0])}" if lost else ""
                where = f"{budget:4d} sims {tree:5s} as {'XO'[side]}"
                print(f"{where}: {len(lost)} lost{first} ({seconds:.1f} s)")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
