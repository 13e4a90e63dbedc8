"""``train.init_replay``: a run started with ``train.init_from`` a run's ``latest.pt`` can start
from that run's replay window too (its newest positions that fit, with their targets), grown
network or not; a file without a window, or a window without a target the run trains on, is an
error naming the fix."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from tests.helpers import tiny_run_overrides
from tests.test_learner import filled
from ultimate_rl.train import check_config
from ultimate_rl.train.checkpoints import RunCheckpoints
from ultimate_rl.train.config import ConfigError
from ultimate_rl.train.learner import Learner
from ultimate_rl.train.run import compose_train_config
from ultimate_rl.train.warm_start import save_warm_start

CPU = torch.device("cpu")


def tiny_run(*extra: str):
    return check_config(compose_train_config(tiny_run_overrides(*extra)))


def source_run(folder: Path, positions: int = 40) -> Path:
    """A saved run of ``positions`` positions in its replay window: its ``latest.pt``."""
    run = tiny_run("model.mlp_hidden=[32,16]", "train.replay_window=64")
    learner = filled(Learner(run, CPU), positions)
    learner.progress.iteration = 1
    RunCheckpoints(folder, run, {}).save(learner)
    return folder / "checkpoints" / "latest.pt"


def started(run_dir: Path, *extra: str) -> Learner:
    run = tiny_run(*extra)
    learner = Learner(run, CPU)
    RunCheckpoints(run_dir, run, {}).restore(learner)  # a new run: init_from applies
    return learner


def test_a_grown_run_starts_from_the_source_runs_window_the_newest_that_fit(tmp_path, capsys):
    latest = source_run(tmp_path / "source")
    source = Learner(tiny_run("model.mlp_hidden=[32,16]", "train.replay_window=64"), CPU)
    RunCheckpoints(tmp_path / "source", source.run, {}).restore(source)  # the saved window
    init = (f"train.init_from={latest}", "train.init_replay=true", "model.mlp_hidden=[48,16]")
    whole = started(tmp_path / "whole", *init, "train.replay_window=64")
    assert "grown from mlp 32x16, and its replay window (40 positions)" in capsys.readouterr().out
    assert len(whole.replay) == 40 and whole.progress.iteration == 0
    np.testing.assert_array_equal(whole.replay.states[:40], source.replay.states[:40])
    for name in source.replay.targets:
        np.testing.assert_array_equal(
            whole.replay.targets[name][:40], source.replay.targets[name][:40]
        )
    newest = started(tmp_path / "newest", *init, "train.replay_window=16")
    assert len(newest.replay) == 16

    def rows(states: np.ndarray) -> list[bytes]:
        return sorted(row.tobytes() for row in states)

    assert rows(newest.replay.states) == rows(source.replay.states[24:40])  # the last 16 added
    fresh = started(tmp_path / "fresh", *init[:1], "model.mlp_hidden=[48,16]")
    assert len(fresh.replay) == 0  # without init_replay the window starts empty, as before


def test_a_file_without_a_window_or_a_window_without_a_trained_target_is_refused(tmp_path):
    latest = source_run(tmp_path / "source")
    weights_only = save_warm_start(
        Learner(tiny_run("model.mlp_hidden=[32,16]"), CPU), tmp_path / "w.pt"
    )
    with pytest.raises(
        ConfigError, match=r"keeps no replay window; use the source run's checkpoints/latest\.pt"
    ):
        started(
            tmp_path / "a",
            f"train.init_from={weights_only}",
            "train.init_replay=true",
            "model.mlp_hidden=[32,16]",
        )
    aux = ("model.aux_heads=[opponent_policy]", "optim.loss_weights.opponent_policy=0.15")
    with pytest.raises(ConfigError, match=r"has no \['opponent_policies'\] target"):
        started(
            tmp_path / "b",
            f"train.init_from={latest}",
            "train.init_replay=true",
            "model.mlp_hidden=[32,16]",
            *aux,
        )
    with pytest.raises(ConfigError, match=r"train\.init_replay=true needs train\.init_from="):
        tiny_run("train.init_replay=true")
