"""Where a run's raw policy gives value away on the every-line walk: the positions it meets as
``SIDE`` (0 first, 1 second) against every opponent reply, and how many of its moves there lower
the solver's value (a win played to a draw or a loss, a draw to a loss), and how many of those
lose a line under the every-line rule (``every_line.required``: below the game's value for a
side that wins or draws, below a draw for a side the game loses, whose opponent's mistake saved
it). The game is the run's (its checkpoint's): numerical tic-tac-toe, or tic-tac-toe 3x3 / 4x4.

    python docs/experiments/numerical_ttt_perfect/raw_mistakes.py RUN_DIR [SIDE [BOOK.npy]]

With ``BOOK.npy`` (``walk_book.py``) it judges the moves at the book's positions, not the walk's.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests"))  # the test's checkpoint loading, not a copy

from test_train_learns import RawPolicy  # noqa: E402

from ultimate_rl.agents.every_line import required  # noqa: E402
from ultimate_rl.games import kernels, layout, solve  # noqa: E402
from ultimate_rl.nn import load_checkpoint  # noqa: E402
from ultimate_rl.train.checkpoints import CHECKPOINT  # noqa: E402


def value_after(game, child, side: int) -> int:
    """The solver's value of ``child`` for ``side``, who just moved (the game may have ended)."""
    if child[layout.STATUS] == layout.ONGOING:
        return -solve(game, child)[0]
    winner = game.winner(child)
    return 0 if winner is None else (1 if winner == side else -1)


def walk(game, policy, side: int) -> Iterator[tuple[np.ndarray, int, int]]:
    """Each position the raw ``policy`` meets as ``side`` against every opponent reply, with
    the solver's value for ``side`` before its move and after it."""
    seen: set[bytes] = set()
    stack = [game.initial_state()]
    while stack:
        state = stack.pop()
        if state.tobytes() in seen or state[layout.STATUS] != layout.ONGOING:
            continue
        seen.add(state.tobytes())
        moves = [policy(state)] if state[layout.PLAYER] == side else game.legal_actions(state)
        for action in moves:
            child = state.copy()
            kernels.apply(child, int(action))
            stack.append(child)
        if state[layout.PLAYER] == side:
            yield state, solve(game, state)[0], value_after(game, stack[-1], side)


def on_book(game, policy, side: int, book: np.ndarray) -> Iterator[tuple[np.ndarray, int, int]]:
    """As ``walk``, at the positions of a book (``walk_book.py``) instead."""
    for state in book:
        child = state.copy()
        kernels.apply(child, int(policy(state)))
        yield state, solve(game, state)[0], value_after(game, child, side)


def main(run_dir: Path, side: int, book: Path | None = None) -> None:
    game = load_checkpoint(run_dir / CHECKPOINT).make_game()
    policy = RawPolicy(run_dir, game)
    if book is None:
        judged = walk(game, policy, side)
    else:
        judged = on_book(game, policy, side, np.load(book))
    met = mistakes = 0
    floor = required(game, side)
    at_stake: Counter[int] = Counter()  # per ply: positions where a line can still be held
    lost: Counter[int] = Counter()  # ... and where the move loses it
    for state, before, after in judged:
        met += 1
        mistakes += after < before
        ply = int(state[layout.MOVES])
        at_stake[ply] += floor <= before
        lost[ply] += after < floor <= before
    name = ("first", "second")[side]
    print(
        f"{run_dir} as {name}: {met} positions, {mistakes} value-losing moves, "
        f"{lost.total()} of them losing a line (below {floor:+d})"
    )
    by_ply = ", ".join(f"{ply}: {lost[ply]}/{at_stake[ply]}" for ply in sorted(at_stake))
    print(f"  by ply, line-losing moves / positions at stake: {by_ply}")


if __name__ == "__main__":
    book = Path(sys.argv[3]) if len(sys.argv) > 3 else None
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 0, book)
