"""A seeded ``tictactoe_quick`` run gives the same losses as the code it was pinned on.

Refactors of the learner, the search or self-play must keep the algorithm: the losses of the
first four iterations (recorded on the CPU in float32, torch with one thread) stay within a
float32 margin.
The figures were pinned with torch playing the self-play network (``selfplay.inference=torch``:
that case keeps the test's meaning whatever the default backend). onnxruntime, the default on a
CPU, differs from torch by float rounding only and reaches the same figures today; should a
future onnxruntime flip a near-tie in search, only its case fails, and the torch case still
says whether the algorithm was kept.
Re-pinned once, when self-play stopped throwing away the search tree of a live game that moved to
another row after a game before it finished (the old figures come back with that bug restored).
Re-pinned again when a greedy move began to break ties in visits by the prior instead of at
random (``search.tree.greedy_score``): tic-tac-toe's late self-play moves tie often.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from ultimate_rl.train import train
from ultimate_rl.train.run import compose_train_config

PINNED = {
    "loss/policy": [1.6163554191589355, 1.538668155670166, 1.496091604232788, 1.4824925661087036],
    "loss/value": [0.9905257225036621, 0.8194011449813843, 0.7170982956886292, 0.6834400296211243],
    "loss/total": [2.6068811416625977, 2.35806941986084, 2.2131898403167725, 2.1659326553344727],
}


@pytest.mark.parametrize("inference", ["torch", "onnxruntime"])
def test_seeded_tictactoe_quick_losses_are_pinned(tmp_path: Path, inference: str):
    cfg = compose_train_config(
        [
            f"selfplay.inference={inference}",
            "experiment=tictactoe_quick",
            "train.iterations=4",
            "train.stop_when_perfect=false",
            "eval.every=0",
            "train.probe_image_every=0",
            "train.progress_bar=false",
            "device=cpu",
            "train.precision=fp32",  # auto trains in bf16 on a CPU with AMX
            "selfplay.random_opening.fraction=0",  # the preset's since the pin; off, as pinned
        ]
    )
    train(cfg, tmp_path)
    events = EventAccumulator(str(tmp_path / "tensorboard"))
    events.Reload()
    for tag, expected in PINNED.items():
        got = [event.value for event in events.Scalars(tag)]
        assert got == pytest.approx(expected, rel=1e-5), tag
