"""Gymnasium envs and the vector env: the DESIGN.md environment contract."""

from __future__ import annotations

import itertools
import sys
import types
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env

import ultimate_rl  # noqa: F401  (registers the env IDs)
from ultimate_rl.envs import ENV_IDS, BoardGameEnv, BoardGameVectorEnv
from ultimate_rl.games import IllegalActionError, layout

UTTT = "ultimate_rl/UltimateTicTacToe-v0"
NUMERICAL = "ultimate_rl/NumericalTicTacToe-v0"
TICTACTOE = "ultimate_rl/TicTacToe-v0"

# (env id, game options): every game and every tic-tac-toe size
ENV_CASES = [
    (UTTT, {}),
    (NUMERICAL, {}),
    (TICTACTOE, {}),
    (TICTACTOE, {"size": 4, "k": 3}),
    (TICTACTOE, {"size": 5, "k": 4}),
]
ENV_CASE_IDS = ["uttt", "numerical", "ttt3", "ttt4k3", "ttt5k4"]


def first_legal(game, state) -> int:
    return int(game.legal_actions(state)[0])


class LastLegalAgent:
    def select_action(self, game, state) -> int:
        return int(game.legal_actions(state)[-1])


def random_legal(rng: np.random.Generator, mask: np.ndarray) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def uct_available() -> bool:
    try:
        from ultimate_rl.agents import make

        make("uct", num_simulations=4, seed=0)
    except Exception:
        return False
    return True


OPPONENTS = {
    "random": {"opponent": "random"},
    "self_play": {"opponent": None},
    "callable": {"opponent": first_legal},
    "agent": {"opponent": LastLegalAgent(), "agent_player": "random"},
    "second": {"opponent": "random", "agent_player": 1},
}


@pytest.mark.parametrize("opponent", list(OPPONENTS))
@pytest.mark.parametrize(("env_id", "options"), ENV_CASES, ids=ENV_CASE_IDS)
def test_check_env(env_id, options, opponent):
    env = gym.make(env_id, **options, **OPPONENTS[opponent])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # check_env reports most problems as warnings
        check_env(env.unwrapped, skip_render_check=False)


@pytest.mark.skipif(not uct_available(), reason="the search layer (agents.make('uct')) is missing")
@pytest.mark.parametrize(("env_id", "options"), ENV_CASES[:3], ids=ENV_CASE_IDS[:3])
def test_check_env_mcts_opponent(env_id, options):
    env = gym.make(env_id, **options, opponent="mcts", opponent_options={"num_simulations": 8})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.skipif(not uct_available(), reason="the search layer (agents.make('uct')) is missing")
def test_mcts_opponent_replays_under_a_seed():
    def episodes(seed):
        env = BoardGameEnv(
            "tictactoe", opponent="mcts", opponent_options={"num_simulations": 16}, agent_player=1
        )
        return play_episodes(env, seed, 2)

    assert episodes(4) == episodes(4)


def test_mcts_opponent_without_search_module_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "ultimate_rl.agents", types.ModuleType("ultimate_rl.agents"))
    with pytest.raises(ImportError, match="search module"):
        BoardGameEnv("tictactoe", opponent="mcts")


def test_registered_ids_and_kwargs():
    assert set(ENV_IDS) <= set(gym.registry)
    env = gym.make(TICTACTOE, size=5, k=4)
    assert env.action_space.n == 25
    assert env.observation_space["action_mask"].shape == (25,)
    assert gym.make(UTTT).action_space.n == 81


@pytest.mark.parametrize("agent_player", [0, 1])
@pytest.mark.parametrize(("env_id", "options"), ENV_CASES, ids=ENV_CASE_IDS)
def test_random_game_matches_the_games_result(env_id, options, agent_player):
    env = gym.make(env_id, **options, agent_player=agent_player).unwrapped
    rng = np.random.default_rng(1)
    obs, info = env.reset(seed=3)
    assert info["agent_player"] == agent_player == env.agent_player
    moves, terminated, reward = 0, False, 0.0
    while not terminated:
        assert info["current_player"] == agent_player
        assert np.array_equal(obs["action_mask"].astype(bool), env.action_masks())
        assert np.array_equal(obs["observation"], env.game.encode(env.state))
        obs, reward, terminated, truncated, info = env.step(random_legal(rng, obs["action_mask"]))
        assert not truncated
        moves += 1
        if not terminated:
            assert reward == 0.0
    state = env.state
    assert env.game.is_terminal(state)
    assert state[layout.MOVES] in (2 * moves - 1 + agent_player, 2 * moves + agent_player)
    winner = env.game.winner(state)
    assert reward == (0.0 if winner is None else (1.0 if winner == agent_player else -1.0))
    assert not obs["action_mask"].any()
    with pytest.raises(ResetNeeded, match="reset"):
        env.step(0)


def scripted(moves):
    """An opponent that plays the given moves in order."""
    queue = list(moves)
    return lambda game, state: queue.pop(0)


def test_scripted_win_and_loss_rewards():
    env = BoardGameEnv("tictactoe", opponent=scripted([3, 4]))
    env.reset(seed=0)
    assert env.step(0)[1:3] == (0.0, False)
    assert env.step(1)[1:3] == (0.0, False)
    _, reward, terminated, _, info = env.step(2)  # X completes the top row
    assert (reward, terminated, info["opponent_action"]) == (1.0, True, -1)

    env = BoardGameEnv("tictactoe", opponent=scripted([3, 4, 5]))
    env.reset(seed=0)
    env.step(0)
    env.step(1)
    _, reward, terminated, _, info = env.step(8)  # O answers by completing the middle row
    assert (reward, terminated, info["opponent_action"]) == (-1.0, True, 5)


def test_agent_second_sees_the_opening_move():
    env = BoardGameEnv("tictactoe", opponent=scripted([4]), agent_player=1)
    obs, info = env.reset(seed=0)
    assert info["opponent_action"] == 4 and info["current_player"] == 1
    assert obs["action_mask"][4] == 0 and obs["action_mask"].sum() == 8


def test_opponent_returning_an_illegal_move_is_reported():
    env = BoardGameEnv("tictactoe", opponent=scripted([0]))
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="opponent"):
        env.step(0)


def test_illegal_action_lose_mode():
    env = BoardGameEnv("tictactoe", opponent=scripted([4]))
    env.reset(seed=0)
    env.step(0)
    _obs, reward, terminated, truncated, info = env.step(4)  # taken by the opponent
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["illegal_action"] and "not legal" in info["reason"]
    with pytest.raises(ResetNeeded):
        env.step(1)


def test_illegal_action_raise_mode_leaves_the_episode_running():
    env = BoardGameEnv("tictactoe", opponent=scripted([4, 8]), illegal_action="raise")
    env.reset(seed=0)
    env.step(0)
    before = env.state
    with pytest.raises(IllegalActionError, match="not legal"):
        env.step(4)
    assert np.array_equal(env.state, before)
    assert env.step(1)[1:3] == (0.0, False)


@pytest.mark.parametrize("mode", ["lose", "raise"])
@pytest.mark.parametrize("action", [9, -1, 1.5, True, "3", np.array([1, 2])])
def test_action_outside_the_space_always_raises(mode, action):
    env = BoardGameEnv("tictactoe", illegal_action=mode)
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="action"):
        env.step(action)


def test_numpy_integer_actions_are_accepted():
    env = BoardGameEnv("tictactoe")
    env.reset(seed=0)
    assert env.step(np.int64(4))[2] is False
    assert env.step(np.array(0))[2] is False


def test_step_before_reset_raises():
    with pytest.raises(ResetNeeded, match="reset"):
        BoardGameEnv("tictactoe").step(0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"opponent": "minimax"}, "unknown opponent"),
        ({"agent_player": 2}, "agent_player"),
        ({"agent_player": True}, "agent_player"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"render_mode": "human"}, "render_mode"),
        ({"opponent_options": {"num_simulations": 5}}, "opponent_options"),
    ],
)
def test_bad_constructor_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BoardGameEnv("tictactoe", **kwargs)


def test_unknown_reset_option_raises():
    env = BoardGameEnv("tictactoe")
    with pytest.raises(ValueError, match="reset options"):
        env.reset(options={"side": 1})
    assert env.reset(options={"agent_player": 1})[1]["agent_player"] == 1


def play_episodes(env: BoardGameEnv, seed: int, episodes: int) -> list:
    """Everything an agent sees over some episodes with a fixed random policy."""
    rng = np.random.default_rng(0)
    seen = []
    obs, info = env.reset(seed=seed)
    for _ in range(episodes):
        terminated = False
        seen.append(("reset", info["agent_player"], info["opponent_action"]))
        while not terminated:
            obs, reward, terminated, _, info = env.step(random_legal(rng, obs["action_mask"]))
            seen.append((reward, info["opponent_action"], obs["observation"].tobytes()))
        obs, info = env.reset()
    return seen


def test_seeded_episodes_replay_exactly():
    runs = [BoardGameEnv("uttt", agent_player="random") for _ in range(3)]
    first, again, other = (play_episodes(e, s, 3) for e, s in zip(runs, (5, 5, 6), strict=True))
    assert first == again
    assert first != other


def test_self_play_mode_rewards_the_mover():
    env = BoardGameEnv("tictactoe", opponent=None)
    _, info = env.reset(seed=0)
    assert "agent_player" not in info and info["current_player"] == 0
    for ply, action in enumerate([0, 3, 1, 4, 8]):
        _obs, reward, terminated, _, info = env.step(action)
        assert (reward, terminated, info["opponent_action"]) == (0.0, False, -1)
        assert info["current_player"] == (ply + 1) % 2
    _, reward, terminated, _, info = env.step(5)  # O completes the middle row
    assert (reward, terminated) == (1.0, True)
    assert env.game.winner(env.state) == 1


def test_ansi_render_is_the_games_text():
    env = BoardGameEnv("uttt", render_mode="ansi")
    env.reset(seed=0)
    env.step(40)
    assert env.render() == env.game.render(env.state)


@pytest.mark.parametrize(("env_id", "options"), ENV_CASES, ids=ENV_CASE_IDS)
def test_rgb_pictures_show_the_position(env_id, options):
    env = gym.make(env_id, **options, opponent=None, render_mode="rgb_array").unwrapped
    obs, _ = env.reset(seed=0)
    pictures = [env.render()]
    rng = np.random.default_rng(0)
    for _ in range(3):
        obs, *_ = env.step(random_legal(rng, obs["action_mask"]))
        pictures.append(env.render())
    for picture in pictures:
        assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3
        assert picture.shape == pictures[0].shape and picture.shape[0] % 2 == 0
    assert all(not np.array_equal(a, b) for a, b in itertools.pairwise(pictures))


def test_uttt_picture_shades_a_won_small_board():
    env = BoardGameEnv("uttt", opponent=None, render_mode="rgb_array")
    env.reset(seed=0)
    empty_cell = (44, 44)  # pixel near the corner of row 1, column 1: an empty cell of board 0
    assert np.array_equal(env.render()[empty_cell], (255, 238, 160))  # legal: highlighted
    for action in [1, 9, 2, 18, 0]:  # X takes cells 1, 2, 0 of small board 0; O sends X back
        env.step(action)
    assert env.state[layout.MOVES] == 5
    assert np.array_equal(env.render()[empty_cell], (246, 200, 200))  # won by X: X's tint


def vector_run(env: BoardGameVectorEnv, steps: int, seed: int):
    rng = np.random.default_rng(seed)
    obs, _infos = env.reset(seed=seed)
    for _ in range(steps):
        scores = rng.random(obs["action_mask"].shape) * obs["action_mask"]
        actions = scores.argmax(axis=1)
        result = env.step(actions)
        yield actions, obs, result
        obs = result[0]


@pytest.mark.parametrize(("env_id", "options"), ENV_CASES, ids=ENV_CASE_IDS)
def test_vector_env_steps_boards_like_the_single_env(env_id, options):
    env = gym.make_vec(env_id, num_envs=8, vectorization_mode="vector_entry_point", **options)
    assert isinstance(env, BoardGameVectorEnv)
    assert env.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    game = env.game
    ended = np.zeros(8, dtype=bool)
    episodes = 0
    for _, _, (obs, rewards, terminated, truncated, infos) in vector_run(env, 60, seed=0):
        assert obs in env.observation_space
        assert set(np.unique(rewards)) <= {-1.0, 0.0, 1.0}
        assert not truncated.any()
        states = env.states
        for i in range(8):
            assert np.array_equal(obs["observation"][i], game.encode(states[i]))
            assert np.array_equal(obs["action_mask"][i].astype(bool), game.legal_mask(states[i]))
            if ended[i]:  # autoreset step: a fresh game, the action ignored
                assert rewards[i] == 0 and not terminated[i]
                assert states[i][layout.MOVES] == infos["agent_player"][i]
            elif terminated[i]:
                winner = game.winner(states[i])
                side = infos["agent_player"][i]
                expected = 0.0 if winner is None else (1.0 if winner == side else -1.0)
                assert rewards[i] == expected
            else:
                assert rewards[i] == 0 and infos["current_player"][i] == infos["agent_player"][i]
        episodes += terminated.sum()
        ended = terminated
    assert episodes >= 8


def test_vector_self_play_matches_single_env_exactly():
    """Without an opponent nothing is random, so a fixed policy must give identical games."""
    vec = BoardGameVectorEnv(3, "uttt", opponent=None)
    single = BoardGameEnv("uttt", opponent=None)
    obs, infos = vec.reset(seed=0)
    single_obs, single_info = single.reset(seed=0)
    for _ in range(120):
        actions = obs["action_mask"].argmax(axis=1)  # first legal move of each board
        obs, rewards, terminated, _, infos = vec.step(actions)
        single_obs, reward, done, _, single_info = single.step(int(actions[0]))
        assert np.array_equal(obs["observation"][0], single_obs["observation"])
        assert (rewards[0], terminated[0]) == (reward, done)
        assert infos["current_player"][0] == single_info["current_player"]
        if done:
            single_obs, _ = single.reset()
            obs, *_ = vec.step(np.zeros(3, dtype=np.int64))  # the autoreset step
            assert np.array_equal(obs["observation"][0], single_obs["observation"])
    assert (obs["observation"][0] == obs["observation"][1]).all()


def test_vector_env_reproducible_and_seed_sensitive():
    def trace(seed):
        env = BoardGameVectorEnv(4, "tictactoe", agent_player="random")
        return [
            (a.tobytes(), r[1].tobytes(), r[4]["opponent_action"].tobytes())
            for a, _, r in vector_run(env, 30, seed)
        ]

    assert trace(1) == trace(1)
    assert trace(1) != trace(2)


def test_vector_env_illegal_actions():
    env = BoardGameVectorEnv(2, "tictactoe", opponent=None)
    env.reset(seed=0)
    env.step(np.array([4, 4]))
    _, rewards, terminated, _, infos = env.step(np.array([4, 0]))
    assert list(rewards) == [-1.0, 0.0] and list(terminated) == [True, False]
    assert list(infos["illegal_action"]) == [True, False]

    strict = BoardGameVectorEnv(2, "tictactoe", opponent=None, illegal_action="raise")
    strict.reset(seed=0)
    strict.step(np.array([4, 4]))
    before = strict.states
    with pytest.raises(IllegalActionError, match="board 1"):
        strict.step(np.array([0, 4]))
    assert np.array_equal(strict.states, before)
    for bad in (np.array([0, 9]), np.array([0, -1]), np.array([0.0, 1.0]), np.array([1, 2, 3])):
        with pytest.raises(IllegalActionError):
            strict.step(bad)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"opponent": "mcts"}, "sync"),
        ({"render_mode": "rgb_array"}, "sync"),
        ({"num_envs": 0}, "num_envs"),
        ({"agent_player": 3}, "agent_player"),
    ],
)
def test_vector_env_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BoardGameVectorEnv(**{"num_envs": 2, "game": "tictactoe", **kwargs})


def test_vector_env_step_before_reset_raises():
    with pytest.raises(ResetNeeded):
        BoardGameVectorEnv(2, "tictactoe").step(np.zeros(2, dtype=np.int64))
