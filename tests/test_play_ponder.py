"""Pondering on the play site (issue 43): a network level thinks on the person's time, and any
level's move ends the ponder at once."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ultimate_rl import agents
from ultimate_rl.agents.network import NetworkAgent
from ultimate_rl.games import make
from ultimate_rl.nn import ModelConfig, build_model, save_checkpoint
from ultimate_rl.play.levels import Level
from ultimate_rl.play.ponder import Ponderer
from ultimate_rl.play.service import PlayService
from ultimate_rl.play.store import Database


class Recording(NetworkAgent):
    """A network agent that notes each ponder: the position, and when it ended."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pondered: list[np.ndarray] = []
        self.ended = threading.Event()

    def ponder(self, game, state, seconds=None, stop=None):  # type: ignore[override]
        self.pondered.append(state.copy())
        try:
            return super().ponder(game, state, seconds, stop)
        finally:
            self.ended.set()


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    game = make("uttt")
    config = ModelConfig(arch="resnet", blocks=1, channels=8, value_hidden=8)
    path = tmp_path_factory.mktemp("ponder") / "uttt.pt"
    model = build_model(game, config, seed=0)
    return save_checkpoint(path, model=model, model_config=config, game_name="uttt", step=0)


def service_with(agent: Any, ponder_seconds: float) -> PlayService:
    level = Level("net", "network", built=agent)
    return PlayService(make("uttt"), [level], Database(":memory:"), ponder_seconds=ponder_seconds)


def test_a_level_ponders_the_persons_position_until_the_person_moves(checkpoint: Path) -> None:
    agent = Recording(checkpoint, num_simulations=1_000_000, time_per_move=0.1, seed=0)
    service = service_with(agent, ponder_seconds=60)
    record = service.create(1)  # the person plays O: the level moves first
    service.agent_move(record)
    assert service.ponderer.running
    assert len(agent.pondered) == 1 and (agent.pondered[0] == record.match.state).all()
    time.sleep(0.3)
    start = time.perf_counter()
    legal = np.flatnonzero(service.game.legal_mask(record.match.state))
    service.human_move(record, int(legal[0]))
    service.agent_move(record)  # the level's reply ends the ponder before it thinks
    assert time.perf_counter() - start < 10  # not the minute the ponder was allowed
    assert agent.ended.wait(10) and len(record.match.actions) == 3
    assert len(agent.pondered) == 2  # and the person's next position is pondered in turn
    service.ponderer.stop()


def test_no_ponder_when_off_or_for_agents_without_a_tree(checkpoint: Path) -> None:
    agent = Recording(checkpoint, num_simulations=64, seed=0)
    off = service_with(agent, ponder_seconds=0)
    off.agent_move(off.create(1))
    assert agent.pondered == [] and not off.ponderer.running
    random_level = service_with(agents.make("random", seed=0), ponder_seconds=60)
    random_level.agent_move(random_level.create(1))
    assert not random_level.ponderer.running


def test_one_ponder_on_the_site_at_a_time(checkpoint: Path) -> None:
    game = make("uttt")
    first, second = (Recording(checkpoint, num_simulations=1_000_000, seed=s) for s in (0, 1))
    ponderer = Ponderer(60)
    state = game.apply(game.initial_state(), 40)
    assert ponderer.start(first, game, state)
    assert ponderer.start(second, game, game.apply(state, 36))  # ends the first one
    assert first.ended.wait(10) and ponderer.running
    ponderer.stop()
    assert second.ended.wait(10) and not ponderer.running


@pytest.mark.parametrize("seconds", [-1, float("inf"), "30"])
def test_bad_ponder_seconds_are_refused(seconds: Any) -> None:
    with pytest.raises(ValueError, match="ponder_seconds must be seconds >= 0"):
        Ponderer(seconds)
