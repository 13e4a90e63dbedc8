"""Exact solvers: known results, agreement with plain-Python minimax, the position hash, errors."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from ultimate_rl.games import (
    InvalidStateError,
    UnsolvableGameError,
    layout,
    make,
    solve,
)
from ultimate_rl.games.kernels import numerical_ttt as kn
from ultimate_rl.games.kernels import tictactoe as kt
from ultimate_rl.games.solver import (
    _NUMERICAL_TABLE_SIZE,
    ILLEGAL,
    _numerical_index,
    action_values,
)

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


@cache
def tictactoe_minimax(board: tuple[int, ...]) -> int:
    """Value for the player to move of a 3x3 board (0 empty, 1 X, 2 O): plain negamax."""
    if any(board[a] and board[a] == board[b] == board[c] for a, b, c in LINES):
        return -1  # the previous mover completed a line
    if all(board):
        return 0
    mark = 1 if board.count(1) == board.count(2) else 2
    return max(
        -tictactoe_minimax((*board[:c], mark, *board[c + 1 :])) for c in range(9) if not board[c]
    )


@cache
def numerical_minimax(board: tuple[int, ...]) -> int:
    """Value for the player to move of a numerical tic-tac-toe board (cell -> number, 0 empty)."""
    if any(all(board[c] for c in line) and sum(board[c] for c in line) == 15 for line in LINES):
        return -1
    if all(board):
        return 0
    parity = 1 if sum(1 for n in board if n) % 2 == 0 else 0
    numbers = [n for n in range(1, 10) if n % 2 == parity and n not in board]
    return max(
        -numerical_minimax((*board[:c], n, *board[c + 1 :]))
        for c in range(9)
        if not board[c]
        for n in numbers
    )


def api_minimax(game, state: np.ndarray) -> int:
    """Value for the player to move by plain negamax over the public Game API (small trees only)."""
    if game.is_terminal(state):
        return 0 if game.winner(state) is None else -1
    return max(-api_minimax(game, game.apply(state, int(a))) for a in game.legal_actions(state))


def random_position(game, moves: int, rng: np.random.Generator) -> np.ndarray:
    """A position after ``moves`` random moves, or an earlier one if the game ended first."""
    state = game.initial_state()
    for _ in range(moves):
        following = game.apply(state, int(rng.choice(game.legal_actions(state))))
        if game.is_terminal(following):
            break
        state = following
    return state


def test_tictactoe_3x3_is_a_draw_and_every_opening_draws() -> None:
    game = make("tictactoe")
    value, best = solve(game, game.initial_state())
    assert value == 0
    assert best.dtype == np.int64 and list(best) == list(range(9))
    assert solve(game, game.apply_sequence([4, 1]))[0] == 1  # an edge reply to the centre loses
    assert solve(game, game.apply_sequence([4, 0]))[0] == 0  # a corner reply holds


def test_tictactoe_3x3_matches_plain_minimax() -> None:
    game = make("tictactoe")
    rng = np.random.default_rng(3)
    for _ in range(150):
        state = random_position(game, int(rng.integers(0, 8)), rng)
        board = tuple(
            1 if state[kt.MARKS] >> c & 1 else 2 if state[kt.MARKS + 1] >> c & 1 else 0
            for c in range(9)
        )
        value, best = solve(game, state)
        assert value == tictactoe_minimax(board)
        mark = 1 if state[layout.PLAYER] == 0 else 2
        expected = [
            c
            for c in range(9)
            if not board[c] and -tictactoe_minimax((*board[:c], mark, *board[c + 1 :])) == value
        ]
        assert list(best) == expected


def test_tictactoe_4x4_k3_is_a_first_player_win() -> None:
    game = make("tictactoe", size=4, k=3)
    value, best = solve(game, game.initial_state())
    assert value == 1 and len(best) > 0


@pytest.mark.slow  # the whole 4x4 solve: about 14 s of CPU, 45 s wall on a busy 2-core machine
def test_tictactoe_4x4_k4_is_a_draw() -> None:
    game = make("tictactoe", size=4, k=4)
    value, best = solve(game, game.initial_state())
    assert value == 0 and list(best) == list(range(16))
    rng = np.random.default_rng(2)
    for _ in range(8):  # late positions, against a plain search over the Game API
        state = random_position(game, 10, rng)
        value, best = solve(game, state)
        children = {
            int(a): -api_minimax(game, game.apply(state, int(a))) for a in game.legal_actions(state)
        }
        assert value == max(children.values())
        assert list(best) == [a for a, v in children.items() if v == value]


def test_numerical_openings() -> None:
    game = make("numerical_ttt")
    value, best = solve(game, game.initial_state())
    assert value == 1  # the first player wins
    winning = sorted(9 * cell + number - 1 for cell in (1, 3, 5, 7) for number in (1, 3, 7, 9))
    assert list(best) == winning and len(best) == 16
    values = action_values(game, game.initial_state())
    centre = values[9 * 4 : 9 * 5]
    assert list(centre[::2]) == [0, 0, 0, 0, 0]  # any odd number in the centre draws
    assert list(centre[1::2]) == [ILLEGAL] * 4  # the even numbers are not the first player's


def test_numerical_matches_plain_minimax() -> None:
    game = make("numerical_ttt")
    rng = np.random.default_rng(11)
    for _ in range(60):
        state = random_position(game, int(rng.integers(3, 9)), rng)
        board = tuple(int(n) for n in state[kn.CELLS : kn.CELLS + 9])
        value, best = solve(game, state)
        assert value == numerical_minimax(board)
        for a in game.legal_actions(state):
            cell, number = divmod(int(a), 9)
            child = (*board[:cell], number + 1, *board[cell + 1 :])
            assert (-numerical_minimax(child) == value) == (a in best)


def test_numerical_index_is_a_perfect_hash() -> None:
    start = make("numerical_ttt").initial_state()
    rng = np.random.default_rng(5)
    seen: dict[int, tuple[int, ...]] = {}
    for moves in range(10):
        for _ in range(300):
            odd = rng.permutation([1, 3, 5, 7, 9])[: (moves + 1) // 2]
            even = rng.permutation([2, 4, 6, 8])[: moves // 2]
            board = np.zeros(9, dtype=np.int32)
            board[rng.permutation(9)[:moves]] = np.concatenate([odd, even])
            state = start.copy()
            state[kn.CELLS : kn.CELLS + 9] = board
            state[kn.USED] = sum(1 << int(n) for n in board if n)
            index = int(_numerical_index(state))
            assert 0 <= index < _NUMERICAL_TABLE_SIZE
            assert seen.setdefault(index, tuple(board)) == tuple(board)
    assert len(seen) > 1000


def test_terminal_states() -> None:
    game = make("tictactoe")
    won = game.apply_sequence([0, 3, 1, 4, 2])
    value, best = solve(game, won)
    assert value == -1 and best.dtype == np.int64 and len(best) == 0  # the mover has lost
    drawn = game.apply_sequence([0, 4, 8, 1, 7, 6, 2, 5, 3])
    assert solve(game, drawn)[0] == 0 and len(solve(game, drawn)[1]) == 0
    assert np.all(action_values(game, drawn) == ILLEGAL)
    numerical = make("numerical_ttt")
    lost = numerical.apply_sequence([0, 9 + 5, 36 + 8, 18 + 7])  # 1 + 6 + 8 by the even player
    assert solve(numerical, lost)[0] == -1


def test_unsolvable_games_and_bad_states_raise() -> None:
    uttt = make("uttt")
    with pytest.raises(UnsolvableGameError, match="no exact solver"):
        solve(uttt, uttt.initial_state())
    five = make("tictactoe", size=5, k=4)
    with pytest.raises(UnsolvableGameError, match="no exact solver"):
        solve(five, five.initial_state())
    with pytest.raises(InvalidStateError):
        solve(make("tictactoe"), make("tictactoe", size=4, k=3).initial_state())
    with pytest.raises(InvalidStateError):
        solve(make("numerical_ttt"), make("tictactoe").initial_state())
