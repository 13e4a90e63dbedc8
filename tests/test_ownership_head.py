"""The ownership head (``model.aux_heads=[ownership]``): its outputs and loss, its targets in
self-play and warm start, a run that trains it, a game without ownership planes training as
before, and checkpoints with and without the head."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import tiny_run_overrides
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from ultimate_rl.games import TicTacToe, layout, make
from ultimate_rl.games.ownership import UNKNOWN
from ultimate_rl.nn import Batch, ModelConfig, build_model
from ultimate_rl.nn.config import ModelConfigError
from ultimate_rl.nn.losses import ownership_loss
from ultimate_rl.search import SearchConfig
from ultimate_rl.selfplay.schema import SelfPlaySettings
from ultimate_rl.selfplay.targets import TARGETS
from ultimate_rl.selfplay.worker import SelfPlayData, SelfPlayWorker
from ultimate_rl.train import train
from ultimate_rl.train.config import ConfigError, check_config
from ultimate_rl.train.learner import Learner
from ultimate_rl.train.run import compose_train_config

HEAD = ("model.aux_heads=[ownership]", "optim.loss_weights.ownership=0.5")
CPU = torch.device("cpu")


def uniform(planes: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(masks.shape, np.float32), np.zeros(len(masks), np.float32)


def selfplay(game, games: int = 4) -> SelfPlayData:
    worker = SelfPlayWorker(game, SearchConfig(num_simulations=4), SelfPlaySettings())
    return worker.play(uniform, games, np.random.default_rng(0))


def small_run(*extra: str):
    base = ["game=tictactoe", "model=mlp", "model.mlp_hidden=[16]", "device=cpu", "seed=3"]
    return check_config(compose_train_config([*base, *extra]))


def test_selfplay_ownership_agrees_with_every_position_of_the_game():
    """A mark on the board stays to the end: each recorded position's marks are its
    ownership (mover's view), and its empty cells hold what the game's later moves put there."""
    game = make("tictactoe")
    data = selfplay(game)
    for state, ownership in zip(data.states, data.ownership, strict=True):
        owners = np.array(game.picture(state).owners)
        mover = int(state[layout.PLAYER])
        placed = owners >= 0
        np.testing.assert_array_equal(ownership[placed], np.where(owners[placed] == mover, 0, 1))
        assert np.count_nonzero(ownership != 2) > np.count_nonzero(placed)  # a later move


@pytest.mark.parametrize("name, arch", [("uttt", "resnet"), ("tictactoe", "mlp")])
def test_the_loss_is_each_planes_cross_entropy_skipping_unknown_entries(name: str, arch: str):
    game = make(name)
    config = ModelConfig(arch=arch, blocks=1, channels=8, aux_heads=("ownership",))
    model = build_model(game, config, seed=0)
    grids = game.ownership_grids
    width = sum(g.classes * g.size for g in grids)
    assert model(torch.zeros(2, *game.observation_shape))["ownership"].shape == (2, width)
    targets = torch.from_numpy(np.stack([game.final_ownership(game.initial_state())] * 2))
    targets[1] = UNKNOWN  # a warm-start label: no target
    batch = Batch(None, None, {"ownership": targets})
    flat = torch.zeros(2, width)
    loss, _ = ownership_loss(model, {"ownership": flat}, batch)  # uniform: log(classes)
    assert float(loss) == pytest.approx(np.mean([math.log(g.classes) for g in grids]), rel=1e-5)
    start = 0
    for grid, plane in zip(grids, targets[0].split([g.size for g in grids]), strict=True):
        view = flat[0, start : start + grid.classes * grid.size].view(grid.classes, grid.size)
        view[plane.long(), torch.arange(grid.size)] = 20.0  # the right class, surely
        start += grid.classes * grid.size
    flat[1] = -flat[0]  # wrong everywhere, but without a target
    loss, accuracy = ownership_loss(model, {"ownership": flat}, batch)
    assert float(loss) < 1e-6
    assert set(accuracy) == {f"ownership_{g.plane.name}_accuracy" for g in grids}
    assert all(float(value) == 1.0 for value in accuracy.values())


def test_warm_start_labels_have_unknown_ownership():
    from ultimate_rl.train.warm_start import learn_labels

    learner = Learner(small_run(*HEAD), CPU)
    game = learner.run.game
    states = np.stack([game.initial_state(), game.apply(game.initial_state(), 4)])
    labels = (states, np.full((2, 9), 1 / 9, np.float32), np.zeros(2, np.float32))
    learn_labels(learner, labels, 0, show_progress=False)
    assert (learner.replay.targets["ownership"][:2] == UNKNOWN).all()


def test_a_tiny_run_trains_the_head_and_logs_its_loss(tmp_path: Path):
    train(compose_train_config(tiny_run_overrides(*HEAD, "train.iterations=2")), tmp_path)
    events = EventAccumulator(str(tmp_path / "tensorboard"))
    events.Reload()
    losses = [event.value for event in events.Scalars("loss/ownership")]
    assert len(losses) == 2 and all(0 < loss < 2 for loss in losses)
    assert events.Scalars("train/ownership_cells_accuracy")


def learned_weights(run) -> dict[str, torch.Tensor]:
    learner = Learner(run, CPU)
    learner.add(selfplay(run.game, games=2))
    learner.train_steps(3)
    return learner.model.state_dict()


def test_a_game_without_ownership_planes_trains_as_before(monkeypatch):
    """Without the head a game's ownership planes change nothing: the same seeded steps give
    the same weights whether the game declares planes or none; with none, the head is refused."""
    declared = learned_weights(small_run())
    monkeypatch.setattr(TicTacToe, "ownership", ())
    run = small_run()
    assert run.game.ownership_grids == ()
    assert Learner(run, CPU).replay.specs == TARGETS
    for key, value in learned_weights(run).items():
        torch.testing.assert_close(value, declared[key], rtol=0, atol=0)
    with pytest.raises(ModelConfigError, match=r"declares no ownership planes.*model\.aux_heads"):
        Learner(small_run(*HEAD), CPU)


@pytest.mark.parametrize("given", [HEAD[:1], HEAD[1:]])
def test_the_head_needs_its_weight_and_the_weight_its_head(given: tuple[str, ...]):
    with pytest.raises(ConfigError, match=r"'ownership'.*model\.aux_heads AND give it a weight"):
        small_run(*given)


def test_resuming_with_another_set_of_heads_says_which(tmp_path: Path):
    """A run's checkpoint with the head does not resume without it, nor one without it with it;
    an old network without the head starts a run with it through ``train.init_from``."""
    from ultimate_rl.nn.checkpoint import save_checkpoint
    from ultimate_rl.train.checkpoints import RunCheckpoints

    with_head, without = Learner(small_run(*HEAD), CPU), Learner(small_run(), CPU)
    with pytest.raises(ConfigError, match=r"model\.aux_heads=\[ownership\], this config asks"):
        without.load_state_dict(with_head.state_dict())
    with pytest.raises(ConfigError, match=r"Resume with model\.aux_heads=\[\]"):
        with_head.load_state_dict(without.state_dict())
    old = tmp_path / "old.pt"
    save_checkpoint(old, model=without.model, game_name="tictactoe", game_options={}, step=1)
    run = small_run(*HEAD, f"train.init_from={old}")
    learner = Learner(run, CPU)
    RunCheckpoints(tmp_path / "run", run, {}).restore(learner)
    for key, value in without.model.state_dict().items():
        torch.testing.assert_close(learner.model.state_dict()[key], value)
