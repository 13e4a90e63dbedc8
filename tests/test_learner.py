"""The learner on its own: a new head is a few local additions, and its state round-trips."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import random_play_states
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from ultimate_rl.nn import LOSSES, Batch, HeadOutputs, Loss, PolicyValueNet, make_evaluator, models
from ultimate_rl.selfplay.targets import TARGETS, Target
from ultimate_rl.selfplay.worker import SelfPlayStats
from ultimate_rl.train.config import RunConfig, check_config
from ultimate_rl.train.learner import Learner
from ultimate_rl.train.logs import IterationRecord, RunLog
from ultimate_rl.train.run import compose_train_config

SMALL = [
    "game=tictactoe",
    "model=mlp",
    "model.mlp_hidden=[16]",
    "train.batch_size=8",
    "train.probe_image_every=0",
    "train.progress_bar=false",
    "optim.warmup_steps=1",
    "device=cpu",
]


def small_run(*extra: str) -> RunConfig:
    return check_config(compose_train_config([*SMALL, *extra]))


def filled(learner: Learner, count: int = 32) -> Learner:
    """``learner`` with ``count`` random-play positions (uniform policy, draw) in its replay;
    every extra target is the share of empty cells."""
    game = learner.run.game
    states = np.stack(random_play_states(game, count, np.random.default_rng(0)))
    masks = np.stack([game.legal_mask(s) for s in states]).astype(np.float32)
    targets = {
        "policies": masks / masks.sum(axis=1, keepdims=True),
        "values": np.zeros(count, dtype=np.float32),
        "full_search": True,
    }
    for name in set(learner.replay.targets) - set(targets):
        targets[name] = masks.mean(axis=1)
    learner.replay.add(states, targets)
    return learner


# --- a toy head, as a new one would be added: output, target, loss, weight -------------------


class EmptyShareMLP(models.MLP):
    """The MLP with one more head: it predicts the share of empty cells."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.empty_share_head = torch.nn.Linear(self.config.mlp_hidden[-1], 1)

    def _heads(self, features: torch.Tensor) -> HeadOutputs:
        return {**super()._heads(features), "empty_share": self.empty_share_head(features)[:, 0]}


def empty_share_loss(
    model: PolicyValueNet, outputs: HeadOutputs, batch: Batch
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    error = outputs["empty_share"].float() - batch.targets["empty_share"]
    return torch.mean(error**2), {"empty_share_error": error.abs().mean().detach()}


def test_a_new_head_trains_and_is_logged_by_name(tmp_path: Path, monkeypatch):
    monkeypatch.setitem(models.ARCHITECTURE_CLASSES, "mlp", EmptyShareMLP)
    run = small_run()
    weights = {**run.optim.loss_weights, "empty_share": 0.5}
    run = dataclasses.replace(run, optim=dataclasses.replace(run.optim, loss_weights=weights))
    learner = Learner(
        run,
        torch.device("cpu"),
        losses=(*LOSSES, Loss("empty_share", empty_share_loss)),
        targets=(*TARGETS, Target("empty_share", np.float32)),
    )
    terms = filled(learner).train_steps(1)
    expected = terms["loss/policy"] + terms["loss/value"] + 0.5 * terms["loss/empty_share"]
    assert terms["loss/total"] == pytest.approx(expected, rel=1e-5)
    assert "train/empty_share_error" in terms
    assert "empty_share" in learner.state_dict()["replay"]  # checkpoints keep the new target

    log = RunLog(tmp_path, run, learner.progress, make_evaluator(learner.model, "cpu"))
    log.iteration(learner.progress, IterationRecord(SelfPlayStats(), terms, len(learner.replay)))
    log.close_bar()
    log.finish(learner.progress)
    events = EventAccumulator(str(tmp_path / "tensorboard"))
    events.Reload()
    assert {"loss/empty_share", "train/empty_share_error", "loss/total"} <= set(
        events.Tags()["scalars"]
    )


def test_every_loss_needs_a_weight():
    run = small_run()
    extra = Loss("empty_share", empty_share_loss)
    with pytest.raises(ValueError, match=r"optim\.loss_weights.*empty_share"):
        Learner(run, torch.device("cpu"), losses=(*LOSSES, extra))


def test_state_dict_resumes_training_exactly():
    run = small_run("optim.name=sgd")
    learner = filled(Learner(run, torch.device("cpu")))
    learner.train_steps(2)
    state = copy.deepcopy(learner.state_dict())  # it shares memory with the live learner
    expected = learner.train_steps(3)

    restored = Learner(run, torch.device("cpu"))
    restored.load_state_dict(state)
    assert restored.train_steps(3) == expected
    assert restored.progress == learner.progress
    for key, value in learner.model.state_dict().items():
        assert torch.equal(value, restored.model.state_dict()[key]), key


def test_a_run_stopped_by_the_clock_anneals_by_its_minutes():
    run = small_run("optim.schedule=cosine", "train.iterations=1000", "train.max_minutes=2")
    learner = filled(Learner(run, torch.device("cpu")))
    learner.progress.step = 10  # past the warm-up
    learner.progress.seconds = 60.0  # half the minutes: half the cosine, whatever the steps
    lr = learner.train_steps(1)["train/learning_rate"]
    floor = run.optim.min_lr_fraction
    assert lr == pytest.approx(run.optim.lr * (floor + (1 - floor) * 0.5))
    learner.progress.seconds = 120.0
    assert learner.train_steps(1)["train/learning_rate"] == pytest.approx(run.optim.lr * floor)


def test_the_progress_bar_counts_minutes_when_the_clock_bounds_the_run(tmp_path: Path):
    run = small_run("train.iterations=1000", "train.max_minutes=30", "train.progress_bar=true")
    learner = Learner(run, torch.device("cpu"))
    log = RunLog(tmp_path, run, learner.progress, make_evaluator(learner.model, "cpu"))
    learner.progress.iteration, learner.progress.seconds = 1, 90.0
    log.iteration(learner.progress, IterationRecord(SelfPlayStats(), {}, 0))
    assert (log.bar.n, log.bar.total, log.bar.unit) == (1.5, 30, "min")
    assert "iter 1/1000" in str(log.bar)
    log.close_bar()
    log.finish(learner.progress)


def test_the_learner_trains_a_channels_last_resnet_in_its_precision(monkeypatch):
    """Channels-last weights and batches (the fast convolution layout); the step runs under the
    precision ``train.precision`` resolves to and still returns float losses."""
    import ultimate_rl.train.learner as learner_module

    seen = []
    real = learner_module.autocast
    monkeypatch.setattr(
        learner_module, "autocast", lambda device, dtype: seen.append(dtype) or real(device, dtype)
    )
    uttt = ["game=uttt", "model=resnet_small", "train.precision=bf16", "train.batch_size=8"]
    run = check_config(compose_train_config([*uttt, "device=cpu", "train.progress_bar=false"]))
    learner = filled(Learner(run, torch.device("cpu")), 16)
    conv = next(p for p in learner.model.parameters() if p.dim() == 4)
    assert conv.is_contiguous(memory_format=torch.channels_last)
    losses = learner.train_steps(2)
    assert seen == [torch.bfloat16] * 2 and np.isfinite(losses["loss/total"])
