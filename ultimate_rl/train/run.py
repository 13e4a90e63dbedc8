"""Run folders: where a run lives, and what ``resume`` means.

``resume=false`` starts a new run in Hydra's output folder (refusing one that already holds a
checkpoint). ``resume=true`` continues the run in Hydra's output folder (pass
``hydra.run.dir=runs/...``); ``resume=PATH`` continues the run in PATH, which is then Hydra's
output folder too (``resumed_run_dir``), so resuming creates no new folder. A resumed run keeps
its saved config; command-line ``key=value`` overrides (e.g. ``train.iterations=200``) apply on
top, but config group choices (``model=...``) cannot change under a run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from ultimate_rl.train.checkpoints import CHECKPOINT
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
    if isinstance(resume, str) and (Path(resume) / CHECKPOINT).is_file():
        return resume
    return new_run_dir


def prepare_run(cfg: DictConfig, output_dir: Path, overrides: list[str]) -> tuple[DictConfig, Path]:
    """The config to train with and the run folder, per the ``resume`` setting."""
    resume = cfg.resume
    if resume is False or resume is None or str(resume).lower() == "false":
        if (output_dir / CHECKPOINT).exists():
            raise ConfigError(
                f"{output_dir} already holds a run; continue it with resume=true, or pick "
                "another hydra.run.dir"
            )
        return cfg, output_dir
    run_dir = output_dir if resume is True or str(resume).lower() == "true" else Path(resume)
    if not (run_dir / CHECKPOINT).is_file() or not (run_dir / "config.yaml").is_file():
        raise ConfigError(
            f"nothing to resume in {run_dir}: it has no {CHECKPOINT} and config.yaml; give "
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
