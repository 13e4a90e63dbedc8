"""How many lines a run's network agent loses at each search budget: the every-line walk of
``selfplay.book.walk`` (``walk_at_stake``) at ``BUDGET`` simulations (0: the raw policy) as
``SIDE`` (0 first, 1 second), the positions at stake it meets and the moves there that lose a
line, by ply, and the walk's seconds.

    python docs/experiments/numerical_ttt_perfect/budget_walks.py RUN_DIR SIDE BUDGET [BUDGET ...]
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

from ultimate_rl.agents.every_line import walk_at_stake
from ultimate_rl.games import layout
from ultimate_rl.nn import load_checkpoint, make_evaluator
from ultimate_rl.train.checkpoints import CHECKPOINT


def main(run_dir: Path, side: int, budgets: list[int]) -> None:
    checkpoint = load_checkpoint(run_dir / CHECKPOINT)
    game = checkpoint.make_game()
    evaluate = make_evaluator(checkpoint.build_model("cpu"), "cpu", precision="fp32")
    for budget in budgets:
        started = time.perf_counter()
        states, lost, _ = walk_at_stake(game, evaluate, side, budget)
        seconds = time.perf_counter() - started
        by_ply = Counter(int(state[layout.MOVES]) for state in states[lost])
        print(
            f"{run_dir.name} side {side} budget {budget}: {len(states)} at stake, "
            f"{int(lost.sum())} lost ({dict(sorted(by_ply.items()))} by ply), {seconds:.0f} s",
            flush=True,
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]), [int(b) for b in sys.argv[3:]])
