"""Lost lines by window of iterations, from runs' own evaluation lines.

    python docs/experiments/numerical_ttt_perfect/windows.py RUN.log[,RUN2.log...] 10-50 260-300

Each training log line with an evaluation carries ``lost lines raw F/S 32 F/S 200 F/S 800 F/S``
(first / second player's lost lines at each budget of ``selfplay.book.walk_budgets=[0,32,200,
800]``). Prints, per log and window, the mean over the evaluations inside it: the raw policy's
first and second player's, then the second player's at 32, 200 and 800 simulations (the first
player's searched walks lost none in these runs).
"""

from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path

GAMES = r"(?: \(games [\d-]+/[\d-]+\))?"  # the walks of games with the tree kept (since 9a6a46a)
LINE = re.compile(
    rf"^iter (\d+)/.*lost lines raw (\d+)/(\d+) 32 (\d+)/(\d+){GAMES} 200 (\d+)/(\d+){GAMES}"
    rf" 800 (\d+)/(\d+)"
)


def evaluations(log: Path) -> list[tuple[int, ...]]:
    """(iteration, raw first, raw second, 32 first, 32 second, ...) per evaluation line."""
    return [
        tuple(int(x) for x in match.groups())
        for line in log.read_text().splitlines()
        if (match := LINE.match(line))
    ]


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    windows = [tuple(int(x) for x in w.split("-")) for w in sys.argv[2:]]
    for log in sys.argv[1].split(","):
        rows, text = evaluations(Path(log)), Path(log).stem
        for low, high in windows:
            inside = [row for row in rows if low <= row[0] <= high]
            if not inside:
                text += f" | {low}-{high}: -"
                continue

            def mean(column: int, inside: list[tuple[int, ...]] = inside) -> float:
                return statistics.mean(row[column] for row in inside)

            text += (
                f" | {low}-{high} (n={len(inside)}): raw {mean(1):.1f}/{mean(2):.0f}"
                f" 32 {mean(4):.0f} 200 {mean(6):.1f} 800 {mean(8):.1f}"
            )
        print(text)


if __name__ == "__main__":
    main()
