"""A run's ``checkpoints/`` folder: the resume point, numbered model snapshots, and pruning.

``checkpoints/latest.pt`` holds the learner's ``state_dict`` in the checkpoint layout of
``ultimate_rl.nn.checkpoint`` (model weights and optimiser state in their own fields; progress,
replay buffer, RNG streams, the gated self-play weights, the trained weights where
``optim.ema_decay`` averages them (the model field holds the average) and the run's config in
``extra``), so run folders written before the ``Learner`` existed resume unchanged.
``checkpoints/iter_N.pt`` holds the model with the progress counters and random streams: what
agents and the evaluator load, and the fallback resume point. Every file is written atomically.

What survives what: a kill at any moment leaves the last complete checkpoint (a save it
interrupted leaves only a temp file, removed at the next start). A ``latest.pt`` damaged on
disk, or missing, is moved aside (never deleted) and the run resumes from the newest intact
snapshot, which lacks only the optimiser's moments and the replay buffer (self-play refills it);
the message says what was lost. A write that fails (a full disk) stops the run with the
previous checkpoint intact.
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ultimate_rl.nn import (
    CheckpointError,
    CheckpointNotFoundError,
    DamagedCheckpointError,
    load_checkpoint,
    save_checkpoint,
)
from ultimate_rl.nn.atomic import remove_stale_temp_files
from ultimate_rl.train.config import RunConfig, TrainSection
from ultimate_rl.train.learner import Learner
from ultimate_rl.train.logs import write_json

CHECKPOINT = "checkpoints/latest.pt"
RECORD = "latest.json"  # beside latest.pt: its iteration, step and replay size


class RunFolderError(RuntimeError):
    """A run folder that cannot be resumed or written as asked; the message names the fix."""


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
        ``learner`` if the run has one (the newest intact snapshot when ``latest.pt`` is damaged
        or missing); a new run starts from ``train.init_from`` if set."""
        for leftover in remove_stale_temp_files(self.folder):
            tqdm.write(f"removed {leftover}: the temp file of a save that a kill interrupted")
        if not has_checkpoint(self.run_dir):
            if self.run.train.init_from:
                source = self.run.train.init_from
                growth = learner.init_weights(source)
                grown = f", grown {growth}" if growth else ""
                if self.run.train.init_replay:
                    grown += f", and its replay window ({len(learner.replay):,} positions)"
                tqdm.write(f"starting from the weights of {source}{grown}")
            return
        try:
            checkpoint = load_checkpoint(self.latest, expected_game=self.run.game)
        except (DamagedCheckpointError, CheckpointNotFoundError) as err:
            self._restore_snapshot(learner, err)
            return
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

    def _restore_snapshot(self, learner: Learner, problem: CheckpointError) -> None:
        """``latest.pt`` is unusable: moves it (and any damaged snapshot) aside and resumes from
        the newest intact snapshot, saying what was lost; none intact is a ``RunFolderError``."""
        damaged = isinstance(problem, DamagedCheckpointError)
        notes = [
            f"{self.latest.name} is damaged; moved it to {move_aside(self.latest)}"
            if damaged
            else f"{self.latest.name} is missing"
        ]
        lost = saved_record(self.folder)
        for path in sorted(self.folder.glob("iter_*.pt"), reverse=True):
            try:
                snapshot = load_checkpoint(path, expected_game=self.run.game)
            except DamagedCheckpointError:
                notes.append(f"{path.name} is damaged too; moved it to {move_aside(path)}")
                continue
            learner.resume_from_snapshot(snapshot.model_state, snapshot.step, snapshot.extra)
            progress = learner.progress
            behind = lost.get("iteration", progress.iteration) - progress.iteration
            tqdm.write(
                f"{'; '.join(notes)}. Resumed {self.run_dir} from {path.name} at iteration "
                f"{progress.iteration}, step {progress.step}; lost: "
                + (f"{behind} iteration(s), " if behind > 0 else "")
                + f"the optimiser's moments and the replay buffer ({lost.get('replay', '?')} "
                "positions; self-play refills it)"
            )
            return
        raise RunFolderError(
            f"no intact checkpoint in {self.folder} ({'; '.join(notes)}): start a new run in "
            "another folder (hydra.run.dir=...), or put back a copy of latest.pt"
        )

    def save(self, learner: Learner) -> None:
        """The resume point (everything, the gated self-play weights too), a record of what it
        holds (``latest.json``, which says what a damaged one lost), then a numbered snapshot;
        older snapshots beyond ``train.keep_checkpoints`` are pruned. A failed write (a full
        disk) is a ``RunFolderError`` that says which checkpoint is intact."""
        state = learner.state_dict()
        del state["model"]  # save_checkpoint stores the model's weights from the model itself
        try:
            save_checkpoint(
                self.latest,
                optimizer_state=state.pop("optimizer"),
                extra={**state, "config": self.config},
                **self._fields(learner),
            )
        except OSError as err:
            raise self._write_error(self.latest, err, "the previous") from None
        progress = learner.progress
        record = {"iteration": progress.iteration, "step": progress.step}
        write_json(self.folder / RECORD, {**record, "replay": len(learner.replay)})
        try:
            self.snapshot(learner)
        except OSError as err:
            raise self._write_error(self.snapshot_path(learner), err, "this iteration's") from None
        prune_snapshots(self.folder, self.run.train)

    def _write_error(self, path: Path, err: OSError, which: str) -> RunFolderError:
        reason = err.strerror or str(err)
        return RunFolderError(
            f"could not write {path.name} in {self.folder}: {reason}; {which} {self.latest.name} "
            f"is intact. Free some space, then resume with resume={self.run_dir}"
        )

    def snapshot(self, learner: Learner) -> Path:
        """The model as ``checkpoints/iter_N.pt`` (what agents and the evaluator load), with the
        progress and random streams, so a run whose ``latest.pt`` is lost resumes from it."""
        path = self.snapshot_path(learner)
        save_checkpoint(
            path,
            extra={
                "iteration": learner.progress.iteration,
                "minutes": learner.progress.seconds / 60,  # for a strength-by-minute curve
                **learner.counters(),
            },
            **self._fields(learner),
        )
        return path

    def snapshot_path(self, learner: Learner) -> Path:
        return self.folder / f"iter_{learner.progress.iteration:05d}.pt"

    def _fields(self, learner: Learner) -> dict[str, Any]:
        return {
            "model": learner.network,
            "model_config": learner.network.config,
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


def has_checkpoint(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds a run to resume: ``latest.pt`` or, should that be lost, a
    numbered snapshot."""
    folder = (run_dir / CHECKPOINT).parent
    return (run_dir / CHECKPOINT).is_file() or any(folder.glob("iter_*.pt"))


def move_aside(path: Path) -> Path:
    """Renames a damaged file to ``NAME.damaged-TIME`` beside it (kept for a post-mortem,
    never deleted); returns the new path."""
    stem = f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}"
    names = itertools.chain([stem], (f"{stem}-{n}" for n in itertools.count(1)))
    target = next(path.with_name(name) for name in names if not path.with_name(name).exists())
    path.rename(target)
    return target


def saved_record(folder: Path) -> dict[str, Any]:
    """``latest.json``: what the last saved ``latest.pt`` held (empty if unreadable)."""
    try:
        record = json.loads((folder / RECORD).read_text())
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}
