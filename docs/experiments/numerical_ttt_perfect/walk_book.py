"""A self-play book (``selfplay.book``) of the positions a run's raw policy must hold on the
every-line walk: those it meets as ``SIDE`` (0 first, 1 second, or both) against every opponent
reply where a line is still at stake (the solver's value for it at least ``every_line.required``).
The solver only picks the positions; their targets stay self-play's. With ``lost`` only those
where the raw policy's move loses the line (below ``required``). The walk is the training loop's
own (``ultimate_rl.agents.every_line.walk_at_stake``, what ``selfplay.book.walk`` adds in a run).

    python docs/experiments/numerical_ttt_perfect/walk_book.py RUN_DIR SIDE OUT.npy [lost]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from ultimate_rl.agents.every_line import walk_at_stake
from ultimate_rl.nn import load_checkpoint, make_evaluator
from ultimate_rl.train.checkpoints import CHECKPOINT


def main(run_dir: Path, sides: list[int], out: Path, lost_only: bool = False) -> None:
    checkpoint = load_checkpoint(run_dir / CHECKPOINT)
    game = checkpoint.make_game()
    evaluate = make_evaluator(checkpoint.build_model("cpu"), "cpu", precision="fp32")
    book = []
    for side in sides:
        states, lost, _ = walk_at_stake(game, evaluate, side)
        book.append(states[lost] if lost_only else states)
    np.save(out, np.concatenate(book))
    print(f"{out}: {sum(map(len, book))} positions of {run_dir} as side(s) {sides}")


if __name__ == "__main__":
    side = sys.argv[2]
    sides = [0, 1] if side == "both" else [int(side)]
    main(Path(sys.argv[1]), sides, Path(sys.argv[3]), sys.argv[4:] == ["lost"])
