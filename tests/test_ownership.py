"""The ownership target: each game's planes against hand-made final positions (both movers'
views), and its symmetries moving a position's ownership as they move the position."""

from __future__ import annotations

import numpy as np
import pytest

from ultimate_rl.games import layout, make
from ultimate_rl.games.base import Game
from ultimate_rl.games.kernels import uttt as ku
from ultimate_rl.games.ownership import movers_view, transformed

CLASSES = {"X": 0, "O": 1, ".": 2}  # a cell: the first player's, the second's, empty


def grid(rows: str) -> list[int]:
    """A drawn board (one string per row, spaces ignored) as first-player-view classes."""
    return [CLASSES[c] for c in rows.replace(" ", "")]


def both_views(game: Game, state: np.ndarray, expected: list[int]) -> None:
    """``state``'s ownership is ``expected`` for a first-player mover, and the same with the
    players' classes swapped for a second-player mover."""
    final = game.final_ownership(state)
    np.testing.assert_array_equal(final, expected)
    swap = [{0: 1, 1: 0}.get(c, c) for c in expected]
    np.testing.assert_array_equal(
        movers_view(final, np.array([0, 1, 0])), [expected, swap, expected]
    )


def test_tictactoe_cells():
    game = make("tictactoe")
    state = game.apply_sequence([0, 4, 1, 8, 2])  # X takes the top row
    assert game.winner(state) == 0
    both_views(game, state, grid("XXX .O. ..O"))


def test_tictactoe_4x4_cells():
    game = make("tictactoe", size=4, k=4)
    state = game.apply_sequence([0, 4, 1, 5, 2, 6, 3])  # X takes the top row
    assert game.winner(state) == 0
    both_views(game, state, grid("XXXX OOO. .... ...."))


def test_numerical_ttt_cells_are_owned_by_the_player_of_their_number():
    game = make("numerical_ttt")
    # odd writes 1 (cell 0), even 8 (centre), odd 5 (cell 1), even 2 (cell 8), odd 9: 1+5+9
    state = game.apply_sequence([0, 9 * 4 + 7, 9 + 4, 9 * 8 + 1, 18 + 8])
    assert game.winner(state) == 0
    both_views(game, state, grid("XXX .O. ..O"))


def test_connect_four_cells():
    game = make("connect_four")
    state = game.apply_sequence([0, 1, 0, 1, 0, 1, 0])  # four X down the left column
    assert game.winner(state) == 0
    both_views(game, state, grid("....... ....... X...... XO..... XO..... XO....."))


def uttt_state(x: dict[int, list[int]], o: dict[int, list[int]], won: tuple, closed: int):
    """A uttt state with X's and O's cells per board, the boards won by X and by O (bit masks)
    and the closed ones, X having won the game."""
    state = make("uttt").initial_state()
    for first, cells in ((ku.X_CELLS, x), (ku.O_CELLS, o)):
        for board, marks in cells.items():
            state[first + board] = sum(1 << c for c in marks)
    state[ku.WON_X], state[ku.WON_O], state[ku.CLOSED] = *won, closed
    state[layout.STATUS] = layout.FIRST_WON
    return state


def test_uttt_cells_and_small_boards():
    """X won the top row of small boards, O the centre one; the bottom-right one is drawn (full,
    no line) and the others are open."""
    x = {0: [0, 1, 2], 1: [0, 4, 8], 2: [2, 5, 8], 3: [4], 4: [0, 8], 8: [0, 2, 3, 7, 8]}
    o = {0: [3, 4], 1: [1], 2: [0], 4: [3, 4, 5], 8: [1, 4, 5, 6]}
    state = uttt_state(x, o, (0b000000111, 0b000010000), 0b100010111)
    cells = grid(
        "XXX XO. O.X"
        "OO. .X. ..X"
        "... ..X ..X"
        "... X.. ..."
        ".X. OOO ..."
        "... ..X ..."
        "... ... XOX"
        "... ... XOO"
        "... ... OXX"
    )
    boards = [0, 0, 0, 3, 1, 3, 3, 3, 2]  # X, O, drawn, open (first player's view)
    game = make("uttt")
    both_views(game, state, cells + boards)
    np.testing.assert_array_equal(
        movers_view(game.final_ownership(state), np.array([1]))[0, 81:], [1, 1, 1, 3, 0, 3, 3, 3, 2]
    )


def random_game(game: Game, rng: np.random.Generator) -> list[int]:
    state, actions = game.initial_state(), []
    while not game.is_terminal(state):
        actions.append(int(rng.choice(game.legal_actions(state))))
        state = game.apply(state, actions[-1])
    return actions


@pytest.mark.parametrize(
    "name, options",
    [("uttt", {}), ("tictactoe", {"size": 4, "k": 3}), ("numerical_ttt", {}), ("connect_four", {})],
)
def test_a_symmetry_moves_the_ownership_with_the_position(name: str, options: dict):
    """The ownership of a game played with every move transformed is the original game's
    ownership transformed (numerical tic-tac-toe's n -> 10 - n keeps every cell's owner)."""
    game = make(name, **options)
    rng = np.random.default_rng(1)
    for _ in range(3):
        actions = random_game(game, rng)
        ownership = game.final_ownership(game.apply_sequence(actions))
        for sym in game.symmetries:
            moved = game.apply_sequence([int(a) for a in sym.actions(actions)])
            np.testing.assert_array_equal(
                transformed(sym, ownership, game.ownership_grids), game.final_ownership(moved)
            )
