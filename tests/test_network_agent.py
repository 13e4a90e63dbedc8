"""The network agent: legal play in every game, with and without search, and clear refusals."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import ultimate_rl.games as games
from ultimate_rl.games.errors import GameOverError
from ultimate_rl.games.registry import GAME_NAMES
from ultimate_rl.nn import ModelConfig, WrongGameError, build_model, save_checkpoint

pytest.importorskip("ultimate_rl.search.puct")
from ultimate_rl.agents.network import NetworkAgent

GAMES = GAME_NAMES  # every registered game


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """One small untrained checkpoint per game."""
    folder = tmp_path_factory.mktemp("checkpoints")
    paths = {}
    for name in GAMES:
        game = games.make(name)
        arch = "resnet" if name == "uttt" else "mlp"
        config = ModelConfig(arch=arch, blocks=1, channels=8, value_hidden=8, mlp_hidden=(16,))
        model = build_model(game, config, seed=0)
        paths[name] = save_checkpoint(
            folder / f"{name}.pt", model=model, model_config=config, game_name=name, step=0
        )
    return paths


def play_out(game, agents, seed: int) -> int:
    """Plays one game, the agents alternating; returns the number of moves."""
    state = game.initial_state()
    moves = 0
    while not game.is_terminal(state):
        agent = agents[game.current_player(state)]
        action = agent.select_action(game, state)
        assert game.legal_mask(state)[action], f"{agent} played illegal {action}"
        state = game.apply(state, action)
        moves += 1
    return moves


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("num_simulations", [0, 6])
def test_plays_legal_moves_to_the_end(checkpoints, name, num_simulations):
    game = games.make(name)
    agent = NetworkAgent(checkpoints[name], num_simulations=num_simulations, device="cpu", seed=0)
    opponent = NetworkAgent(
        checkpoints[name], num_simulations=0, device="cpu", temperature=1.0, seed=1
    )
    assert play_out(game, [agent, opponent], seed=0) >= 3


@pytest.mark.parametrize("algorithm", ["puct", "gumbel"])
def test_analysis_is_a_distribution_over_legal_moves(checkpoints, algorithm):
    game = games.make("tictactoe")
    state = game.apply_sequence([4, 0])
    agent = NetworkAgent(
        checkpoints["tictactoe"], num_simulations=16, device="cpu", algorithm=algorithm, seed=0
    )
    analysis = agent.analyse(game, state)
    mask = game.legal_mask(state)
    assert np.all(analysis.policy[~mask] == 0)
    assert analysis.policy.sum() == pytest.approx(1.0, abs=1e-5)
    assert -1.0 <= analysis.value <= 1.0
    assert analysis.visit_counts[~mask].sum() == 0 and analysis.visit_counts.sum() >= 16
    assert mask[agent.select_action(game, state)]


def test_raw_policy_plays_the_most_likely_legal_move(checkpoints):
    game = games.make("numerical_ttt")
    state = game.apply_sequence([0])
    agent = NetworkAgent(checkpoints["numerical_ttt"], num_simulations=0, device="cpu")
    analysis = agent.analyse(game, state)
    assert analysis.visit_counts is None
    assert np.all(analysis.policy[~game.legal_mask(state)] == 0)
    assert agent.select_action(game, state) == int(np.argmax(analysis.policy))


def test_sampling_with_a_seed_is_reproducible(checkpoints):
    game = games.make("uttt")

    def moves(seed):
        agent = NetworkAgent(
            checkpoints["uttt"], num_simulations=0, device="cpu", temperature=1.0, seed=seed
        )
        return [agent.select_action(game, game.initial_state()) for _ in range(12)]

    assert moves(3) == moves(3)
    assert len(set(moves(3))) > 1  # it does sample


def test_refuses_a_checkpoint_of_another_game(checkpoints):
    agent = NetworkAgent(checkpoints["tictactoe"], num_simulations=0, device="cpu")
    game = games.make("numerical_ttt")
    with pytest.raises(WrongGameError, match=r"'tictactoe'.*'numerical_ttt'"):
        agent.select_action(game, game.initial_state())


def test_bad_options_and_finished_games(checkpoints):
    with pytest.raises(ValueError, match="num_simulations must be >= 0"):
        NetworkAgent(checkpoints["tictactoe"], num_simulations=-1)
    with pytest.raises(ValueError, match="algorithm"):
        NetworkAgent(checkpoints["tictactoe"], algorithm="alphabeta")
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        NetworkAgent("/nonexistent/model.pt")
    game = games.make("tictactoe")
    won = game.apply_sequence([0, 3, 1, 4, 2])
    agent = NetworkAgent(checkpoints["tictactoe"], num_simulations=4, device="cpu")
    with pytest.raises(GameOverError):
        agent.select_action(game, won)


def test_registry_builds_the_network_agent(checkpoints):
    from ultimate_rl import agents

    agent = agents.make(
        "network", checkpoint=checkpoints["tictactoe"], num_simulations=4, device="cpu", seed=0
    )
    assert isinstance(agent, NetworkAgent)
    game = games.make("tictactoe")
    assert game.legal_mask(game.initial_state())[agent.select_action(game, game.initial_state())]
    with pytest.raises(ValueError, match="c_pucct"):
        agents.make("network", checkpoint=checkpoints["tictactoe"], c_pucct=1.0)


@pytest.mark.parametrize("num_simulations", [0, 6])
def test_the_first_move_is_not_charged_for_warming_up(checkpoints, num_simulations, monkeypatch):
    """Construction runs the network (and the search, on a throwaway tree), so a game's first
    move does not also pay for the inference session's first run."""
    import ultimate_rl.agents.network as network

    calls = []
    make_evaluator = network.make_evaluator

    def counting(*args, **kwargs):
        evaluate = make_evaluator(*args, **kwargs)
        return lambda planes, masks: calls.append(len(planes)) or evaluate(planes, masks)

    monkeypatch.setattr(network, "make_evaluator", counting)
    agent = NetworkAgent(checkpoints["uttt"], num_simulations=num_simulations, seed=0)
    assert calls, "the network did not run before the first move"
    warmed = len(calls)
    game = games.make("uttt")
    played = agent.select_action(game, game.initial_state())
    fresh = NetworkAgent(checkpoints["uttt"], num_simulations=num_simulations, seed=0)
    assert fresh.select_action(game, game.initial_state()) == played  # the warm-up changes no move
    assert len(calls) > 2 * warmed


class SlowEvaluator:
    """The agent's evaluator, each call slowed to at least ``seconds``; records the calls."""

    def __init__(self, evaluate, seconds: float) -> None:
        self.evaluate, self.seconds, self.durations = evaluate, seconds, []

    def __call__(self, planes, masks):
        start = time.perf_counter()
        out = self.evaluate(planes, masks)
        time.sleep(max(0.0, self.seconds - (time.perf_counter() - start)))
        self.durations.append(time.perf_counter() - start)
        return out

    def __getattr__(self, name):
        return getattr(self.evaluate, name)


def test_a_time_budget_is_never_exceeded_by_more_than_one_network_call(checkpoints):
    game = games.make("uttt")
    budget = 0.25
    agent = NetworkAgent(
        checkpoints["uttt"],
        num_simulations=100_000,
        device="cpu",
        time_per_move=budget,
        leaves_per_tree=4,
        seed=0,
    )
    state = game.initial_state()
    for _ in range(4):
        slow = agent.evaluate = SlowEvaluator(agent.evaluate, 0.02)
        start = time.perf_counter()
        action = agent.select_action(game, state)
        elapsed = time.perf_counter() - start
        assert elapsed <= budget + max(slow.durations) + 0.03, (elapsed, max(slow.durations))
        assert elapsed >= budget - 2 * max(slow.durations)  # it used its time: not stopped early
        assert 0 < agent.last_simulations < 100_000
        state = game.apply(state, action)
    # a budget shorter than one call still searches one step
    agent = NetworkAgent(checkpoints["uttt"], num_simulations=64, time_per_move=1e-6, seed=0)
    assert game.legal_mask(state)[agent.select_action(game, state)]
    assert agent.last_simulations >= 1
    with pytest.raises(ValueError, match="time_per_move must be a positive number"):
        NetworkAgent(checkpoints["uttt"], time_per_move=0)


def test_early_stop_plays_the_same_move_with_fewer_simulations(checkpoints):
    """The whole search is the default (issue 43); the early stop is the option."""
    game = games.make("uttt")
    positions = [game.initial_state(), *games.sample_positions(game, 7, 5)]
    options = {"num_simulations": 200, "device": "cpu", "seed": 0, "tree_reuse": False}
    full = NetworkAgent(checkpoints["uttt"], **options)
    early = NetworkAgent(checkpoints["uttt"], stop_early=True, **options)
    saved = 0
    for state in positions:
        assert early.select_action(game, state) == full.select_action(game, state)
        assert full.last_simulations == 200 and early.last_simulations <= 200
        saved += 200 - early.last_simulations
    assert saved > 0
    # analysis runs the whole search (a third agent: the move draws use the seeded stream)
    analyst = NetworkAgent(checkpoints["uttt"], **options)
    assert analyst.analyse(game, positions[-1]).visit_counts.sum() >= 200


def test_leaves_per_call_default_to_a_32nd_of_the_search_up_to_16(checkpoints):
    def leaves(**options):
        agent = NetworkAgent(checkpoints["tictactoe"], device="cpu", **options)
        return agent.search_config.leaves_per_tree

    assert leaves(num_simulations=1600) == 16 and leaves(num_simulations=100_000) == 16
    assert leaves(num_simulations=200) == 6 and leaves(num_simulations=16) == 1
    assert leaves(num_simulations=1600, leaves_per_tree=2) == 2


def test_pondering_leaves_the_reply_a_larger_tree(checkpoints):
    """The opponent's position searched on their time: the reply's search starts from the
    pondered subtree of the move they play, so it holds more visits than a fresh search."""
    game = games.make("tictactoe")
    options = {"num_simulations": 64, "device": "cpu", "seed": 0}
    pondering = NetworkAgent(checkpoints["tictactoe"], **options)
    after_x = game.apply(game.initial_state(), 4)
    pondered = pondering.ponder(game, after_x)
    assert pondered is not None and pondered.visit_counts.sum() >= 64
    reply = int(np.argmax(pondered.visit_counts))  # the opponent plays the move it expected
    assert pondered.pv[0] == reply
    after_o = game.apply(after_x, reply)
    fresh = NetworkAgent(checkpoints["tictactoe"], **options)
    kept = int(pondered.visit_counts[reply])
    assert kept > 0
    with_ponder = pondering.analyse(game, after_o).visit_counts.sum()
    without = fresh.analyse(game, after_o).visit_counts.sum()
    assert with_ponder >= without + kept - 1  # the kept subtree's visits (its root's own aside)
    assert game.legal_mask(after_o)[pondering.select_action(game, after_o)]


def test_a_move_asked_while_pondering_ends_the_ponder(checkpoints):
    """A ponder of a minute gives way to the move asked from another thread at once."""
    game = games.make("uttt")
    agent = NetworkAgent(
        checkpoints["uttt"], num_simulations=1_000_000, time_per_move=0.2, device="cpu", seed=0
    )
    after_x = game.apply(game.initial_state(), 40)
    found = []
    thread = threading.Thread(target=lambda: found.append(agent.ponder(game, after_x, 60.0)))
    thread.start()
    time.sleep(0.5)
    start = time.perf_counter()
    action = agent.select_action(game, game.apply(after_x, 36))
    waited = time.perf_counter() - start
    thread.join(timeout=10)
    assert not thread.is_alive() and waited < 10  # not the minute of the ponder
    assert found[0] is not None and found[0].visit_counts.sum() > 0
    assert game.legal_mask(game.apply(after_x, 36))[action]


def test_pondering_without_a_tree_to_keep_does_nothing(checkpoints):
    game = games.make("tictactoe")
    state = game.apply(game.initial_state(), 4)
    raw = NetworkAgent(checkpoints["tictactoe"], num_simulations=0, device="cpu")
    assert raw.ponder(game, state, 5.0) is None
    no_reuse = NetworkAgent(checkpoints["tictactoe"], num_simulations=32, tree_reuse=False)
    assert no_reuse.ponder(game, state) is None
