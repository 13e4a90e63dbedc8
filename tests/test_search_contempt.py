"""Contempt (``search.contempt``): a draw counts ``-contempt`` for the side the search plays for,
finished or proven early by the game's ``dead_draw`` kernel (uttt: no big-board line left)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import constant_value

from ultimate_rl.games import kernels, make
from ultimate_rl.games.kernels import uttt as ku
from ultimate_rl.search import ALGORITHMS, BatchedSearch, SearchConfig, SearchError
from ultimate_rl.train.config import ConfigError, check_config
from ultimate_rl.train.run import compose_train_config


def _random_states(game, games: int, seed: int = 0):
    """Every position of ``games`` random games, with each game's final state."""
    rng = np.random.default_rng(seed)
    for _ in range(games):
        state, seen = game.initial_state(), []
        while not game.is_terminal(state):
            seen.append(state)
            state = game.apply(state, int(rng.choice(game.legal_actions(state))))
        for position in seen:
            yield position, state


def test_a_uttt_dead_draw_only_ever_ends_drawn():
    game = make("uttt")
    rng = np.random.default_rng(1)
    dead = 0
    for position, _ in _random_states(game, 150):
        if not kernels.dead_draw(position):
            continue
        dead += 1
        for _ in range(5):  # random continuations of a dead position: every one a draw
            state = position
            while not game.is_terminal(state):
                state = game.apply(state, int(rng.choice(game.legal_actions(state))))
            assert game.winner(state) is None
    assert dead > 50  # random games die often before their last move


def test_a_uttt_position_with_a_line_left_is_not_dead():
    game = make("uttt")
    assert not kernels.dead_draw(game.initial_state())
    # a random game won by a player: none of its positions was dead
    for position, final in _random_states(game, 60, seed=2):
        if game.winner(final) is not None:
            assert not kernels.dead_draw(position)


def test_a_uttt_dead_draw_by_hand():
    """Nine open boards, each with one empty cell and no line left to either player: dead. Free
    boards 3, 4 and 5 of O's marks and X may win the middle row: alive."""
    game = make("uttt")
    state = game.initial_state()
    x_marks, o_marks = 0b001100011, 0b010011100  # cells {0, 1, 5, 6} and {2, 3, 4, 7}
    assert not ku.OPEN_LINE[x_marks] and not ku.OPEN_LINE[o_marks]  # each blocks every line
    for board in range(9):
        state[ku.X_CELLS + board], state[ku.O_CELLS + board] = x_marks, o_marks
    assert kernels.dead_draw(state)
    state[ku.O_CELLS + 4] = 0
    assert kernels.dead_draw(state)  # one winnable board is no line
    state[ku.O_CELLS + 3] = state[ku.O_CELLS + 5] = 0
    assert not kernels.dead_draw(state)
    state[ku.O_CELLS + 4], state[ku.WON_X] = o_marks, 1 << 4  # board 4 won by X instead
    state[ku.CLOSED] = 1 << 4
    assert not kernels.dead_draw(state)


def test_games_without_their_own_dead_draw_never_tell_one():
    game = make("tictactoe")
    assert not any(kernels.dead_draw(position) for position, _ in _random_states(game, 30))


def _last_move_draws(game, seed: int = 0) -> np.ndarray:
    """A tic-tac-toe position of random play with one legal move left, which draws."""
    for position, final in _random_states(game, 200, seed):
        if len(game.legal_actions(position)) == 1 and game.winner(final) is None:
            return position
    raise AssertionError("no such position")


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("contempt", [0.0, 0.3])
def test_a_finished_draw_counts_minus_contempt_for_the_searching_side(algorithm, contempt):
    game = make("tictactoe")
    state = _last_move_draws(game)
    (move,) = game.legal_actions(state)
    mover = game.current_player(state)
    config = SearchConfig(algorithm=algorithm, num_simulations=8, contempt=contempt)
    for side, sign in ((mover, -1.0), (1 - mover, 1.0)):
        out = BatchedSearch(game, 1, config, seed=0).search(
            state[None], constant_value(0.0), add_noise=False, side=np.array([side])
        )
        # the mover's view of its only move: a draw, worth -contempt to the side searched for
        assert out.q_values[0, move] == pytest.approx(sign * contempt)


def _position_with_a_dead_and_a_live_move(game) -> tuple[np.ndarray, list[int], list[int]]:
    """A uttt position of random play where some moves leave a dead draw and the others an open
    game (none ends it)."""
    for position, _ in _random_states(game, 100, seed=3):
        moves = [int(a) for a in game.legal_actions(position)]
        after = [game.apply(position, a) for a in moves]
        if any(game.is_terminal(state) for state in after):
            continue
        dead = [a for a, state in zip(moves, after, strict=True) if kernels.dead_draw(state)]
        if dead and len(dead) < len(moves):
            return position, dead, [a for a in moves if a not in dead]
    raise AssertionError("no such position")


def test_contempt_steers_the_search_away_from_dead_draws():
    game = make("uttt")
    state, dead, live = _position_with_a_dead_and_a_live_move(game)
    plain, contempt = (
        BatchedSearch(game, 1, SearchConfig(num_simulations=400, contempt=c), seed=0).search(
            state[None], constant_value(0.0), add_noise=False, temperature=0.0
        )
        for c in (0.0, 0.5)
    )
    # without contempt a dead position is a leaf like another: the network's 0
    np.testing.assert_allclose(plain.q_values[0, dead], 0.0)
    # with it, every visit of a dead move backs up the draw: -0.5 for the mover
    visited = [a for a in dead if contempt.visit_counts[0, a]]
    np.testing.assert_allclose(contempt.q_values[0, visited], -0.5, rtol=1e-6)
    # so the search spends fewer visits there (the opponent, who gains +0.5 by a draw, steers
    # the live moves' lines towards one too: their values fall as well)
    assert contempt.visit_counts[0, dead].sum() < plain.visit_counts[0, dead].sum()
    assert contempt.visit_counts[0, live].sum() > plain.visit_counts[0, live].sum()


def test_tree_reuse_does_not_keep_a_dead_draw_as_the_root():
    game = make("uttt")
    state, dead, _ = _position_with_a_dead_and_a_live_move(game)
    searcher = BatchedSearch(game, 1, SearchConfig(num_simulations=200, contempt=0.5), seed=0)
    searcher.search(state[None], constant_value(0.0), add_noise=False, temperature=0.0)
    after = game.apply(state, dead[0])
    out = searcher.search(after[None], constant_value(0.0), add_noise=False, temperature=0.0)
    assert int(out.action[0]) in game.legal_actions(after)
    assert out.visit_counts[0].sum() > 0


@pytest.mark.parametrize("bad", [-0.1, 1.0, float("nan")])
def test_contempt_outside_its_range_is_refused(bad):
    with pytest.raises(SearchError, match="contempt"):
        SearchConfig(contempt=bad)


def test_training_refuses_contempt_naming_where_it_belongs():
    with pytest.raises(ConfigError, match=r"search\.contempt=0\.2 is for an agent.*load_agent"):
        check_config(compose_train_config(["search.contempt=0.2"]))
