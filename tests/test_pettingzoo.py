"""PettingZoo AEC versions of the games."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test

from ultimate_rl.envs.pettingzoo import env, raw_env

GAME_CASES = [
    ("uttt", {}),
    ("numerical_ttt", {}),
    ("tictactoe", {}),
    ("tictactoe", {"size": 4, "k": 4}),
]


@pytest.mark.filterwarnings("ignore:Observation:UserWarning")  # dict observations, as PettingZoo's
@pytest.mark.parametrize(("game", "options"), GAME_CASES, ids=["uttt", "numerical", "ttt3", "ttt4"])
def test_api_test(game, options):
    api_test(env(game, **options), num_cycles=300)


def test_win_rewards_and_termination():
    aec = env("tictactoe")
    aec.reset(seed=0)
    for action in [0, 3, 1, 4, 2]:  # player_0 completes the top row
        aec.step(action)
    assert all(aec.terminations.values())
    assert aec.rewards == {"player_0": 1.0, "player_1": -1.0}
    assert aec.unwrapped.game.winner(aec.unwrapped.state_array) == 0


def test_illegal_move_loses_for_the_player_who_made_it():
    aec = env("tictactoe")
    aec.reset(seed=0)
    aec.step(4)
    aec.step(4)  # taken: PettingZoo's wrapper logs a warning and ends the game
    assert all(aec.terminations.values())
    assert aec.rewards["player_1"] == -1 and aec.rewards["player_0"] == 0


def test_observations_take_each_agents_point_of_view():
    aec = raw_env("tictactoe")
    aec.reset(seed=0)
    aec.step(4)  # player_0 takes the centre
    mover, waiting = aec.observe("player_1"), aec.observe("player_0")
    assert mover["action_mask"].sum() == 8 and not waiting["action_mask"].any()
    own, other = 0, 1  # planes of the mover's and the opponent's marks
    assert mover["observation"][other, 1, 1] == 1 and mover["observation"][own, 1, 1] == 0
    assert waiting["observation"][own, 1, 1] == 1 and waiting["observation"][other, 1, 1] == 0


def test_draw_gives_no_reward():
    aec = env("tictactoe")
    aec.reset(seed=0)
    for action in [0, 1, 2, 4, 3, 5, 7, 6, 8]:
        aec.step(action)
    assert all(aec.terminations.values())
    assert aec.rewards == {"player_0": 0.0, "player_1": 0.0}


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
def test_render(mode):
    aec = raw_env("uttt", render_mode=mode)
    aec.reset(seed=0)
    first = aec.render()
    aec.step(40)
    second = aec.render()
    if mode == "rgb_array":
        assert first.dtype == np.uint8 and first.shape == second.shape
        assert not np.array_equal(first, second)
    else:
        assert second == aec.game.render(aec.state_array) and first != second
