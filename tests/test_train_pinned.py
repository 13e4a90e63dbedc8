"""A seeded ``tictactoe_quick`` run gives the same losses as the code it was pinned on.

Refactors of the learner, the search or self-play must keep the algorithm: the losses of the
first four iterations (recorded on the CPU, torch with one thread) stay within a float32 margin.
The figures were pinned with torch playing the self-play network (``selfplay.inference=torch``:
that case keeps the test's meaning whatever the default backend). onnxruntime, the default on a
CPU, differs from torch by float rounding only and reaches the same figures today; should a
future onnxruntime flip a near-tie in search, only its case fails, and the torch case still
says whether the algorithm was kept.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from ultimate_rl.train import train
from ultimate_rl.train.run import compose_train_config

PINNED = {
    "loss/policy": [1.6083229780197144, 1.5633033514022827, 1.4942593574523926, 1.4978851079940796],
    "loss/value": [1.0076953172683716, 0.8611702919006348, 0.7286131978034973, 0.7658118009567261],
    "loss/total": [2.616018295288086, 2.424473524093628, 2.222872495651245, 2.2636969089508057],
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
        ]
    )
    train(cfg, tmp_path)
    events = EventAccumulator(str(tmp_path / "tensorboard"))
    events.Reload()
    for tag, expected in PINNED.items():
        got = [event.value for event in events.Scalars(tag)]
        assert got == pytest.approx(expected, rel=1e-5), tag
