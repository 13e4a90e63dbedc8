"""A self-play book (``selfplay.book``) of the positions a run's raw policy must hold on the
every-line walk: those it meets as ``SIDE`` (0 first, 1 second, or both) against every opponent
reply where a line is still at stake (the solver's value for it at least ``every_line.required``).
The solver only picks the positions; their targets stay self-play's. With ``lost`` only those
where the raw policy's move loses the line (below ``required``).

    python docs/experiments/numerical_ttt_perfect/walk_book.py RUN_DIR SIDE OUT.npy [lost]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from raw_mistakes import RawPolicy, walk

from ultimate_rl.nn import load_checkpoint
from ultimate_rl.train.checkpoints import CHECKPOINT
from ultimate_rl.train.every_line import required


def main(run_dir: Path, sides: list[int], out: Path, lost_only: bool = False) -> None:
    game = load_checkpoint(run_dir / CHECKPOINT).make_game()
    policy = RawPolicy(run_dir, game)
    book = [
        state
        for side in sides
        for state, before, after in walk(game, policy, side)
        if before >= required(game, side) and (after < required(game, side) or not lost_only)
    ]
    np.save(out, np.stack(book))
    print(f"{out}: {len(book)} positions of {run_dir} as side(s) {sides}")


if __name__ == "__main__":
    side = sys.argv[2]
    sides = [0, 1] if side == "both" else [int(side)]
    main(Path(sys.argv[1]), sides, Path(sys.argv[3]), sys.argv[4:] == ["lost"])
