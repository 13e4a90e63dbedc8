"""Mixed leaf values (``search.rollouts``): playouts from each new leaf, mixed into the network's
value by ``rollout_weight``, in both algorithms and every game."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import constant_value

from ultimate_rl.games import GAMES, layout, make
from ultimate_rl.search import ALGORITHMS, BatchedSearch, SearchConfig, SearchError
from ultimate_rl.search.config import ROLLOUT_POLICIES
from ultimate_rl.selfplay.schema import SelfPlaySettings
from ultimate_rl.selfplay.worker import SelfPlayWorker


def _last_move_wins(game, mover: int, seed: int = 0) -> np.ndarray:
    """A position of random play with one legal move left, which wins for ``mover`` (to move):
    every playout from it ends the same way."""
    rng = np.random.default_rng(seed)
    while True:
        state = game.initial_state()
        while not game.is_terminal(state):
            legal = game.legal_actions(state)
            if len(legal) == 1 and game.current_player(state) == mover:
                last = game.apply(state, int(legal[0]))
                if game.winner(last) == mover:
                    return state
            state = game.apply(state, int(rng.choice(legal)))


@pytest.mark.parametrize(
    ("options", "mover"),
    [({}, 0), ({"size": 4, "k": 4}, 1)],  # 3x3: X has the last move; 4x4: O has it
)
@pytest.mark.parametrize("weight", [0.25, 1.0])
@pytest.mark.parametrize("policy", ROLLOUT_POLICIES)
def test_a_new_leaf_backs_up_the_mix_of_network_and_playouts(options, mover, weight, policy):
    game = make("tictactoe", **options)
    state = _last_move_wins(game, mover)
    config = SearchConfig(
        num_simulations=1, rollouts=8, rollout_weight=weight, rollout_policy=policy
    )
    searcher = BatchedSearch(game, 1, config, seed=0)
    searcher.search(state[None], constant_value(-0.5), add_noise=False)
    # the root was a new leaf: the network says -0.5 for the mover, every playout +1
    assert searcher._forest.raw_value[0, 0] == pytest.approx((1 - weight) * -0.5 + weight * 1.0)


def test_without_rollouts_the_weight_changes_nothing():
    game = make("uttt")
    state = game.apply_sequence([40, 36, 4])
    outputs = [
        BatchedSearch(game, 1, SearchConfig(num_simulations=64, rollout_weight=w), seed=1).search(
            state[None], constant_value(0.3), add_noise=False
        )
        for w in (0.0, 0.5, 1.0)
    ]
    for out in outputs[1:]:
        np.testing.assert_array_equal(out.visit_counts, outputs[0].visit_counts)
        np.testing.assert_array_equal(out.q_values, outputs[0].q_values)


def test_playouts_are_seeded_and_change_the_search():
    game = make("uttt")
    state = game.apply_sequence([40, 36, 4])

    def run(seed, rollouts):
        config = SearchConfig(num_simulations=200, rollouts=rollouts, leaves_per_tree=4)
        return BatchedSearch(game, 1, config, seed=seed).search(
            state[None], constant_value(0.0), add_noise=False
        )

    first, again, other = run(3, 4), run(3, 4), run(4, 4)
    np.testing.assert_array_equal(first.visit_counts, again.visit_counts)
    np.testing.assert_array_equal(first.q_values, again.q_values)
    assert not np.array_equal(first.q_values, other.q_values)  # another seed, other playouts
    # the network alone says 0 everywhere: only the playouts can make the root value move
    assert run(3, 0).root_value[0] == 0.0 and first.root_value[0] != 0.0


def test_finished_games_keep_their_exact_value():
    game = make("tictactoe")
    state = game.apply_sequence([0, 3, 1, 4])  # X wins at 2
    config = SearchConfig(num_simulations=50, temperature=0.0, rollouts=4, rollout_weight=1.0)
    out = BatchedSearch(game, 1, config, seed=0).search(
        state[None], constant_value(-1.0), add_noise=False
    )
    assert out.action[0] == 2 and out.q_values[0, 2] == 1.0


@pytest.mark.parametrize("policy", ROLLOUT_POLICIES)
@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_game_and_algorithm_searches_with_rollouts(name, algorithm, policy):
    game = make(name)
    states = np.stack([game.initial_state()] * 2)
    config = SearchConfig(
        algorithm=algorithm, num_simulations=32, rollouts=2, rollout_policy=policy
    )
    out = BatchedSearch(game, 2, config, seed=0).search(states, constant_value(0.0), False)
    assert (out.simulations == 32).all()
    assert np.isfinite(out.root_value).all() and (np.abs(out.root_value) <= 1).all()
    assert out.policy_target.sum(axis=1) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"rollouts": -1}, "rollouts must be >= 0"),
        ({"rollouts": 1.5}, "rollouts must be an int"),
        ({"rollouts": True}, "rollouts must be an int"),
        ({"rollout_weight": 1.5}, "rollout_weight must be in"),
        ({"rollout_weight": float("nan")}, "rollout_weight must be in"),
        ({"rollout_policy": "smart"}, "rollout_policy must be one of"),
    ],
)
def test_bad_rollout_options_raise(options, message):
    with pytest.raises(SearchError, match=message):
        SearchConfig(**options)


def test_selfplay_searches_with_mixed_values():
    """``search.rollouts`` in a training config reaches self-play's searches: with a network
    that says 0 everywhere, only the playouts can move the root values of the openings (no
    game ends within 8 simulations of them)."""
    game = make("tictactoe")
    settings = SelfPlaySettings(parallel_games=4)
    for rollouts, moved in ((0, False), (4, True)):
        config = SearchConfig(num_simulations=8, rollouts=rollouts, rollout_weight=1.0)
        worker = SelfPlayWorker(game, config, settings)
        data = worker.play(constant_value(0.0), 8, np.random.default_rng(0))
        opening = data.states[:, layout.MOVES] < 3
        assert np.any(data.root_values[opening] != 0) == moved
