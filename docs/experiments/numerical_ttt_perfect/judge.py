"""The every-line verdict on a numerical tic-tac-toe run's ``checkpoints/latest.pt``, as the slow
test judges it (every budget, both sides, stopping at the first result below the required one).

    python docs/experiments/numerical_ttt_perfect/judge.py RUN_DIR
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests"))  # the test's checkpoint loading, not a copy

from test_train_learns import BUDGETS, RawPolicy  # noqa: E402

from ultimate_rl.agents.every_line import holds_every_line, walk_budgets  # noqa: E402
from ultimate_rl.games import make  # noqa: E402


def main(run_dir: Path) -> None:
    game = make("numerical_ttt")
    started = time.perf_counter()
    report = walk_budgets(game, RawPolicy(run_dir, game).evaluate, BUDGETS)
    seconds = time.perf_counter() - started
    print(report, "perfect" if holds_every_line(game, report, BUDGETS) else "not perfect")
    print(f"{seconds:.0f} s")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
