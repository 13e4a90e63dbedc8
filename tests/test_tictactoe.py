"""Tic-tac-toe rules: counts, wins against a plain-Python referee, errors, encoding, symmetry."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ultimate_rl.games import (
    GameOverError,
    IllegalActionError,
    InvalidStateError,
    TicTacToe,
    UnknownGameError,
    layout,
    make,
)
from ultimate_rl.games.kernels import tictactoe as kt

SHAPES = [(3, 3), (4, 3), (4, 4), (5, 3), (5, 4), (5, 5)]


def board(state: np.ndarray, size: int) -> np.ndarray:
    """The board as a (size, size) array: 0 empty, 1 first player, 2 second player."""
    cells = np.zeros(size * size, dtype=int)
    for p in (0, 1):
        for c in range(size * size):
            if state[kt.MARKS + p] >> c & 1:
                cells[c] = p + 1
    return cells.reshape(size, size)


def referee_winner(grid: np.ndarray, k: int) -> int:
    """1 or 2 if that player has k in a row, else 0: a direct scan, independent of the kernels."""
    size = grid.shape[0]
    for r in range(size):
        for c in range(size):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(r + i * dr, c + i * dc) for i in range(k)]
                if all(0 <= y < size and 0 <= x < size for y, x in cells):
                    values = {grid[y, x] for y, x in cells}
                    if len(values) == 1 and values != {0}:
                        return values.pop()
    return 0


def test_3x3_has_5478_reachable_positions() -> None:
    game = TicTacToe()
    seen = set()
    frontier = [game.initial_state()]
    while frontier:
        state = frontier.pop()
        key = (int(state[kt.MARKS]), int(state[kt.MARKS + 1]))
        if key in seen:
            continue
        seen.add(key)
        frontier.extend(game.apply(state, int(a)) for a in game.legal_actions(state))
    assert len(seen) == 5478


@pytest.mark.parametrize(("size", "k"), SHAPES)
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_games_agree_with_referee(size: int, k: int, seed: int) -> None:
    game = make("tictactoe", size=size, k=k)
    rng = np.random.default_rng(seed)
    state = game.initial_state()
    while not game.is_terminal(state):
        legal = game.legal_actions(state)
        grid = board(state, size)
        assert list(legal) == list(np.flatnonzero(grid.ravel() == 0))
        mover = game.current_player(state)
        action = int(rng.choice(legal))
        state = game.apply(state, action)
        assert state[layout.LAST] == action
        assert state[layout.MOVES] == np.count_nonzero(board(state, size))
        assert game.current_player(state) == 1 - mover
    grid = board(state, size)
    winner = referee_winner(grid, k)
    if winner:
        assert game.winner(state) == winner - 1
        assert game.returns(state) == (1.0 if winner == 1 else -1.0)
        # the winning line contains the last move: without it there is no line
        without_last = grid.ravel().copy()
        without_last[state[layout.LAST]] = 0
        assert referee_winner(without_last.reshape(size, size), k) == 0
    else:
        assert np.all(grid != 0)
        assert game.winner(state) is None and game.outcome_text(state) == "draw"
    assert len(game.legal_actions(state)) == 0


def test_hand_built_wins_and_draw() -> None:
    game = TicTacToe()
    column = game.apply_sequence([1, 0, 4, 2, 7])  # X on b1 b2 b3
    assert game.winner(column) == 0
    anti_diagonal = game.apply_sequence([0, 2, 1, 4, 8, 6])  # O on c1 b2 a3
    assert game.winner(anti_diagonal) == 1
    draw = game.apply_sequence([0, 4, 8, 1, 7, 6, 2, 5, 3])
    assert game.is_terminal(draw) and game.returns(draw) == 0.0 and game.winner(draw) is None
    four = make("tictactoe", size=4, k=4)
    three_of_four = four.apply_sequence([0, 4, 1, 5, 2, 8])  # X a1 b1 c1, X to move
    assert not four.is_terminal(three_of_four)
    assert four.winner(four.apply_sequence([6], three_of_four)) is None
    assert four.winner(four.apply_sequence([3], three_of_four)) == 0


def test_illegal_actions_raise() -> None:
    game = TicTacToe()
    state = game.apply(game.initial_state(), 4)
    with pytest.raises(IllegalActionError, match="illegal action 4"):
        game.apply(state, 4)
    with pytest.raises(IllegalActionError, match=r"outside 0\.\.8"):
        game.apply(state, 9)
    with pytest.raises(IllegalActionError):
        game.apply(state, -1)
    won = game.apply_sequence([0, 3, 1, 4, 2])
    with pytest.raises(GameOverError, match="first player won"):
        game.apply(won, 8)


@pytest.mark.parametrize(
    "options",
    [
        {"size": 2},
        {"size": 6},
        {"size": "3"},
        {"size": True},
        {"size": 4, "k": 2},
        {"size": 3, "k": 4},
        {"k": 3.0},
    ],
)
def test_bad_options_raise(options: dict) -> None:
    with pytest.raises(UnknownGameError, match=r"tictactoe (size|k)"):
        make("tictactoe", **options)


def test_state_of_another_size_is_rejected() -> None:
    small, large = TicTacToe(), TicTacToe(size=4, k=3)
    with pytest.raises(InvalidStateError, match="size=3 k=3"):
        large.legal_actions(small.initial_state())
    with pytest.raises(InvalidStateError):
        TicTacToe(size=4, k=4).apply(large.initial_state(), 0)


def test_encode_is_from_the_movers_view() -> None:
    game = TicTacToe(size=4, k=3)
    assert game.observation_shape == (3, 4, 4)
    state = game.apply_sequence([5, 10])  # X b2, O c3; X to move
    planes = game.encode(state)
    assert planes.shape == game.observation_shape and planes.dtype == np.float32
    assert planes[0, 1, 1] == 1 and planes[1, 2, 2] == 1 and planes[:2].sum() == 2
    assert np.all(planes[2] == 1)
    after = game.encode(game.apply(state, 0))  # O to move: roles swap
    assert after[0, 2, 2] == 1 and after[1, 1, 1] == 1 and after[1, 0, 0] == 1
    assert np.all(after[2] == 0)


@pytest.mark.parametrize(("size", "k"), [(3, 3), (4, 3), (5, 4)])
def test_symmetries_commute_with_play(size: int, k: int) -> None:
    game = make("tictactoe", size=size, k=k)
    assert len(game.symmetries) == 8
    rng = np.random.default_rng(size * 10 + k)
    for sym in game.symmetries:
        assert sorted(sym.action_perm) == list(range(game.num_actions))
        state, moved = game.initial_state(), game.initial_state()
        while not game.is_terminal(state):
            np.testing.assert_array_equal(sym.planes(game.encode(state)), game.encode(moved))
            np.testing.assert_array_equal(
                sym.policy(game.legal_mask(state)), game.legal_mask(moved)
            )
            action = int(rng.choice(game.legal_actions(state)))
            state, moved = (
                game.apply(state, action),
                game.apply(moved, int(sym.action_perm[action])),
            )
        assert game.is_terminal(moved) and game.returns(moved) == game.returns(state)


def test_action_names_and_render() -> None:
    game = TicTacToe()
    assert [game.action_to_string(a) for a in (0, 4, 5, 8)] == ["a1", "b2", "c2", "c3"]
    for a in range(game.num_actions):
        assert game.string_to_action(game.action_to_string(a)) == a
    assert TicTacToe(size=5, k=4).string_to_action(" E5 ") == 24
    with pytest.raises(UnknownGameError, match=r"a1\.\.c3"):
        game.string_to_action("d1")
    state = game.apply_sequence([4, 0])
    picture = game.render(state)
    assert picture.splitlines()[1] == "1 O . ." and picture.splitlines()[2] == "2 . X ."
    assert picture.endswith("X to move")
    assert game.render(game.apply_sequence([0, 3, 1, 4, 2])).endswith("X won")
