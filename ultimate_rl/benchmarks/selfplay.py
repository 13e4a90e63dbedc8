"""Self-play and training throughput for the ``uttt_cpu`` preset's network and search.

Figures: ``selfplay_positions_per_s`` (moves played per second by one worker playing
``selfplay.parallel_games`` games at once to the end), ``selfplay_nn_time_fraction`` (the share
of that wall time spent inside the network's ``evaluate``: the rest is search and engine
overhead) and ``train_samples_per_s`` (positions per second through the optimiser, augmentation
included). One torch thread, the preset's own settings, after a warm-up that compiles kernels.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from ultimate_rl.nn import make_evaluator
from ultimate_rl.selfplay.worker import SelfPlayWorker
from ultimate_rl.train.config import check_config
from ultimate_rl.train.learner import Learner
from ultimate_rl.train.run import compose_train_config

PRESET = "uttt_cpu"


def run(cfg: Any) -> dict[str, float]:
    """The figures above; ``cfg.seconds`` bounds the training measurement."""
    torch.set_num_threads(1)
    train_cfg = compose_train_config([f"experiment={PRESET}", "device=cpu"])
    checked = check_config(train_cfg)
    learner = Learner(checked, torch.device("cpu"))
    evaluate = make_evaluator(learner.model, "cpu")
    worker = SelfPlayWorker(checked.game, checked.search, checked.selfplay)
    rng = np.random.default_rng(0)
    worker.play(evaluate, 2, rng)  # warm-up: compiles the search kernels
    data = worker.play(evaluate, checked.selfplay.parallel_games, rng)
    stats = data.stats

    learner.add(data)
    learner.train_steps(1)  # warm-up
    start = time.perf_counter()
    steps = 0
    while time.perf_counter() - start < float(cfg.seconds) or steps < 3:
        learner.train_steps(1)
        steps += 1
    train_seconds = time.perf_counter() - start
    return {
        "selfplay_positions_per_s": stats.moves / stats.seconds,
        "selfplay_nn_time_fraction": stats.nn_seconds / stats.seconds,
        "selfplay_simulations_per_s": stats.simulations / stats.seconds,
        "train_samples_per_s": steps * checked.train.batch_size / train_seconds,
    }
