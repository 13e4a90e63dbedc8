"""``selfplay.book.walk``: a solved game's run grows a self-play book from its own walks.

Perfect play must hold on every line of the opponent (``agents.every_line``), but self-play meets
only the positions its own search leads to, and a small network generalises from those to the
rest poorly (``docs/experiments/numerical_ttt_perfect/``: an MLP that learned its training
positions missed 18-30% of held-out ones; four times the positions cut that to 4-13%). So at
each evaluation the network agent walks every opponent line as either side, at each budget of
``selfplay.book.walk_budgets`` (the raw policy alone by default: a search walk meets other
positions, where the value head misleads the search), and each position it meets there with
its value at stake (the solver's value for it at least ``required``) joins the book that a
share of self-play games start from (``selfplay.book.fraction``). The solver only picks
positions; their targets stay self-play's. As the network changes its moves the walk
moves, so the book keeps every walk's positions (their union).

The book is ``RUN/book.npy`` (actors read it as it changes: ``selfplay.book.BookFile``). It only
grows, a walk's new positions appended at its end, so a checkpoint needs only its length
(``Progress.book_rows``): a resumed run cuts the file back to that and goes on as if never
stopped, with no copy of a book of a million positions in every checkpoint.

With ``selfplay.book.teacher`` the book's positions are also lessons for the raw policy: self-play
trains the policy only where its games go, and a raw policy that fits those generalises to the
rest of the walk at ~99%, which leaves lost lines on a walk of 26,000 positions (the numerical
record). So each position a walk meets without a lesson, or where the walk lost a line, gets the
visit distribution of the network agent's deeper search (``search_lessons``), kept in
``RUN/book_lessons.npy`` row for row with the book (a zero row: none yet), and the learner adds a
batch of them to each step, trained by the policy loss alone (``Learner.lessons``): the search
teaches the raw policy its moves on every line (DAgger, with the search as the expert). With
``selfplay.book.missed_share`` a share of each batch comes from the lessons the raw policy has not
learned at the latest walk (``missed_lessons``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from tqdm import tqdm

from ultimate_rl.agents.every_line import CHUNK, SIDES, holds, key, walk_at_stake
from ultimate_rl.agents.network import agent_search_config
from ultimate_rl.agents.network_player import NetworkPlayer
from ultimate_rl.games import Game, kernels
from ultimate_rl.games.symmetry import Symmetry
from ultimate_rl.nn.losses import Batch
from ultimate_rl.search import Evaluator
from ultimate_rl.search.batched import BatchedSearch
from ultimate_rl.search.memo import MemoEvaluator
from ultimate_rl.selfplay.augment import apply_random_symmetries
from ultimate_rl.selfplay.book import EMPTY_BOOK, load_book, lost_path, save_book
from ultimate_rl.selfplay.schema import BookSettings
from ultimate_rl.selfplay.targets import TARGETS
from ultimate_rl.train.learner import Learner

LESSON_TARGETS = tuple(t for t in TARGETS if t.name in ("policies", "full_search"))
"""A lesson's targets: the search's visits, for the policy loss alone."""


class GrownBook(NamedTuple):
    """``grow_book``'s result."""

    states: np.ndarray
    """The book with the walks' new positions appended, in the walks' order."""
    lost: np.ndarray
    """The rows where a walk lost a line."""
    figures: dict[str, Any]
    """For the evaluation's report: per budget and side the positions at stake and the moves
    there that lost a line, the walk's worst result (``every_line.key``), the book's size and
    growth."""
    met: np.ndarray
    """The rows the walks met."""


def grow_book(
    book: np.ndarray,
    game: Game,
    evaluate: Evaluator,
    budgets: Sequence[int] = (0,),
    in_order: bool = False,
) -> GrownBook:
    """``book`` (each position once) grown by both sides' walks at each of ``budgets``, position
    by position as the verdict walks (``every_line.walk_budgets``). ``in_order``: the budgets in
    rising order, none after the first where a walk fails (``selfplay.book.walk_in_order``)."""
    found: dict[str, Any] = {"walk": {}}
    parts, lost = [book], [np.zeros(len(book), dtype=bool)]
    for budget in sorted(map(int, budgets)) if in_order else map(int, budgets):
        figures = found["walk"][str(budget)] = {}
        held = True
        for side, name in enumerate(SIDES):
            walk = walk_at_stake(game, evaluate, side, budget)
            parts.append(walk.at_stake)
            lost.append(walk.lost)
            found[key(budget, side)] = walk.worst
            held = held and holds(game, side, walk.worst)
            figures[f"at_stake_{name}"] = len(walk.at_stake)
            figures[f"lost_lines_{name}"] = int(walk.lost.sum())
        if in_order and not held:
            break
    every, lost_any = np.concatenate(parts), np.concatenate(lost)
    _, first, which = np.unique(every, axis=0, return_index=True, return_inverse=True)
    grown = np.concatenate([book, every[np.sort(first[first >= len(book)])]])
    # a row's place in the grown book: the book keeps its rows, the new ones follow in order
    place = np.empty(len(first), dtype=np.int64)
    place[np.argsort(first, kind="stable")] = np.arange(len(first))
    rows = place[which.reshape(-1)]
    lost_rows = np.unique(rows[lost_any])
    found["book"] = {"size": len(grown), "added": len(grown) - len(book), "lost": len(lost_rows)}
    return GrownBook(grown, lost_rows, found, np.unique(rows[len(book) :]))


def search_lessons(game: Game, evaluate: Evaluator, states: np.ndarray, budget: int) -> np.ndarray:
    """``[N, A]``: the visit distribution of the network agent's search at ``budget``
    simulations, without noise, at each of ``states`` (``selfplay.book.teacher``). The states
    are a walk's, whose searches overlap: each distinct position goes to the network once."""
    found = np.zeros((len(states), game.num_actions), np.float32)
    config = agent_search_config(budget)
    evaluate = MemoEvaluator(evaluate)
    for start in range(0, len(states), CHUNK):
        rows = states[start : start + CHUNK]
        search = BatchedSearch(game, len(rows), config, seed=start)
        found[start : start + len(rows)] = search.search(rows, evaluate, False).policy_target
    return found


MISSED_CHUNK = 4096
"""Positions the raw policy scores at once when ``missed_lessons`` looks for its misses."""


def missed_lessons(
    game: Game, evaluate: Evaluator, states: np.ndarray, lessons: np.ndarray
) -> np.ndarray:
    """The indices of ``states`` whose lesson the raw policy has not learned: its top move (the
    raw walk's, ``NetworkPlayer``) gets under half the visits of the lesson's top move (a tie of
    good moves is learned)."""
    raw = NetworkPlayer(game, evaluate, 0, agent_search_config(0))
    found = [np.zeros(0, np.int64)]
    for start in range(0, len(states), MISSED_CHUNK):
        rows = states[start : start + MISSED_CHUNK]
        top = raw.actions(rows)
        lesson = lessons[start : start + len(rows)]
        missed = lesson[np.arange(len(rows)), top] < 0.5 * lesson.max(axis=1)
        found.append(start + np.flatnonzero(missed))
    return np.concatenate(found)


def lesson_batch(
    game: Game,
    states: np.ndarray,
    policies: np.ndarray,
    rng: np.random.Generator,
    symmetries: Sequence[Symmetry] | None,
) -> Batch:
    """``states`` with their lessons ``policies`` as a batch for the policy loss alone, each
    under a random one of ``symmetries``."""
    planes = np.empty((len(states), *game.observation_shape), np.float32)
    masks = np.empty((len(states), game.num_actions), bool)
    kernels.encode_batch(states, planes, masks)
    targets = {"policies": policies, "full_search": np.ones(len(states), bool)}
    batch = Batch(planes, masks, targets)
    return apply_random_symmetries(batch, symmetries or [], rng, LESSON_TARGETS)


def lessons_path(path: Path) -> Path:
    """Beside a run's own book: its lessons, row for row (``selfplay.book.teacher``)."""
    return path.with_name(f"{path.stem}_lessons{path.suffix}")


class RunBook:
    """A run's own book (module doc): ``path``, kept as long as ``learner.progress.book_rows``
    says, and beside it the latest walk's lost positions (``selfplay.book.lost_share``), whose
    rows ``learner.progress.book_lost`` keeps, and with a teacher the lessons
    (``lessons_path``) and the rows of those the raw policy missed (``progress.book_missed``).
    ``settings``: the walks' budgets, when they start, the teacher, and the
    file a new run starts from (``selfplay.book.path``; none if empty)."""

    def __init__(self, path: Path, game: Game, settings: BookSettings, learner: Learner) -> None:
        self.path, self.game, self.settings, self.learner = path, game, settings, learner
        self.states = self._restore(settings.path)
        self.lessons = self._restore_lessons()
        self.missed = np.asarray(learner.progress.book_missed, dtype=np.int64)
        self._index_lessons()
        self._save()

    def _restore(self, start: str) -> np.ndarray:
        progress = self.learner.progress
        if progress.book_rows:
            kept = load_book(self.path, self.game) if self.path.exists() else EMPTY_BOOK
            if len(kept) >= progress.book_rows:
                return kept[: progress.book_rows]
            tqdm.write(
                f"{self.path} holds {len(kept)} of the {progress.book_rows} positions the "
                "checkpoint's book had: the book starts again, and the next evaluations' walks "
                "refill it"
            )
        states = load_book(start, self.game) if start else EMPTY_BOOK
        progress.book_rows, progress.book_lost, progress.book_missed = len(states), [], []
        return states

    def _restore_lessons(self) -> np.ndarray:
        """The lessons of the book's rows as the file keeps them (rows it lacks have none: the
        next walk that meets them teaches them)."""
        found = np.zeros((len(self.states), self.game.num_actions), np.float32)
        path = lessons_path(self.path)
        if self.settings.teacher and self.learner.progress.book_rows and path.exists():
            kept = np.load(path, allow_pickle=False)[: len(found)]
            if kept.shape[1:] == found.shape[1:]:
                found[: len(kept)] = kept
        return found

    def grow(self, evaluate: Evaluator, optimal_rate: float) -> dict[str, Any]:
        """Walks, appends, teaches and rewrites the files; the figures for the evaluation's
        report. The walks start at the first evaluation whose ``optimal_rate`` reaches
        ``walk_from_optimal`` and go on at every one after it (none before: no figures)."""
        progress = self.learner.progress
        if not progress.book_walks and optimal_rate < self.settings.walk_from_optimal:
            return {}
        settings = self.settings
        grown = grow_book(
            self.states, self.game, evaluate, settings.walk_budgets, settings.walk_in_order
        )
        added = len(grown.states) - len(self.states)
        new_rows = np.zeros((added, self.game.num_actions), np.float32)
        self.lessons = np.concatenate([self.lessons, new_rows])
        self.states = grown.states
        progress.book_rows, progress.book_lost = len(self.states), grown.lost.tolist()
        progress.book_walks += 1
        if self.settings.teacher:
            untaught = grown.met[self.lessons[grown.met].sum(axis=1) == 0]
            rows = np.union1d(untaught, grown.lost)
            taught = self.states[rows]
            self.lessons[rows] = search_lessons(self.game, evaluate, taught, self.settings.teacher)
            grown.figures["book"]["taught"] = len(rows)
        self._save()
        self._index_lessons()
        if self.settings.missed_share:
            found = missed_lessons(
                self.game, evaluate, self.states[self.taught], self.lessons[self.taught]
            )
            self.missed = self.taught[found]
            progress.book_missed = self.missed.tolist()
            grown.figures["book"]["missed"] = len(self.missed)
        return grown.figures

    def _index_lessons(self) -> None:
        """``taught``: the rows with a lesson, which ``lesson_batch`` draws from every step."""
        self.taught = np.flatnonzero(self.lessons.sum(axis=1) > 0)

    def lesson_batch(
        self, size: int, rng: np.random.Generator, symmetries: Sequence[Symmetry] | None
    ) -> Batch | None:
        """``size`` of the book's lessons, ``missed_share`` of them from the missed ones (while
        there are some) and the rest drawn uniformly, each under a random one of
        ``symmetries``; ``None`` before the first."""
        if not len(self.taught):
            return None
        rows = self.taught[rng.integers(0, len(self.taught), size)]
        if len(self.missed):
            count = round(self.settings.missed_share * size)
            rows[:count] = self.missed[rng.integers(0, len(self.missed), count)]
        return lesson_batch(self.game, self.states[rows], self.lessons[rows], rng, symmetries)

    def _save(self) -> None:
        save_book(self.path, self.states)
        save_book(lost_path(self.path), self.states[self.learner.progress.book_lost])
        if self.settings.teacher:
            save_book(lessons_path(self.path), self.lessons)
