"""Run folders: where a run lives, and what ``resume`` means.

``resume=false`` starts a new run in Hydra's output folder (refusing one that already holds a
checkpoint). ``resume=true`` continues the run in Hydra's output folder (pass
``hydra.run.dir=runs/...``); ``resume=PATH`` continues the run in PATH, which is then Hydra's
output folder too (``resumed_run_dir``), so resuming creates no new folder. A resumed run keeps
its saved config; command-line ``key=value`` overrides (e.g. ``train.iterations=200``) apply on
top, but config group choices (``model=...``) cannot change under a run. One run at a time
holds a folder (``RunFolderLock``): a second ``train.py`` on it is refused, naming the first.
"""

from __future__ import annotations

import fcntl
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from omegaconf import DictConfig, OmegaConf

from ultimate_rl.train.checkpoints import CHECKPOINT, RunFolderError, has_checkpoint
from ultimate_rl.train.config import ConfigError

GROUPS = ("game", "model", "search", "selfplay", "optim", "eval", "experiment")
RUN_DIR_RESOLVER = "train_run_dir"  # the name configs/train.yaml's hydra.run.dir calls


def resumed_run_dir(resume: Any, new_run_dir: str) -> str:
    """Hydra's output folder: the run folder ``resume=PATH`` names, else ``new_run_dir``.

    ``configs/train.yaml`` sets ``hydra.run.dir`` through this (``scripts/train.py`` registers
    it as ``RUN_DIR_RESOLVER``), so Hydra does not create an empty timestamped folder for a
    resumed run. A PATH that holds no run falls back to ``new_run_dir``; ``prepare_run`` then
    reports it.
    """
    if isinstance(resume, str) and has_checkpoint(Path(resume)):
        return resume
    return new_run_dir


def prepare_run(cfg: DictConfig, output_dir: Path, overrides: list[str]) -> tuple[DictConfig, Path]:
    """The config to train with and the run folder, per the ``resume`` setting."""
    resume = cfg.resume
    if resume is False or resume is None or str(resume).lower() == "false":
        if has_checkpoint(output_dir):
            raise ConfigError(
                f"{output_dir} already holds a run; continue it with resume=true, or pick "
                "another hydra.run.dir"
            )
        return cfg, output_dir
    run_dir = output_dir if resume is True or str(resume).lower() == "true" else Path(resume)
    if not has_checkpoint(run_dir) or not (run_dir / "config.yaml").is_file():
        raise ConfigError(
            f"nothing to resume in {run_dir}: it needs config.yaml and a checkpoint ({CHECKPOINT} "
            "or a numbered snapshot beside it); give "
            "resume=PATH of a run folder (runs/...), or resume=true with hydra.run.dir=PATH"
        )
    changes = [o for o in overrides if not o.startswith(("resume=", "hydra."))]
    groups = [o for o in changes if o.split("=", 1)[0].lstrip("+~") in GROUPS]
    if groups:
        raise ConfigError(
            f"a resumed run keeps its config groups; cannot apply {groups}. Override single "
            "keys instead (e.g. train.iterations=200), or start a new run"
        )
    saved = OmegaConf.load(run_dir / "config.yaml")
    assert isinstance(saved, DictConfig)
    merged = OmegaConf.merge(saved, OmegaConf.from_dotlist(changes))
    assert isinstance(merged, DictConfig)
    merged.resume = str(run_dir)
    return merged, run_dir


LOCK = "train.lock"


class RunFolderLock:
    """Holds a run folder for this process: an exclusive ``flock`` on ``RUN/train.lock``,
    which names the holder. The kernel drops the lock when the holder dies, however it dies
    (SIGKILL too), so a dead run never bars its resume; the file itself stays, harmless."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / LOCK
        self.handle: TextIO | None = None

    def __enter__(self) -> RunFolderLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = self.path.open("a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "a process that has not written its name yet"
            handle.close()
            raise RunFolderError(
                f"{self.path.parent} is in use by a live training run ({holder}); wait for it "
                "to end, stop it with kill -TERM PID (it saves first, then resume), or train in "
                "another folder"
            ) from None
        handle.seek(0)
        handle.truncate()
        started = time.strftime("%Y-%m-%d %H:%M:%S")
        handle.write(f"pid {os.getpid()} on {socket.gethostname()}, started {started}: ")
        handle.write(" ".join(sys.argv) + "\n")
        handle.flush()
        self.handle = handle
        return self

    def __exit__(self, *exc: object) -> None:
        if self.handle is not None:
            self.handle.truncate(0)
            self.handle.close()  # closing releases the lock
            self.handle = None


CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs"


def compose_train_config(overrides: list[str]) -> DictConfig:
    """The training config as ``scripts/train.py`` would compose it with ``overrides``.

    Works inside a running Hydra app (e.g. ``scripts/bench.py``) and outside one (tests).
    """
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    if GlobalHydra.instance().is_initialized():
        return compose(config_name="train", overrides=overrides)
    with initialize_config_dir(str(CONFIG_DIR), version_base=None):
        return compose(config_name="train", overrides=overrides)
