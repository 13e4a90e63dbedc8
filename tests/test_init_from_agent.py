"""``train.init_from`` takes an exported agent file (``.urla``) as well as a training checkpoint:
the run starts from the agent's network, and a network that does not fit the run's model config
is an error naming both configs and the fix. Neither file passes for the other."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import ultimate_rl
from ultimate_rl.nn import CheckpointError, load_checkpoint
from ultimate_rl.nn.weights import load_network_weights
from ultimate_rl.train.checkpoints import RunCheckpoints
from ultimate_rl.train.config import ConfigError, check_config
from ultimate_rl.train.learner import Learner
from ultimate_rl.train.run import compose_train_config

AGENT = Path(__file__).resolve().parents[1] / "checkpoints" / "uttt_agent.urla"


def uttt_run(*extra: str):
    base = ["game=uttt", "device=cpu", "train.min_replay=1", "train.replay_window=16"]
    return check_config(compose_train_config([*base, *extra]))


def random_positions(game, count: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    planes = []
    while len(planes) < count:
        state = game.initial_state()
        for _ in range(int(rng.integers(0, 40))):
            if game.is_terminal(state):
                break
            state = game.apply(state, int(rng.choice(game.legal_actions(state))))
        if not game.is_terminal(state):
            planes.append(game.encode(state))
    return np.stack(planes)


def test_init_from_the_shipped_agent_gives_its_network(tmp_path):
    run = uttt_run(f"train.init_from={AGENT}", "model=resnet_small")
    learner = Learner(run, torch.device("cpu"))
    RunCheckpoints(tmp_path / "run", run, {}).restore(learner)  # a new run: init_from applies
    assert learner.progress.step == 0 and not learner.optimizer.state
    agent = ultimate_rl.load_agent(AGENT, num_simulations=0, inference="torch")
    planes = torch.from_numpy(random_positions(run.game, 64))
    learner.model.eval()
    with torch.no_grad():
        ours, theirs = learner.model(planes), agent.model(planes)  # theirs: batch norm folded
    for head in ("policy", "value"):
        torch.testing.assert_close(ours[head], theirs[head], atol=1e-4, rtol=1e-4)


def test_init_from_an_agent_with_another_model_config_names_both_and_the_fix():
    learner = Learner(uttt_run("model=resnet", "model.blocks=1"), torch.device("cpu"))
    with pytest.raises(ConfigError) as err:
        learner.init_weights(str(AGENT))
    message = str(err.value)
    assert "does not fit this run's model" in message
    assert "blocks=3" in message and "blocks=1" in message  # both configs
    assert "set model=resnet_small to match" in message


def test_an_agent_file_is_read_as_one_and_never_passes_for_a_checkpoint(tmp_path):
    checkpoint = load_network_weights(AGENT, expected_game="uttt")
    assert checkpoint.game_name == "uttt" and checkpoint.optimizer_state is None
    with pytest.raises(CheckpointError, match="was trained for game 'uttt'"):
        load_network_weights(AGENT, expected_game="tictactoe")
    with pytest.raises(CheckpointError, match=r"exported agent file .*train\.init_from="):
        load_checkpoint(AGENT)  # e.g. resume=agent.urla or network:checkpoint=agent.urla
    stale = torch.load(AGENT, weights_only=True)
    stale["encoding"]["version"] = "0" * 16
    torch.save(stale, tmp_path / "stale.urla")
    with pytest.raises(CheckpointError, match="input encoding"):
        load_network_weights(tmp_path / "stale.urla")
