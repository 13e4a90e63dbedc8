"""Numerical tic-tac-toe rules: hand-built positions, a plain-Python referee, errors, encoding."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ultimate_rl.games import GameOverError, IllegalActionError, UnknownGameError, layout, make
from ultimate_rl.games.kernels import numerical_ttt as kn

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


@pytest.fixture(scope="module")
def game():
    return make("numerical_ttt")


def play(game, moves: list[str]) -> np.ndarray:
    return game.apply_sequence([game.string_to_action(m) for m in moves])


def cells(state: np.ndarray) -> list[int]:
    return [int(state[kn.CELLS + c]) for c in range(9)]


def referee_legal(board: list[int], player: int) -> list[int]:
    """Legal actions straight from the rules, independent of the kernels."""
    used = set(board)
    mine = [n for n in range(1, 10) if n % 2 == (1 if player == 0 else 0) and n not in used]
    return sorted(9 * c + n - 1 for c in range(9) if board[c] == 0 for n in mine)


def referee_has_fifteen(board: list[int]) -> bool:
    return any(all(board[c] for c in line) and sum(board[c] for c in line) == 15 for line in LINES)


def test_start_position(game) -> None:
    state = game.initial_state()
    legal = game.legal_actions(state)
    assert len(legal) == 45  # 9 cells x 5 odd numbers
    assert {a % 9 + 1 for a in legal} == {1, 3, 5, 7, 9}
    after = game.apply(state, game.string_to_action("5@5"))
    assert len(game.legal_actions(after)) == 32  # 8 cells x 4 even numbers


def test_line_completed_with_the_opponents_numbers_wins_for_the_mover(game) -> None:
    # even wrote 2 and 4 in the top row; odd completes it with 9: 2 + 4 + 9 = 15
    state = play(game, ["1@9", "2@1", "3@7", "4@2"])
    assert not game.is_terminal(state)
    won = game.apply(state, game.string_to_action("9@3"))
    assert game.winner(won) == 0 and game.returns(won) == 1.0
    assert game.render(won).splitlines()[3] == "odd (first player) won"


def test_mixed_line_wins_for_the_second_player(game) -> None:
    state = play(game, ["1@1", "6@2", "9@5", "8@3"])  # top row 1 + 6 + 8
    assert game.winner(state) == 1 and game.returns(state) == -1.0


def test_full_line_not_summing_to_fifteen_does_not_win(game) -> None:
    state = play(game, ["1@1", "2@2", "3@3"])  # 1 + 2 + 3 = 6
    assert not game.is_terminal(state)
    state = play(game, ["9@1", "2@5", "3@7"])  # diagonal 9 + 2 + empty cell 9; even to move
    assert not game.is_terminal(game.apply(state, game.string_to_action("6@6")))
    assert game.winner(game.apply(state, game.string_to_action("4@9"))) == 1  # 9 + 2 + 4


def test_drawn_game(game) -> None:
    # final board 4 6 3 / 5 1 2 / 8 7 9: line sums 13 8 24 17 14 14 14 12
    moves = ["7@8", "2@6", "5@4", "6@2", "3@3", "4@1", "1@5", "8@7", "9@9"]
    state = play(game, moves[:-1])
    assert not game.is_terminal(state) and game.numbers_left(state, 0) == [9]
    assert game.numbers_left(state, 1) == []
    state = game.apply(state, game.string_to_action(moves[-1]))
    assert game.is_terminal(state) and game.winner(state) is None and game.returns(state) == 0.0
    assert len(game.legal_actions(state)) == 0


def test_illegal_actions_raise(game) -> None:
    state = play(game, ["5@5"])  # even to move
    with pytest.raises(IllegalActionError, match="illegal action"):
        game.apply(state, game.string_to_action("3@1"))  # an odd number: not theirs
    with pytest.raises(IllegalActionError):
        game.apply(state, game.string_to_action("2@5"))  # cell taken
    state = play(game, ["5@5", "2@1"])  # odd to move
    with pytest.raises(IllegalActionError):
        game.apply(state, game.string_to_action("5@9"))  # number used
    with pytest.raises(IllegalActionError):
        game.apply(state, 81)
    won = play(game, ["1@1", "6@2", "9@5", "8@3"])
    with pytest.raises(GameOverError):
        game.apply(won, game.string_to_action("3@9"))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_games_agree_with_referee(game, seed: int) -> None:
    rng = np.random.default_rng(seed)
    state = game.initial_state()
    while True:
        board = cells(state)
        if game.is_terminal(state):
            break
        legal = game.legal_actions(state)
        assert list(legal) == referee_legal(board, game.current_player(state))
        action = int(rng.choice(legal))
        mover = game.current_player(state)
        state = game.apply(state, action)
        after = cells(state)
        assert after[action // 9] == action % 9 + 1 and state[layout.LAST] == action
        if referee_has_fifteen(after):
            assert game.winner(state) == mover
        elif all(after):
            assert game.is_terminal(state) and game.winner(state) is None
        else:
            assert not game.is_terminal(state)
    assert referee_has_fifteen(board) or all(board)


def test_encode_planes(game) -> None:
    assert game.observation_shape == (19, 3, 3)
    state = play(game, ["7@5", "2@1"])  # odd to move
    planes = game.encode(state)
    assert planes.shape == game.observation_shape and planes.dtype == np.float32
    assert planes[6, 1, 1] == 1 and planes[1, 0, 0] == 1 and planes[:9].sum() == 2
    left = [n for n in range(1, 10) if planes[8 + n].all()]
    assert left == [1, 3, 4, 5, 6, 8, 9] and planes[9:18].sum() == 9 * len(left)
    assert planes[18].all()
    assert not game.encode(game.apply(state, game.string_to_action("1@9")))[18].any()


def test_symmetries_are_the_board_ones_with_and_without_n_to_10_minus_n(game) -> None:
    """The first 8 move cells and keep numbers; the last 8 move cells the same way and write
    10 - n for n. (Every symmetry is checked against play in test_game_api.)"""
    assert len(game.symmetries) == 16
    numbers = np.arange(81) % 9 + 1
    board, complemented = game.symmetries[:8], game.symmetries[8:]
    for plain, swapped in zip(board, complemented, strict=True):
        np.testing.assert_array_equal(swapped.action_perm // 9, plain.action_perm // 9)
        np.testing.assert_array_equal(plain.action_perm % 9 + 1, numbers)
        np.testing.assert_array_equal(swapped.action_perm % 9 + 1, 10 - numbers)
    # by hand: even completes 8 1 6 across the top; the complement 2 9 4 wins the same way
    moves = ["1@2", "8@1", "3@5", "6@3"]
    mirrored = ["9@2", "2@1", "7@5", "4@3"]
    actions = [game.string_to_action(m) for m in moves]
    assert [game.action_to_string(a) for a in complemented[0].actions(actions)] == mirrored
    state, moved = play(game, moves), play(game, mirrored)
    assert game.returns(state) == game.returns(moved) == -1.0
    np.testing.assert_array_equal(complemented[0].planes(game.encode(state)), game.encode(moved))
    before = play(game, moves[:3])  # 2 4 5 6 7 9 unused, even to move
    after = complemented[0].planes(game.encode(before))  # 9@2 2@1 7@5 as numbers n at plane n-1
    assert after[9 - 1, 0, 1] == 1 and after[2 - 1, 0, 0] == 1 and after[7 - 1, 1, 1] == 1
    assert after[:9].sum() == 3
    assert [n for n in range(1, 10) if after[8 + n].all()] == [1, 3, 4, 5, 6, 8]
    assert not after[18].any()


def test_action_names_and_render(game) -> None:
    assert game.action_to_string(42) == "7@5" and game.string_to_action(" 7 @ 5 ") == 42
    for a in range(81):  # one notation: what people type reads the machine's names too
        assert game.string_to_action(game.action_to_string(a)) == a
        assert game.parse_move(game.action_to_string(a)) == a
    for bad in ("0@5", "7@0", "74", "x@y"):
        with pytest.raises(UnknownGameError, match="<number 1-9>@<cell 1-9>"):
            game.string_to_action(bad)
    picture = game.render(play(game, ["7@5", "2@1"]))
    assert picture.splitlines() == [
        "2 . .",
        ". 7 .",
        ". . .",
        "odd (first player) to move",
        "odd left: [1, 3, 5, 9]  even left: [4, 6, 8]",
    ]
