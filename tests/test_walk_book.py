"""``selfplay.book.walk``: a run grows its self-play book from its every-line walks.

The walk's positions and lost lines match a plain line-by-line walk of the same policy; the
book only grows and keeps every budget's walk; actors read the file as it changes; the
checkpoint keeps the book's length and a resumed run cuts the file back to it; a config that
cannot walk is named.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from helpers import tiny_run_overrides

from tests.helpers import noisy_exact_network
from ultimate_rl.agents import every_line
from ultimate_rl.agents.every_line import budget_player, key, required, walk_at_stake, worst_line
from ultimate_rl.games import layout, make, solve
from ultimate_rl.nn import load_checkpoint, make_evaluator
from ultimate_rl.nn.losses import Batch
from ultimate_rl.search import SearchConfig
from ultimate_rl.selfplay.book import EMPTY_BOOK, BookError, BookFile, lost_path, save_book
from ultimate_rl.selfplay.schema import BookSettings, SelfPlaySettings
from ultimate_rl.selfplay.worker import SelfPlayStats, SelfPlayWorker
from ultimate_rl.train import ConfigError, check_config, train, walk_book
from ultimate_rl.train.checkpoints import CHECKPOINT
from ultimate_rl.train.learner import Learner, Progress
from ultimate_rl.train.logs import IterationRecord, status_line
from ultimate_rl.train.loop import BOOK, PeriodicEvaluation
from ultimate_rl.train.run import compose_train_config
from ultimate_rl.train.walk_book import RunBook, grow_book


def scrambled(planes: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A fixed, arbitrary network: each position's logits drawn from a hash of its planes."""
    logits = np.stack(
        [np.random.default_rng(zlib.crc32(p.tobytes())).normal(size=masks.shape[1]) for p in planes]
    ).astype(np.float32)
    return logits, np.zeros(len(planes), np.float32)


def plain_walk(game, side: int) -> tuple[set[bytes], set[bytes]]:
    """Every position ``scrambled``'s best legal move meets as ``side`` against every reply,
    one line at a time: those at stake (the solver's value at least ``required``), and those
    where its move falls below that."""
    floor, seen, at_stake, lost = required(game, side), set(), set(), set()
    stack = [game.initial_state()]
    while stack:
        state = stack.pop()
        if state.tobytes() in seen or game.is_terminal(state):
            continue
        seen.add(state.tobytes())
        moves = game.legal_actions(state)
        if state[layout.PLAYER] == side:
            mask = game.legal_mask(state)
            logits, _ = scrambled(game.encode(state)[None], mask[None])
            moves = [int(np.flatnonzero(mask)[np.argmax(logits[0][mask])])]
            if solve(game, state)[0] >= floor:
                at_stake.add(state.tobytes())
                if -solve(game, game.apply(state, moves[0]))[0] < floor:
                    lost.add(state.tobytes())
        stack.extend(game.apply(state, int(move)) for move in moves)
    return at_stake, lost


@pytest.mark.parametrize(
    ("name", "side"),
    [
        ("tictactoe", 0),
        ("tictactoe", 1),
        ("numerical_ttt", 0),  # a winning side must keep the win: the floor is +1
        pytest.param("numerical_ttt", 1, marks=pytest.mark.slow),  # ~40,000 positions
    ],
)
def test_the_walk_finds_the_positions_at_stake_of_a_plain_walk(name: str, side: int):
    game = make(name)
    states, lost, _ = walk_at_stake(game, scrambled, side)
    at_stake, plain_lost = plain_walk(game, side)
    assert {s.tobytes() for s in states} == at_stake and len(states) == len(at_stake) > 0
    assert {s.tobytes() for s in states[lost]} == plain_lost  # lost lines on either side
    assert len(plain_lost) > 0


def test_the_book_keeps_every_walk_of_every_budget():
    game = make("tictactoe")
    elsewhere = np.stack([game.apply_sequence([0, 4, 8, 2])])  # X's 0 and 8 are not scrambled's
    budgets = (0, 8)
    grown, lost_rows, found, met = grow_book(elsewhere, game, scrambled, budgets)
    walks = {b: [walk_at_stake(game, scrambled, side, b) for side in (0, 1)] for b in budgets}
    walked = {b: {s.tobytes() for states, _, _ in walks[b] for s in states} for b in budgets}
    lost = {s.tobytes() for b in budgets for states, lost, _ in walks[b] for s in states[lost]}
    assert walked[0] != walked[8]  # the search walk meets positions the raw policy's does not
    assert {s.tobytes() for s in grown} == walked[0] | walked[8] | {elsewhere[0].tobytes()}
    assert np.array_equal(grown[0], elsewhere[0])  # the book's rows first, then the walks'
    assert {s.tobytes() for s in grown[lost_rows]} == lost and len(lost_rows) == len(lost)
    assert len({s.tobytes() for s in grown}) == len(grown)  # each position once
    assert np.array_equal(met, np.arange(1, len(grown)))  # all but the book's row
    assert found["book"] == {"size": len(grown), "added": len(grown) - 1, "lost": len(lost)}
    for budget in budgets:
        for side in (0, 1):  # the verdict's figure for each walk (``walk_budgets`` takes it)
            worst = worst_line(game, budget_player(game, scrambled, budget), side)
            assert found[key(budget, side)] == walks[budget][side].worst == worst
        figures = found["walk"][str(budget)]
        assert figures["at_stake_first"] + figures["at_stake_second"] == len(walked[budget])
        assert figures["lost_lines_first"] + figures["lost_lines_second"] == sum(
            int(lost.sum()) for _, lost, _ in walks[budget]
        )
    again, lost_again, found, met_again = grow_book(grown, game, scrambled, budgets)
    assert np.array_equal(again, grown) and found["book"]["added"] == 0
    assert np.array_equal(met_again, met)
    assert np.array_equal(lost_again, lost_rows)


def test_walks_in_order_stop_after_the_first_budget_that_loses_a_line():
    """``walk_in_order``: the budgets in rising order, none after the first whose walk loses a
    line; the same walks as without it up to there."""
    game = make("tictactoe")
    assert worst_line(game, budget_player(game, scrambled, 0), 0) < 0  # the raw policy loses
    everything = grow_book(EMPTY_BOOK, game, scrambled, (8, 0))
    raw_only = grow_book(EMPTY_BOOK, game, scrambled, (8, 0), in_order=True)
    assert set(everything.figures["walk"]) == {"0", "8"} and set(raw_only.figures["walk"]) == {"0"}
    assert key(8, 0) in everything.figures and key(8, 0) not in raw_only.figures
    alone = grow_book(EMPTY_BOOK, game, scrambled, (0,))
    assert np.array_equal(raw_only.states, alone.states)
    assert np.array_equal(raw_only.lost, alone.lost)


def test_the_walks_start_once_the_optimal_rate_reaches_walk_from_optimal(tmp_path: Path):
    game, path = make("tictactoe"), tmp_path / "book.npy"
    settings = BookSettings(fraction=0.5, walk=True, walk_from_optimal=0.9)
    learner = SimpleNamespace(progress=Progress())
    book = RunBook(path, game, settings, learner)
    assert book.grow(scrambled, 0.85) == {} and not path.exists()  # no book yet: no book games
    assert learner.progress.book_walks == 0
    found = book.grow(scrambled, 0.9)
    assert found["book"]["size"] == len(np.load(path)) > 0 and learner.progress.book_walks == 1
    assert "book" in book.grow(scrambled, 0.5)  # once started, every evaluation walks
    assert learner.progress.book_walks == 2


def test_an_evaluation_walks_each_budget_once_for_its_book_and_its_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The verdict on perfect play takes the book's walks at the budgets both walk."""
    overrides = tiny_run_overrides(
        "selfplay.book.walk=true",
        "selfplay.book.fraction=0.5",
        "selfplay.book.walk_budgets=[0,2]",
        "eval.perfect_budgets=[0,2]",
        "eval.every=1",
    )
    run = check_config(compose_train_config(overrides))
    walks = []

    def counted(game, choices, side, *args, **kwargs):
        walks.append(side)
        return worst_line(game, choices, side, *args, **kwargs)

    monkeypatch.setattr(every_line, "worst_line", counted)
    passed = {"perfect": {"worst_as_first": 0, "worst_as_second": 0}, "optimal_rate": 1.0}
    monkeypatch.setattr("ultimate_rl.train.loop.evaluate_network", lambda *_: dict(passed))
    learner = SimpleNamespace(progress=Progress(iteration=1))
    book = RunBook(tmp_path / "book.npy", run.game, run.selfplay.book, learner)
    report = PeriodicEvaluation(run, scrambled, None, lambda _: tmp_path, book)(learner)
    assert len(walks) == 4 and report[key(0, 0)] is not None  # two budgets, two sides, once
    assert learner.progress.perfect == every_line.holds_every_line(run.game, report, [0, 2])


def test_an_evaluation_replaces_the_last_ones_walk_verdicts(tmp_path: Path, monkeypatch):
    """``last_eval`` (the run's summary) keeps the latest rating beside the latest evaluation,
    but no walk verdict of an earlier evaluation: the walks stop at the first lost line, and an
    old verdict at a budget not walked now would read as this network's."""
    run = check_config(
        compose_train_config(tiny_run_overrides("eval.perfect_budgets=[0]", "eval.every=1"))
    )
    passed = {"perfect": {"worst_as_first": 0, "worst_as_second": 0}, "optimal_rate": 1.0}
    monkeypatch.setattr("ultimate_rl.train.loop.evaluate_network", lambda *_: dict(passed))
    stale = {key(800, 1): 0, "elo": 1234.0}
    learner = SimpleNamespace(progress=Progress(iteration=1, last_eval=dict(stale)))
    report = PeriodicEvaluation(run, scrambled, None, lambda _: tmp_path)(learner)
    last = learner.progress.last_eval
    assert key(800, 1) not in last and last["elo"] == 1234.0
    assert last[key(0, 0)] == report[key(0, 0)] is not None


def uniform(planes: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(masks.shape, np.float32), np.zeros(len(masks), np.float32)


def test_actors_read_the_book_as_it_grows(tmp_path: Path):
    game = make("tictactoe")
    path = tmp_path / "book.npy"
    settings = SelfPlaySettings(
        parallel_games=4, games_per_iteration=8, book=BookSettings(str(path), 1.0, walk=True)
    )
    worker = SelfPlayWorker(game, SearchConfig(num_simulations=4), settings)
    rng = np.random.default_rng(0)
    before = worker.play(uniform, 8, rng)  # no walk yet: every game from the start
    assert sum(np.array_equal(s, game.initial_state()) for s in before.states) == 8
    for book in (
        [game.apply_sequence([4, 0])],
        [game.apply_sequence([4, 0]), game.apply_sequence([8])],
    ):
        save_book(path, np.stack(book))
        data = worker.play(uniform, 8, rng)
        firsts = {s.tobytes() for s in data.states if any(np.array_equal(s, b) for b in book)}
        assert firsts == {b.tobytes() for b in book}  # the new book's positions, all of them
        assert not any(np.array_equal(s, game.initial_state()) for s in data.states)


def test_a_share_of_book_games_starts_where_the_walk_lost_a_line(tmp_path: Path):
    game = make("tictactoe")
    path = tmp_path / "book.npy"
    book = BookSettings(str(path), 1.0, walk=True, lost_share=0.5)
    worker = SelfPlayWorker(
        game, SearchConfig(num_simulations=4), SelfPlaySettings(parallel_games=8, book=book)
    )
    anywhere, lost = game.apply_sequence([4, 0]), game.apply_sequence([0, 4, 8])
    save_book(path, np.stack([anywhere]))
    save_book(lost_path(path), np.stack([lost]))
    data = worker.play(uniform, 64, np.random.default_rng(1))
    starts = [sum(np.array_equal(s, b) for s in data.states) for b in (anywhere, lost)]
    assert sum(starts) == 64 and 16 < starts[1] < 48  # about half from the lost positions


def test_a_users_book_that_vanishes_is_named(tmp_path: Path):
    game = make("tictactoe")
    path = tmp_path / "book.npy"
    save_book(path, np.stack([game.apply_sequence([4])]))
    book = BookFile(path, game)
    assert len(book.current()) == 1
    save_book(path, np.zeros((0, len(game.initial_state())), np.int32))  # empty: removed
    assert not path.exists()
    with pytest.raises(BookError, match="no such file"):
        book.current()
    assert BookFile(path, game, may_be_absent=True).current() is None


def test_a_run_grows_its_book_and_a_resume_cuts_it_back_to_the_checkpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture
):
    overrides = tiny_run_overrides(
        "selfplay.book.walk=true",
        "selfplay.book.fraction=0.5",
        "selfplay.book.lost_share=0.5",
        "selfplay.book.walk_budgets=[0,2]",
        "selfplay.book.walk_from_optimal=0.01",  # the evaluation's rate reaches the walk
        "selfplay.book.teacher=4",
        "eval.every=1",
        "eval.opponents=[random]",
    )
    train(compose_train_config([*overrides, "train.iterations=2"]), tmp_path)
    book = np.load(tmp_path / BOOK)
    lessons = np.load(walk_book.lessons_path(tmp_path / BOOK))
    assert lessons.shape == (len(book), 9) and np.allclose(lessons.sum(axis=1), 1)
    assert "lesson_policy" in capsys.readouterr().out  # iteration 2 learned from iteration 1's
    progress = load_checkpoint(tmp_path / CHECKPOINT).extra["progress"]
    assert len(book) > 0 and progress["book_rows"] == len(book)
    report = (tmp_path / "evaluations" / "iter_00002.json").read_text()
    assert f'"size": {len(book)}' in report and "lost_lines_second" in report
    walks, lost = json.loads(report)["walk"], np.load(tmp_path / lost_path(BOOK))
    assert set(walks) == {"0", "2"}
    record = IterationRecord(SelfPlayStats(), {}, 0, report=json.loads(report))
    shown = [f"{w['lost_lines_first']}/{w['lost_lines_second']}" for w in walks.values()]
    assert f"lost lines raw {shown[0]} 2 {shown[1]} book {len(book)}" in status_line(
        Progress(iteration=2), 2, record
    )
    lines = [walk["lost_lines_first"] + walk["lost_lines_second"] for walk in walks.values()]
    assert max(lines) <= len(lost) == len(progress["book_lost"]) <= sum(lines)
    assert np.array_equal(lost, book[progress["book_lost"]])
    # as if an evaluation had grown the file after the last checkpoint: the resume cuts it
    np.save(tmp_path / BOOK, np.concatenate([book, book[:1]]))
    train(compose_train_config([*overrides, "train.iterations=3"]), tmp_path)
    grown = np.load(tmp_path / BOOK)
    assert np.array_equal(grown[: len(book)], book)  # the old book first, then the new walk's
    kept = np.load(walk_book.lessons_path(tmp_path / BOOK))
    last = json.loads((tmp_path / "evaluations" / "iter_00003.json").read_text())["book"]
    taught_again = (kept[: len(book)] != lessons).any(axis=1).sum()  # where a walk lost a line
    assert len(kept) == len(grown) and taught_again <= last["lost"] <= last["taught"]
    assert len({s.tobytes() for s in grown}) == len(grown)


def test_a_config_that_cannot_walk_is_named():
    cases = {
        ("game=uttt", "model=resnet_small"): "this is 'uttt'",
        ("selfplay.book.fraction=0",): r"fraction > 0 \(it is 0.0\)",
        ("eval.every=0",): r"eval.every > 0 \(it is 0\)",
        ("selfplay.book.walk_budgets=[0,-1]",): r"counts >= 0 .* it is \[0, -1\]",
        (
            "selfplay.book.walk_from_optimal=0.9",
            "eval.optimal_positions=0",
        ): r"set eval\.optimal_positions > 0",
    }
    walk = ("selfplay.book.walk=true", "selfplay.book.fraction=0.5")
    for problem_overrides, problem in cases.items():
        overrides = tiny_run_overrides(*walk, *problem_overrides)
        with pytest.raises(ConfigError, match=problem):
            check_config(compose_train_config(overrides))


@pytest.mark.parametrize(
    "options",
    [
        {"lost_share": 0.5},
        {"walk_budgets": [0, 32]},
        {"walk_from_optimal": 0.98},
        {"walk_in_order": True},
        {"teacher": 800},
    ],
    ids=["lost_share", "budgets", "from_optimal", "in_order", "teacher"],
)
def test_a_walk_option_without_the_walk_is_named(options: dict):
    with pytest.raises(ValueError, match=r"needs selfplay\.book\.walk=true"):
        BookSettings("book.npy", 0.5, **options)


def test_a_teacher_makes_the_walks_positions_lessons_of_its_search(tmp_path: Path):
    """``selfplay.book.teacher``: each position a walk meets gets the agent search's visits at
    the teacher's budget, row for row with the book; a row a walk lost is taught again; the
    lessons of a resumed book are cut back with it."""
    game, path = make("tictactoe"), tmp_path / "book.npy"
    elsewhere = game.apply_sequence([0, 4, 8, 2])  # in the starting book, met by no walk
    save_book(tmp_path / "start.npy", elsewhere[None])
    settings = BookSettings(str(tmp_path / "start.npy"), walk=True, teacher=8)
    learner = SimpleNamespace(progress=Progress())
    book = RunBook(path, game, settings, learner)
    assert book.lesson_batch(4, np.random.default_rng(0), None) is None  # nothing taught yet
    found = book.grow(scrambled, 1.0)
    lessons = np.load(walk_book.lessons_path(path))
    assert lessons.shape == (len(book.states), game.num_actions) == (found["book"]["size"], 9)
    assert not lessons[0].any()  # the starting book's row: no walk met it
    walked = {s.tobytes() for side in (0, 1) for s in walk_at_stake(game, scrambled, side).at_stake}
    taught = lessons[1:].sum(axis=1) > 0
    assert taught.all() and {s.tobytes() for s in book.states[1:]} == walked
    assert found["book"]["taught"] == len(walked)
    searched = walk_book.search_lessons(game, scrambled, book.states[1:], 8)
    np.testing.assert_allclose(lessons[1:], searched)
    legal = np.stack([game.legal_mask(s) for s in book.states[1:]])
    assert np.all(lessons[1:][~legal] == 0) and np.allclose(lessons[1:].sum(axis=1), 1)
    batch = book.lesson_batch(64, np.random.default_rng(0), game.symmetries)
    assert batch is not None and batch.targets["policies"].sum(axis=1).min() > 0.99
    assert set(batch.targets) == {"policies", "full_search"}
    again = book.grow(scrambled, 1.0)  # nothing new: only the lost rows are taught again
    assert again["book"]["taught"] == again["book"]["lost"] > 0
    learner.progress.book_rows, learner.progress.book_lost = 3, []  # a checkpoint of 3 rows
    resumed = RunBook(path, game, settings, learner)
    assert np.array_equal(resumed.lessons, lessons[:3]) and len(resumed.taught) == 2


def test_the_learner_fits_the_lessons_policy(tmp_path: Path):
    """A lesson batch joins every step with the policy loss alone: the raw policy moves to it."""
    run = check_config(
        compose_train_config(tiny_run_overrides("optim.lr=0.01", "optim.warmup_steps=0"))
    )
    game = run.game
    state = game.apply_sequence([4])
    lesson = np.zeros(game.num_actions, np.float32)
    lesson[7] = 1.0  # an edge, which the untrained network has no reason to prefer

    def lessons(size, rng, symmetries):
        planes, masks = game.encode(state)[None], game.legal_mask(state)[None]
        targets = {"policies": lesson[None], "full_search": np.ones(1, bool)}
        return Batch(
            planes.repeat(size, 0),
            masks.repeat(size, 0),
            {name: value.repeat(size, 0) for name, value in targets.items()},
        )

    def edge_probability(taught: bool) -> tuple[float, dict]:
        learner = Learner(run, torch.device("cpu"))
        learner.add(
            SelfPlayWorker(game, run.search, run.selfplay).play(
                make_evaluator(learner.model, "cpu", backend="torch"), 4, np.random.default_rng(0)
            )
        )
        learner.lessons = lessons if taught else None
        terms = learner.train_steps(40)
        with torch.no_grad():
            logits = learner.model(torch.from_numpy(game.encode(state)[None]))["policy"][0]
        logits[~torch.from_numpy(game.legal_mask(state))] = -torch.inf
        return float(torch.softmax(logits, 0)[7]), terms

    untaught, terms = edge_probability(False)
    assert "loss/lesson_policy" not in terms
    taught, terms = edge_probability(True)
    assert taught > 0.9 > untaught and terms["loss/lesson_policy"] > 0


def test_missed_lessons_are_drawn_at_their_share(tmp_path: Path):
    """``selfplay.book.missed_share``: each walk finds the lessons whose top move the raw policy
    does not play (under half the lesson's top visits), a batch draws its share from them, and a
    resume keeps them."""
    game, path = make("tictactoe"), tmp_path / "book.npy"
    settings = BookSettings("", walk=True, teacher=8, missed_share=1.0)
    learner = SimpleNamespace(progress=Progress())
    book = RunBook(path, game, settings, learner)
    found = book.grow(scrambled, 1.0)
    expected = []
    for row, (state, lesson) in enumerate(zip(book.states, book.lessons, strict=True)):
        mask = game.legal_mask(state)
        logits, _ = scrambled(game.encode(state)[None], mask[None])
        top = int(np.flatnonzero(mask)[np.argmax(logits[0][mask])])
        if lesson[top] < 0.5 * lesson.max():
            expected.append(row)
    assert 0 < len(expected) < len(book.states)  # the fixed network misses some, not all
    assert book.missed.tolist() == expected == learner.progress.book_missed
    assert found["book"]["missed"] == len(expected)
    batch = book.lesson_batch(64, np.random.default_rng(0), None)
    missed = {lesson.tobytes() for lesson in book.lessons[expected]}
    assert all(p.tobytes() in missed for p in batch.targets["policies"])
    resumed = RunBook(path, game, settings, learner)
    assert resumed.missed.tolist() == expected
    with pytest.raises(ValueError, match=r"missed_share > 0 needs selfplay\.book\.teacher > 0"):
        BookSettings("", walk=True, missed_share=0.5)


def test_the_book_and_the_verdict_walk_positions_not_games(ttt_positions):
    """The verdict walks each position on a fresh tree, as the agent of a network it judges
    perfect plays (``NetworkAgent``): where every position's search holds (X with this network
    at 8 simulations) and only its games with the tree kept lose, the book's walk holds, and
    its lost rows are the positions lost on a fresh tree (O's), none of the games'."""
    game = make("tictactoe")
    evaluate = noisy_exact_network(game, ttt_positions, 1)
    games = walk_at_stake(game, evaluate, 0, 8, in_games=True)
    assert games.worst == -1 and games.lost.any()  # kept trees would lose as X
    grown = grow_book(EMPTY_BOOK, game, evaluate, [8])
    figures = grown.figures
    assert figures[key(8, 0)] == 0 and figures[key(8, 1)] == -1
    assert not any("in_games" in name for name in [*figures, *figures["walk"]["8"]])
    fresh_o = walk_at_stake(game, evaluate, 1, 8)
    lost_rows = {grown.states[row].tobytes() for row in grown.lost}
    assert lost_rows == {s.tobytes() for s in fresh_o.at_stake[fresh_o.lost]}
