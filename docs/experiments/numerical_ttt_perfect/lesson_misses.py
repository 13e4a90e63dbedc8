"""Where a teacher run's raw policy still loses a line: is the lesson there wrong, or unlearned?
For each position where the raw walk (second player, then first) loses, the share of visits the
stored lesson, a fresh 800-simulation search and the raw policy give to moves that lose the
side's value; then, over 4,000 of the book's lessons, how often the lesson's top move and the
raw policy's top move lose it, and how many lessons ``walk_book.missed_lessons`` counts.

    python docs/experiments/numerical_ttt_perfect/lesson_misses.py RUN
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from ultimate_rl.agents.every_line import required, walk_at_stake
from ultimate_rl.games import Game, kernels
from ultimate_rl.nn import load_checkpoint, make_evaluator
from ultimate_rl.train.walk_book import missed_lessons, search_lessons

SAMPLE = 4000


def losing_moves(game: Game, state: np.ndarray) -> np.ndarray:
    """``[A]``: the legal moves that give the mover's value away, as the walk judges
    (``every_line.required``: the first player must keep its win, the second its draw)."""
    floor = required(game, game.current_player(state))
    return game.legal_mask(state) & (game.exact_action_values(state) < floor)


def main(run: Path) -> None:
    checkpoint = load_checkpoint(run / "checkpoints/latest.pt")
    game = checkpoint.make_game()
    evaluate = make_evaluator(checkpoint.build_model("cpu"), "cpu", precision="fp32")
    book, lessons = np.load(run / "book.npy"), np.load(run / "book_lessons.npy")
    rows = {state.tobytes(): row for row, state in enumerate(book)}

    def raw_policy(states: np.ndarray) -> np.ndarray:
        planes = np.empty((len(states), *game.observation_shape), np.float32)
        masks = np.empty((len(states), game.num_actions), bool)
        kernels.encode_batch(states, planes, masks)
        logits = np.where(masks, evaluate(planes, masks)[0], -np.inf)
        odds = np.exp(logits - logits.max(axis=1, keepdims=True))
        return odds / odds.sum(axis=1, keepdims=True)

    for side in (1, 0):
        walk = walk_at_stake(game, evaluate, side)
        lost = walk.at_stake[walk.lost]
        print(f"side {side}: {len(walk.at_stake)} positions at stake, {len(lost)} lost")
        fresh = search_lessons(game, evaluate, lost, 800) if len(lost) else lost
        for state, policy, searched in zip(lost, raw_policy(lost), fresh, strict=True):
            bad, row = losing_moves(game, state), rows.get(state.tobytes())
            lesson = lessons[row] if row is not None else np.zeros(game.num_actions)
            print(
                f"  book row {row}: {bad.sum()} of {game.legal_mask(state).sum()} moves lose; "
                f"losing visits: lesson {lesson[bad].sum():.3f}, fresh search "
                f"{searched[bad].sum():.3f}, raw policy {policy[bad].sum():.3f}"
            )
    taught = np.flatnonzero(lessons.sum(axis=1) > 0)
    sample = np.random.default_rng(0).choice(taught, min(SAMPLE, len(taught)), replace=False)
    bad = np.stack([losing_moves(game, state) for state in book[sample]])
    index = np.arange(len(sample))
    raw_top = raw_policy(book[sample]).argmax(axis=1)
    missed = missed_lessons(game, evaluate, book[sample], lessons[sample])
    print(
        f"book {len(book)}, {len(taught)} taught; of {len(sample)} lessons the top move loses at "
        f"{bad[index, lessons[sample].argmax(axis=1)].mean():.4f}, the raw policy's at "
        f"{bad[index, raw_top].mean():.4f}; missed {len(missed) / len(sample):.4f}"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
