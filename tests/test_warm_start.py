"""The warm start on UCT labels: labels that do not depend on the worker count, supervised steps
that learn them, and a run that does it once, inside its clock, before self-play."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import tiny_run_overrides

from ultimate_rl.games import make
from ultimate_rl.nn import load_checkpoint
from ultimate_rl.train import train
from ultimate_rl.train.checkpoints import CHECKPOINT
from ultimate_rl.train.config import ConfigError, WarmStartSection, check_config
from ultimate_rl.train.learner import Learner
from ultimate_rl.train.run import compose_train_config
from ultimate_rl.train.warm_start import (
    learn_labels,
    parallel_uct_labels,
    save_warm_start,
    warm_start,
    warm_start_due,
)

TICTACTOE = {"name": "tictactoe", "options": {}}


def small_run(*extra: str):
    base = ["game=tictactoe", "model=mlp", "model.mlp_hidden=[16]", "device=cpu"]
    return check_config(compose_train_config([*base, *extra]))


def test_labels_are_uct_searches_and_the_same_on_any_number_of_workers():
    warm = WarmStartSection(positions=30, simulations=64, max_plies=4)
    one = parallel_uct_labels(TICTACTOE, warm, 1, seed=3, show_progress=False)
    two = parallel_uct_labels(TICTACTOE, warm, 2, seed=3, show_progress=False)
    for a, b in zip(one, two, strict=True):
        np.testing.assert_array_equal(a, b)
    states, policies, values = one
    assert len(states) == 30 and len(np.unique(states, axis=0)) > 5
    game = make("tictactoe")
    masks = np.stack([game.legal_mask(s) for s in states])
    np.testing.assert_allclose(policies.sum(axis=1), 1.0, rtol=1e-6)
    assert np.all(policies[~masks] == 0) and np.all(np.abs(values) <= 1)
    other = parallel_uct_labels(TICTACTOE, warm, 1, seed=4, show_progress=False)
    assert not np.array_equal(other[0], states)


def test_stop_keeps_the_labels_finished_so_far():
    warm = WarmStartSection(positions=600, simulations=16, max_plies=4)
    states, policies, values = parallel_uct_labels(
        TICTACTOE, warm, 1, seed=0, should_stop=lambda: True, show_progress=False
    )
    assert len(states) == len(policies) == len(values) < 600


def test_supervised_steps_learn_the_labels_and_save_for_init_from(tmp_path: Path):
    warm = WarmStartSection(positions=24, simulations=64, max_plies=4)
    labels = parallel_uct_labels(TICTACTOE, warm, 1, seed=0, show_progress=False)
    run = small_run(
        "train.batch_size=24",
        "optim.warmup_steps=1",
        "optim.lr=0.01",
        "train.replay_window=48",
        "train.min_replay=1",
    )
    learner = Learner(run, torch.device("cpu"))
    first = learn_labels(learner, labels, 1, show_progress=False)
    last = learn_labels(learner, labels, 100, show_progress=False)
    assert learner.progress.step == 101 and learner.progress.warm_start_positions == 48
    assert last["loss/total"] < 0.9 * first["loss/total"]
    path = save_warm_start(learner, tmp_path / "warm.pt")
    fresh = Learner(small_run(f"train.init_from={path}"), torch.device("cpu"))
    fresh.init_weights(str(path))
    torch.testing.assert_close(fresh.model.state_dict(), learner.model.state_dict())


def test_labels_fill_every_target_a_recipe_stores():
    """UCT's root value is the value target and the root value, its visits the policy of a full
    search, and a label has no opponent's reply."""
    warm = WarmStartSection(positions=6, simulations=16, max_plies=4)
    states, policies, values = parallel_uct_labels(TICTACTOE, warm, 1, seed=0, show_progress=False)
    run = small_run(
        "optim.value_target_q_weight=0.5",
        "model.aux_heads=[opponent_policy]",
        "optim.loss_weights.opponent_policy=0.15",
    )
    learner = Learner(run, torch.device("cpu"))
    assert learn_labels(learner, (states, policies, values), 0, show_progress=False) == {}
    stored = {name: array[:6] for name, array in learner.replay.targets.items()}
    assert sorted(stored) == [
        "full_search",
        "opponent_policies",
        "policies",
        "root_values",
        "values",
    ]
    np.testing.assert_array_equal(learner.replay.states[:6], states)
    np.testing.assert_array_equal(stored["policies"], policies)
    np.testing.assert_array_equal(stored["values"], values)
    np.testing.assert_array_equal(stored["root_values"], values)
    assert stored["full_search"].all() and not stored["opponent_policies"].any()


TINY = tiny_run_overrides(
    "eval.every=0",
    "train.warm_start.positions=40",
    "train.warm_start.simulations=32",
    "train.warm_start.max_plies=4",
    "train.warm_start.steps=7",
)


def test_a_run_warm_starts_once_inside_its_clock(tmp_path: Path):
    summary = train(compose_train_config([*TINY, "train.iterations=1"]), tmp_path)
    assert summary["steps"] == 7 + 5 and summary["positions"] > 0
    progress = load_checkpoint(tmp_path / CHECKPOINT).extra["progress"]
    assert progress["warm_start_positions"] == 40 and progress["seconds"] > 0
    assert (tmp_path / "checkpoints" / "iter_00000.pt").is_file()  # the warm-started network
    # a resume continues the run: no second warm start
    resumed = train(compose_train_config([*TINY, "train.iterations=2"]), tmp_path)
    assert resumed["steps"] == 7 + 5 + 5
    progress = load_checkpoint(tmp_path / CHECKPOINT).extra["progress"]
    assert progress["warm_start_positions"] == 40


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("train.warm_start.positions=60000", r"train\.warm_start\.positions \(60000\) exceeds"),
        ("train.warm_start.simulations=0", r"train\.warm_start\.simulations must be >= 1"),
        ("+train.warm_start.pos=5", r"unknown config key\(s\) \['train\.warm_start\.pos'\]"),
    ],
)
def test_bad_warm_start_settings_are_named(override: str, message: str):
    with pytest.raises(ConfigError, match=message):
        small_run(override)


def test_a_run_from_init_from_keeps_its_network_and_skips_the_warm_start(tmp_path: Path):
    first = tmp_path / "first"
    train(compose_train_config([*TINY, "train.iterations=1"]), first)
    cfg = [*TINY, "train.iterations=1", f"train.init_from={first / CHECKPOINT}"]
    summary = train(compose_train_config(cfg), tmp_path / "second")
    assert summary["steps"] == 5
    progress = load_checkpoint(tmp_path / "second" / CHECKPOINT).extra["progress"]
    assert progress["warm_start_positions"] == 0


def test_a_warm_start_stopped_after_its_labels_resumes_with_the_steps_still_due():
    run = small_run(
        "train.warm_start.positions=20",
        "train.warm_start.simulations=16",
        "train.warm_start.max_plies=4",
        "train.warm_start.steps=6",
        "train.batch_size=8",
        "train.min_replay=1",
    )
    learner = Learner(run, torch.device("cpu"))
    assert warm_start_due(learner)
    stop_after_labels = lambda: learner.progress.warm_start_positions > 0  # noqa: E731
    assert warm_start(learner, 1, stop_after_labels, show_progress=False) == {}
    assert learner.progress.warm_start_positions == 20 and learner.progress.step == 0
    assert warm_start_due(learner)  # labels kept, steps still due
    losses = warm_start(learner, 1, show_progress=False)
    assert "loss/total" in losses and learner.progress.step == 6
    assert learner.progress.warm_start_positions == 20 and len(learner.replay) == 20
    assert not warm_start_due(learner)
