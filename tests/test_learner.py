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


@pytest.mark.parametrize("extra", [[], ["optim.ema_decay=0.9"]], ids=["trained", "averaged"])
def test_state_dict_resumes_training_exactly(extra: list[str]):
    run = small_run("optim.name=sgd", *extra)
    learner = filled(Learner(run, torch.device("cpu")))
    learner.train_steps(2)
    state = copy.deepcopy(learner.state_dict())  # it shares memory with the live learner
    expected = learner.train_steps(3)

    restored = Learner(run, torch.device("cpu"))
    restored.load_state_dict(state)
    assert restored.train_steps(3) == expected
    assert restored.progress == learner.progress
    for network in ("model", "network"):
        for key, value in getattr(learner, network).state_dict().items():
            assert torch.equal(value, getattr(restored, network).state_dict()[key]), key


@pytest.mark.parametrize("model", [["model=mlp"], ["model=resnet_small", "model.board_size=null"]])
def test_the_offered_network_is_the_moving_average_of_the_trained_one(model: list[str]):
    """``optim.ema_decay``: after each optimiser step the offered network (self-play,
    evaluation, snapshots) moves toward the trained one by ``1 - decay``, with the smaller decay
    ``(1 + t) / (10 + t)`` over the first steps; batch norm's counters are copied."""
    plain = Learner(small_run(*model), torch.device("cpu"))
    assert plain.network is plain.model is plain.selfplay_model  # off: the trained weights
    learner = filled(Learner(small_run(*model, "optim.ema_decay=0.5"), torch.device("cpu")))
    assert learner.selfplay_model is learner.network is not learner.model
    expected = {key: value.clone() for key, value in learner.model.state_dict().items()}
    for step in range(4):  # decays 0.1, 0.18, 0.25, then the cap 0.5
        learner.train_steps(1)
        decay = min(0.5, (1 + step) / (10 + step))
        for key, trained in learner.model.state_dict().items():
            floating = trained.is_floating_point()
            expected[key] = decay * expected[key] + (1 - decay) * trained if floating else trained
    torch.testing.assert_close(learner.network.state_dict(), expected)
    assert not learner.network.training
    weights = next(iter(learner.network.state_dict()))
    assert not torch.equal(
        learner.network.state_dict()[weights], learner.model.state_dict()[weights]
    )


def test_snapshots_hold_the_average_and_a_resume_both_networks(tmp_path: Path):
    """What agents load (``iter_N.pt``, ``latest.pt``'s model) is the offered average; the
    resume point also keeps the trained weights, and a snapshot alone restarts both from the
    average."""
    from ultimate_rl.nn import load_checkpoint
    from ultimate_rl.train.checkpoints import RunCheckpoints

    run = small_run("optim.ema_decay=0.9")
    learner = filled(Learner(run, torch.device("cpu")))
    learner.train_steps(3)
    learner.progress.iteration = 1
    checkpoints = RunCheckpoints(tmp_path, run, {})
    checkpoints.save(learner)
    for name in ("latest.pt", "iter_00001.pt"):
        saved = load_checkpoint(tmp_path / "checkpoints" / name).model_state
        torch.testing.assert_close(saved, learner.network.state_dict())
    resumed = Learner(run, torch.device("cpu"))
    checkpoints.restore(resumed)
    torch.testing.assert_close(resumed.model.state_dict(), learner.model.state_dict())
    torch.testing.assert_close(resumed.network.state_dict(), learner.network.state_dict())
    (tmp_path / "checkpoints" / "latest.pt").unlink()
    from_snapshot = Learner(run, torch.device("cpu"))
    checkpoints.restore(from_snapshot)
    torch.testing.assert_close(from_snapshot.model.state_dict(), learner.network.state_dict())
    torch.testing.assert_close(from_snapshot.network.state_dict(), learner.network.state_dict())


def test_the_average_decay_is_a_fraction_below_one():
    for decay in ("1.0", "-0.1"):
        with pytest.raises(ValueError, match=r"optim\.ema_decay must be in \[0, 1\)"):
            small_run(f"optim.ema_decay={decay}")


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
