"""A network learns a label set of ``label.py`` (supervised), written as a training checkpoint.

    python finetune.py LABEL_DIR INIT STEPS VALUE OUT.pt [training overrides...]

``INIT``: the network to start from (``train.init_from``: a smaller one grows into the
overrides' model). ``VALUE``: the value target, ``q`` (the search's root value), ``z`` (the
game's result) or ``mix`` (their mean). The labels fill the replay window; ``STEPS`` optimiser
steps of the ``uttt_cpu`` recipe (lr 0.002 after 200 warm-up steps, batch 256, symmetries) run
on them (``warm_start.learn_labels``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

from ultimate_rl.nn import resolve_device
from ultimate_rl.train import check_config
from ultimate_rl.train.learner import Learner
from ultimate_rl.train.run import compose_train_config
from ultimate_rl.train.warm_start import learn_labels, save_warm_start


def main() -> None:
    folder, init, steps, value, out = sys.argv[1:6]
    parts = [np.load(chunk) for chunk in sorted(Path(folder).glob("chunk_*.npz"))]
    states = np.concatenate([part["states"] for part in parts])
    policies = np.concatenate([part["policies"] for part in parts])
    q = np.concatenate([part["root_values"] for part in parts])
    positions = np.load(Path(folder) / "positions.npz")
    assert (positions["states"][: len(states)] == states).all(), "chunks out of order"
    z = positions["outcomes"][: len(states)]
    values = {"q": q, "z": z, "mix": (q + z) / 2}[value].astype(np.float32)
    overrides = [
        "experiment=uttt_cpu",
        f"train.init_from={init}",
        f"train.replay_window={len(states)}",
        "train.min_replay=1",
        *sys.argv[6:],
    ]
    run = check_config(compose_train_config(overrides))
    torch.set_num_threads(2)
    learner = Learner(run, resolve_device("cpu"))
    learner.init_weights(init)
    losses = learn_labels(learner, (states, policies, values), int(steps))
    print(f"{len(states)} labels, value target {value}:")
    print({name: round(loss, 4) for name, loss in losses.items()})
    print("wrote", save_warm_start(learner, Path(out)))


if __name__ == "__main__":
    main()
