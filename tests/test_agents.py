"""The Agent interface and its registry: random, uct, perfect, and extension by register()."""

from __future__ import annotations

import numpy as np
import pytest

from ultimate_rl import agents
from ultimate_rl.agents import Agent, AgentError, Analysis
from ultimate_rl.games import GameOverError, UnsolvableGameError, make, solve


@pytest.fixture(scope="module")
def ttt():
    return make("tictactoe")


@pytest.fixture(scope="module")
def uttt():
    return make("uttt")


def test_random_agent_is_legal_and_seeded(uttt):
    state = uttt.apply_sequence([40])
    picks = [agents.make("random", seed=3).select_action(uttt, state) for _ in range(2)]
    assert picks[0] == picks[1]
    assert uttt.legal_mask(state)[picks[0]]
    many = {agents.make("random", seed=s).select_action(uttt, state) for s in range(20)}
    assert len(many) > 1


def test_uct_agent_plays_and_analyses(uttt):
    agent = agents.make("uct", num_simulations=200, seed=0)
    state = uttt.initial_state()
    assert uttt.legal_mask(state)[agent.select_action(uttt, state)]
    analysis = agent.analyse(uttt, state)
    assert isinstance(analysis, Analysis)
    assert analysis.policy.shape == (uttt.num_actions,)
    assert analysis.policy.sum() == pytest.approx(1.0)
    assert analysis.visit_counts.sum() == 200
    assert -1.0 <= analysis.value <= 1.0


def test_uct_agent_takes_its_time_budget(ttt):
    agent = agents.make("uct", time_per_move=0.02, seed=0)
    assert ttt.legal_mask(ttt.initial_state())[agent.select_action(ttt, ttt.initial_state())]


def test_perfect_agent_plays_only_optimal_moves(ttt):
    agent = agents.make("perfect", seed=0)
    state = ttt.apply_sequence([0, 4, 1])  # O must block at 2
    assert agent.select_action(ttt, state) == 2
    state = ttt.initial_state()
    _, optimal = solve(ttt, state)
    chosen = {agents.make("perfect", seed=s).select_action(ttt, state) for s in range(30)}
    assert chosen <= set(optimal.tolist()) and len(chosen) > 1  # random among optimal moves
    analysis = agent.analyse(ttt, state)
    assert analysis.value == 0.0
    assert np.flatnonzero(analysis.policy).tolist() == sorted(optimal.tolist())


def test_perfect_agents_draw_each_other(ttt):
    players = [agents.make("perfect", seed=1), agents.make("perfect", seed=2)]
    state = ttt.initial_state()
    while not ttt.is_terminal(state):
        state = ttt.apply(state, players[ttt.current_player(state)].select_action(ttt, state))
    assert ttt.winner(state) is None


def test_perfect_agent_refuses_uttt(uttt):
    with pytest.raises(UnsolvableGameError, match="uct"):
        agents.make("perfect").select_action(uttt, uttt.initial_state())


def test_finished_games_and_foreign_states_raise(ttt, uttt):
    finished = ttt.apply_sequence([0, 3, 1, 4, 2])
    for name in ("random", "uct", "perfect"):
        with pytest.raises(GameOverError, match="over"):
            agents.make(name).select_action(ttt, finished)
    with pytest.raises(ValueError, match="belongs"):
        agents.make("random").select_action(ttt, uttt.initial_state())


def test_unknown_names_and_options_list_the_valid_ones():
    with pytest.raises(AgentError, match=r"unknown agent 'bogus'.*'perfect', 'random', 'uct'"):
        agents.make("bogus")
    with pytest.raises(AgentError, match=r"'uct'.*num_simulations.*time_per_move"):
        agents.make("uct", simulations=10)
    with pytest.raises(ValueError, match="num_simulations"):
        agents.make("uct", num_simulations=0)


def test_register_adds_an_agent_and_guards_names(ttt):
    class FirstLegal(Agent):
        def __init__(self, offset: int = 0) -> None:
            self.offset = offset

        def select_action(self, game, state):
            return int(game.legal_actions(state)[self.offset])

    agents.register("first_legal_test", FirstLegal)
    try:
        agent = agents.make("first_legal_test", offset=1)
        assert agent.select_action(ttt, ttt.initial_state()) == 1
        assert agent.analyse(ttt, ttt.initial_state()).policy[1] == 1.0  # default analyse
        assert "first_legal_test" in agents.names()
        with pytest.raises(AgentError, match="already registered"):
            agents.register("first_legal_test", lambda: FirstLegal())
        with pytest.raises(AgentError, match="offset"):
            agents.make("first_legal_test", depth=2)
    finally:
        agents.unregister("first_legal_test")
    assert "first_legal_test" not in agents.names()
    with pytest.raises(AgentError, match="not registered"):
        agents.unregister("first_legal_test")


def test_any_object_with_select_action_is_an_agent():
    """One contract: the arena, the environments and the play front ends accept duck-typed
    players through ``isinstance(x, Agent)``; subclasses must implement ``select_action``."""

    class Duck:
        def select_action(self, game, state):
            return 0

    assert isinstance(Duck(), Agent) and isinstance(agents.make("random"), Agent)
    assert not isinstance(object(), Agent) and not isinstance(lambda game, state: 0, Agent)

    class Incomplete(Agent):
        pass

    with pytest.raises(TypeError, match="select_action"):
        Incomplete()
