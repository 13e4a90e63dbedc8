"""A run's ``checkpoints/`` folder: the resume point, numbered model snapshots, and pruning.

``checkpoints/latest.pt`` holds the learner's ``state_dict`` in the checkpoint layout of
``ultimate_rl.nn.checkpoint`` (model weights and optimiser state in their own fields; progress,
replay buffer, RNG streams, the gated self-play weights and the run's config in ``extra``), so
run folders written before the ``Learner`` existed resume unchanged. ``checkpoints/iter_N.pt``
holds the model alone: what agents and the evaluator load. Every file is written atomically.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tqdm import tqdm

from ultimate_rl.nn import load_checkpoint, save_checkpoint
from ultimate_rl.nn.atomic import remove_stale_temp_files
from ultimate_rl.train.config import RunConfig, TrainSection
from ultimate_rl.train.learner import Learner

CHECKPOINT = "checkpoints/latest.pt"


class RunCheckpoints:
    """Writes and reads one run's checkpoints; ``config`` (the resolved config as plain data)
    goes into the resume point, for the record."""

    def __init__(self, run_dir: Path, run: RunConfig, config: dict[str, Any]) -> None:
        self.run_dir = run_dir
        self.latest = run_dir / CHECKPOINT
        self.folder = self.latest.parent
        self.run, self.config = run, config

    def restore(self, learner: Learner) -> None:
        """Removes the temp files of saves a kill interrupted, then loads the resume point into
        ``learner`` if the run has one; a new run starts from ``train.init_from`` if set."""
        for leftover in remove_stale_temp_files(self.folder):
            tqdm.write(f"removed {leftover}: the temp file of a save that a kill interrupted")
        if not self.latest.exists():
            if self.run.train.init_from:
                learner.init_weights(self.run.train.init_from)
                tqdm.write(f"starting from the weights of {self.run.train.init_from}")
            return
        checkpoint = load_checkpoint(self.latest, expected_game=self.run.game)
        state = {
            **checkpoint.extra,
            "model": checkpoint.model_state,
            "optimizer": checkpoint.optimizer_state,
        }
        learner.load_state_dict(state)
        progress = learner.progress
        tqdm.write(
            f"resumed {self.run_dir} at iteration {progress.iteration}, step {progress.step}"
        )

    def save(self, learner: Learner) -> None:
        """The resume point (everything, the gated self-play weights too), then a numbered model
        snapshot; older snapshots beyond ``train.keep_checkpoints`` are pruned."""
        state = learner.state_dict()
        del state["model"]  # save_checkpoint stores the model's weights from the model itself
        save_checkpoint(
            self.latest,
            optimizer_state=state.pop("optimizer"),
            extra={**state, "config": self.config},
            **self._fields(learner),
        )
        self.snapshot(learner)
        prune_snapshots(self.folder, self.run.train)

    def snapshot(self, learner: Learner) -> Path:
        """The model alone as ``checkpoints/iter_N.pt`` (what agents and the evaluator load)."""
        path = self.folder / f"iter_{learner.progress.iteration:05d}.pt"
        save_checkpoint(
            path,
            extra={
                "iteration": learner.progress.iteration,
                "minutes": learner.progress.seconds / 60,  # for a strength-by-minute curve
            },
            **self._fields(learner),
        )
        return path

    def _fields(self, learner: Learner) -> dict[str, Any]:
        return {
            "model": learner.model,
            "model_config": learner.model.config,
            "game_name": self.run.game.name,
            "game_options": self.run.game_options,
            "step": learner.progress.step,
        }


def prune_snapshots(folder: Path, train: TrainSection) -> None:
    """Keeps the newest ``train.keep_checkpoints`` snapshots and those whose iteration is a
    multiple of ``train.keep_every``."""
    keep_every = train.keep_every
    snapshots = [
        path
        for path in sorted(folder.glob("iter_*.pt"))
        if not (keep_every and int(path.stem.removeprefix("iter_")) % keep_every == 0)
    ]
    for old in snapshots[: max(len(snapshots) - train.keep_checkpoints, 0)]:
        old.unlink(missing_ok=True)
