"""The UTTT agent shipped in checkpoints/: loads on a fresh install, is what play.py picks by
default, stays small, and plays (its raw policy already beats random play)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

import ultimate_rl
from ultimate_rl.agents import make
from ultimate_rl.evaluate import MatchConfig, play_match
from ultimate_rl.games import make as make_game
from ultimate_rl.play.opponent import make_opponent

ROOT = Path(__file__).resolve().parents[1]
AGENT = ROOT / "checkpoints" / "uttt_agent.urla"
MAX_BYTES = 20 * 2**20


def test_the_shipped_agent_is_small_and_loads_with_its_search_defaults() -> None:
    assert AGENT.is_file(), "checkpoints/uttt_agent.urla is missing"
    assert AGENT.stat().st_size <= MAX_BYTES
    agent = ultimate_rl.load_agent(AGENT)
    assert agent.checkpoint.game_name == "uttt"
    assert agent.num_simulations > 0  # the default plays with search
    game = make_game("uttt")
    state = game.apply_sequence([40, 36])
    action = agent.select_action(game, state)
    assert game.legal_mask(state)[action]


def test_play_uses_the_shipped_agent_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    game, agent, label = make_opponent()
    assert game.name == "uttt" and label.startswith("uttt_agent")
    assert agent.checkpoint.step == ultimate_rl.load_agent(AGENT).checkpoint.step


def test_the_raw_policy_beats_random_play() -> None:
    result = play_match(
        make_game("uttt"),
        f"file:path={AGENT},num_simulations=0",
        "random",
        MatchConfig(num_games=10, opening_plies=0, seed=0, workers=1, progress=False),
    )
    assert result.wins >= 9, result.summary()


def test_the_agent_analyses_a_position() -> None:
    agent = make("file", path=str(AGENT), num_simulations=16)
    game = make_game("uttt")
    analysis = agent.analyse(game, game.initial_state())
    policy = np.asarray(analysis.policy)
    assert policy.shape == (81,) and np.isclose(policy.sum(), 1.0)
    assert -1.0 <= float(analysis.value) <= 1.0


def test_seconds_per_move_bound_the_shipped_agent_on_the_play_site(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``seconds=`` gives the agent file a time budget that alone ends its search."""
    monkeypatch.chdir(ROOT)
    game, agent, _ = make_opponent(seconds=0.2, seed=0)
    assert agent.time_per_move == 0.2 and agent.num_simulations > 100_000
    state = game.apply_sequence([40, 36])
    start = time.perf_counter()
    assert game.legal_mask(state)[agent.select_action(game, state)]
    assert time.perf_counter() - start < 0.2 + 0.15  # one network call over at most, with slack
    assert agent.last_simulations > 16
