"""UCT baseline: exact wins (MCTS-Solver), strength against random play, budgets, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from ultimate_rl.games import layout, make
from ultimate_rl.search.uct import UCT

# Positions reached by seeded random play, as move lists; the tests re-derive their winning moves
# by brute force, so a fixture that stopped being a forced win would fail, not pass silently.
UTTT_WIN_IN_ONE = [
    [38, 22, 43, 71, 72, 1, 16, 70, 64, 11, 25, 66, 29, 24, 56, 20, 53, 77, 45, 0, 8, 79, 69, 59,
     51, 57, 31, 42, 54, 3, 27, 5, 52, 63, 4, 39, 35, 74, 44, 75],
    [38, 22, 43, 71, 72, 1, 16, 70, 64, 11, 25, 66, 29, 24, 56, 20, 53, 77, 45, 0, 8, 79, 69, 59,
     51, 57, 31, 42, 54, 3, 27, 5, 52, 63, 4, 39, 35, 74, 44, 75, 2, 65, 7, 67, 37, 13],
]  # fmt: skip
UTTT_WIN_IN_TWO = [
    [79, 69, 62, 72, 6, 56, 22, 44, 74, 24, 55, 11, 26, 76, 40, 38, 18, 3, 32, 49, 42, 58, 41, 52,
     71, 77, 45, 7, 66, 34, 65, 29, 2, 36, 5, 51, 61, 64, 14, 53, 75, 30, 35, 78, 59, 54, 4, 43,
     70, 63, 12, 31],
    [61, 70, 69, 55, 13, 43, 65, 19, 12, 27, 1, 16, 68, 52, 71, 79, 23, 48, 32, 46, 17, 72, 7, 45,
     2, 25, 33, 60, 62, 74, 21, 29, 24, 58, 42, 59, 53, 80, 78, 54, 0, 36, 30, 35, 77, 49, 40, 39,
     34, 9, 31, 41, 26, 76, 44, 56],
    [31, 44, 77, 50, 49, 39, 29, 22, 38, 25, 71, 75, 33, 55, 14, 46, 9, 1, 10, 17, 73, 16, 64, 13,
     43, 63, 0, 3, 37, 12, 5, 45, 7, 65, 18, 4, 36, 2, 19, 11, 21, 72, 8, 76, 69, 56, 23, 47, 20,
     60, 61, 67, 74, 78, 54, 6, 59, 68, 58, 70],
    [77, 48, 31, 42, 62, 73, 10, 12, 35, 76, 36, 3, 34, 64, 11, 26, 72, 6, 58, 43, 71, 75, 28, 17,
     79, 69, 54, 8, 78, 14, 51, 37, 15, 23, 47, 22, 44, 74, 21, 4, 38, 20, 1, 13, 40, 49],
]  # fmt: skip


def _won_by_mover(game, state, action) -> bool:
    after = game.apply(state, int(action))
    return game.winner(after) == game.current_player(state)


def _wins_in_one(game, state) -> set[int]:
    return {int(a) for a in game.legal_actions(state) if _won_by_mover(game, state, a)}


def _wins_in_two(game, state) -> set[int]:
    """Moves after which every reply loses at once or allows an immediate win."""
    winning = set()
    for a in game.legal_actions(state):
        after = game.apply(state, int(a))
        if game.is_terminal(after):
            continue
        if all(
            game.winner(reply := game.apply(after, int(r))) == game.current_player(state)
            or (not game.is_terminal(reply) and _wins_in_one(game, reply))
            for r in game.legal_actions(after)
        ):
            winning.add(int(a))
    return winning


@pytest.fixture(scope="module")
def uttt():
    return make("uttt")


@pytest.fixture(scope="module")
def ttt():
    return make("tictactoe")


@pytest.mark.parametrize("moves", UTTT_WIN_IN_ONE)
def test_uct_takes_a_win_in_one_in_uttt(uttt, moves):
    state = uttt.apply_sequence(moves)
    winning = _wins_in_one(uttt, state)
    assert winning, "fixture is no longer a win in one"
    result = UCT(num_simulations=300, seed=0).search(state)
    assert result.action in winning
    assert result.proven and result.root_value == 1.0


@pytest.mark.parametrize("moves", UTTT_WIN_IN_TWO)
def test_uct_finds_a_forced_win_in_two_in_uttt(uttt, moves):
    state = uttt.apply_sequence(moves)
    assert not _wins_in_one(uttt, state), "fixture has a quicker win"
    winning = _wins_in_two(uttt, state)
    assert winning, "fixture is no longer a win in two"
    result = UCT(num_simulations=3000, seed=0).search(state)
    assert result.action in winning
    assert result.proven and result.root_value == 1.0


def test_uct_wins_and_blocks_in_tictactoe(ttt):
    uct = UCT(num_simulations=500, seed=1)
    win = ttt.apply_sequence([0, 3, 1, 4])  # X to move: 2 completes the top row
    assert uct.search(win).action == 2
    block = ttt.apply_sequence([0, 4, 1])  # O to move: everything but 2 loses
    result = uct.search(block)
    assert result.action == 2
    assert result.proven and result.root_value == 0.0  # the solver proves the draw


def test_uct_avoids_a_proven_loss_when_all_other_moves_are_tried(ttt):
    state = ttt.apply_sequence([0, 1, 4])  # X threatens the diagonal: every O move but 8 loses
    result = UCT(num_simulations=2000, seed=2).search(state)
    assert result.action == 8


def test_uct_1000_simulations_beats_random_95_of_100(uttt):
    # about 20 s on a busy 2-core machine: under the suite's budget, so it is not marked slow
    assert _play_against_random(uttt, simulations=1000, games=100, seed=0) >= 95


def _play_against_random(game, simulations: int, games: int, seed: int) -> int:
    rng = np.random.default_rng(seed)
    uct = UCT(num_simulations=simulations, seed=seed)
    wins = 0
    for g in range(games):
        uct_player = g % 2
        state = game.initial_state()
        while not game.is_terminal(state):
            if game.current_player(state) == uct_player:
                action = uct.search(state).action
            else:
                action = int(rng.choice(game.legal_actions(state)))
            state = game.apply(state, action)
        wins += game.winner(state) == uct_player
    return wins


def test_results_are_reproducible_and_consistent(uttt):
    state = uttt.apply_sequence([40, 36])
    first = UCT(num_simulations=1500, seed=7).search(state)
    again = UCT(num_simulations=1500, seed=7).search(state)
    np.testing.assert_array_equal(first.visit_counts, again.visit_counts)
    assert first.action == again.action
    assert first.simulations == 1500 == first.visit_counts.sum()  # the tree grew past 4,096 nodes
    assert np.flatnonzero(first.visit_counts).tolist() == uttt.legal_actions(state).tolist()
    assert -1.0 <= first.root_value <= 1.0


def test_time_budget_stops_the_search(uttt):
    result = UCT(time_per_move=0.05, seed=0).search(uttt.initial_state())
    assert result.simulations > 0
    assert result.visit_counts.sum() == result.simulations
    capped = UCT(num_simulations=10, time_per_move=10.0, seed=0).search(uttt.initial_state())
    assert capped.simulations == 10


def test_uct_plays_numerical_tictactoe():
    game = make("numerical_ttt")
    state = game.initial_state()
    result = UCT(num_simulations=200, seed=0).search(state)
    assert game.legal_mask(state)[result.action]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"num_simulations": 0}, "num_simulations"),
        ({"num_simulations": -5}, "num_simulations"),
        ({"time_per_move": 0.0}, "time_per_move"),
        ({"time_per_move": -1.0}, "time_per_move"),
        ({"exploration": -0.1}, "exploration"),
        ({"exploration": float("nan")}, "exploration"),
    ],
)
def test_bad_settings_raise(options, message):
    with pytest.raises(ValueError, match=message):
        UCT(**options)


def test_bad_states_raise(ttt):
    uct = UCT(num_simulations=10)
    with pytest.raises(ValueError, match="int32"):
        uct.search(ttt.initial_state().astype(np.int64))
    finished = ttt.apply_sequence([0, 3, 1, 4, 2])
    assert finished[layout.STATUS] != layout.ONGOING
    with pytest.raises(ValueError, match="finished"):
        uct.search(finished)


def test_search_leaves_the_state_untouched(ttt):
    state = ttt.apply_sequence([4])
    copy = state.copy()
    UCT(num_simulations=100).search(state)
    np.testing.assert_array_equal(state, copy)
