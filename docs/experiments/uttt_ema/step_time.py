"""The optimiser step's time with and without ``optim.ema_decay``: uttt_cpu's learner, batch as the
preset, one thread, the two learners taking turns (4 rounds of 30 steps each) on 512 positions.

    python docs/experiments/uttt_ema/step_time.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests"))  # the learner tests' replay filler, not a copy

from test_learner import filled  # noqa: E402

from ultimate_rl.train.config import check_config  # noqa: E402
from ultimate_rl.train.learner import Learner  # noqa: E402
from ultimate_rl.train.run import compose_train_config  # noqa: E402


def learner(extra: list[str]) -> Learner:
    overrides = ["experiment=uttt_cpu", "device=cpu", "train.progress_bar=false", *extra]
    return filled(Learner(check_config(compose_train_config(overrides)), torch.device("cpu")), 512)


def main() -> None:
    torch.set_num_threads(1)
    plain, averaged = learner([]), learner(["optim.ema_decay=0.999"])
    seconds = [0.0, 0.0]
    for each in (plain, averaged):
        each.train_steps(5)  # warm-up
    for _ in range(4):
        for index, each in enumerate((plain, averaged)):
            started = time.perf_counter()
            each.train_steps(30)
            seconds[index] += time.perf_counter() - started
    print(
        f"ms a step: plain {seconds[0] / 120 * 1e3:.1f}, ema {seconds[1] / 120 * 1e3:.1f}, "
        f"ratio {seconds[1] / seconds[0]:.3f}"
    )


if __name__ == "__main__":
    main()
