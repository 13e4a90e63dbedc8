"""A self-play book (``selfplay.book``): games start at its positions; bad files are named; a
grown book is read again checking only its new rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ultimate_rl.games import make
from ultimate_rl.search import SearchConfig
from ultimate_rl.selfplay.book import BookError, BookFile, load_book, save_book
from ultimate_rl.selfplay.schema import BookSettings, SelfPlaySettings
from ultimate_rl.selfplay.worker import SelfPlayWorker
from ultimate_rl.train import ConfigError, check_config
from ultimate_rl.train.run import compose_train_config


def uniform(planes: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(masks.shape, np.float32), np.zeros(len(masks), np.float32)


def write_book(tmp_path: Path, states: list[np.ndarray]) -> Path:
    path = tmp_path / "book.npy"
    np.save(path, np.stack(states))
    return path


def test_games_start_at_the_books_positions(tmp_path: Path):
    game = make("tictactoe")
    book = [game.apply_sequence([4, 0]), game.apply_sequence([0, 8, 2])]
    path = write_book(tmp_path, book)
    settings = SelfPlaySettings(
        parallel_games=4, games_per_iteration=16, book=BookSettings(str(path), 1.0)
    )
    worker = SelfPlayWorker(game, SearchConfig(num_simulations=8), settings)
    data = worker.play(uniform, 16, np.random.default_rng(3))
    # a game's first recorded position is a book position (two and three moves in)
    firsts = [s for s in data.states if any(np.array_equal(s, b) for b in book)]
    assert len(firsts) == data.stats.games == 16
    assert {len(game.legal_actions(s)) for s in firsts} == {7, 6}  # both were drawn
    assert not any(np.array_equal(s, game.initial_state()) for s in data.states)


def test_a_bad_book_is_named_with_the_fix(tmp_path: Path):
    game = make("tictactoe")
    with pytest.raises(BookError, match="no such file"):
        load_book(tmp_path / "missing.npy", game)
    np.save(tmp_path / "flat.npy", np.zeros(5, np.int32))
    with pytest.raises(BookError, match=r"shape \(5,\)"):
        load_book(tmp_path / "flat.npy", game)
    other = write_book(tmp_path, [make("uttt").initial_state()])
    with pytest.raises(BookError, match="row 0 is not a tictactoe state"):
        load_book(other, game)
    won = write_book(tmp_path, [game.apply_sequence([0, 3, 1, 4, 2])])
    with pytest.raises(BookError, match="row 0 is a finished game"):
        load_book(won, game)
    with pytest.raises(
        ValueError, match=r"selfplay\.book\.fraction > 0 needs selfplay\.book\.path"
    ):
        BookSettings(fraction=0.5)


def test_a_grown_book_checks_only_its_new_rows(tmp_path: Path, monkeypatch):
    game, path = make("tictactoe"), tmp_path / "book.npy"
    old = [game.apply_sequence([4]), game.apply_sequence([0])]
    new, won = game.apply_sequence([8]), game.apply_sequence([0, 3, 1, 4, 2])
    checked: set[bytes] = set()
    check_state = game.check_state
    monkeypatch.setattr(game, "check_state", lambda s: checked.add(s.tobytes()) or check_state(s))

    def read_checking(states: list[np.ndarray]) -> set[bytes]:
        save_book(path, np.stack(states))
        checked.clear()
        assert np.array_equal(book.current(), np.stack(states))
        return set(checked)

    book = BookFile(path, game)
    assert read_checking(old) == {s.tobytes() for s in old}
    assert read_checking([*old, new]) == {new.tobytes()}  # appended: only the new row
    with pytest.raises(BookError, match="row 3 is a finished game"):  # new rows still checked
        read_checking([*old, new, won])
    rewritten = [old[1], new]  # not the rows read before: every row checked again
    assert read_checking(rewritten) == {s.tobytes() for s in rewritten}


def test_the_config_check_reads_the_book(tmp_path: Path):
    missing = tmp_path / "missing.npy"
    overrides = ["game=tictactoe", f"selfplay.book.path={missing}", "selfplay.book.fraction=0.5"]
    with pytest.raises(ConfigError, match=r"selfplay\.book\.path .*no such file"):
        check_config(compose_train_config(overrides))
    path = write_book(tmp_path, [make("tictactoe").apply_sequence([4])])
    overrides[1] = f"selfplay.book.path={path}"
    assert check_config(compose_train_config(overrides)).selfplay.book.fraction == 0.5
