"""Benchmark suites. Each suite module has ``run(cfg) -> dict[str, float]`` of named figures."""

from __future__ import annotations

import importlib
from typing import Any

SUITES = ("engine", "search", "selfplay", "scale", "play")
ALL = ("engine", "search", "selfplay")  # scale and play start servers and processes: by name


def run_suites(suite: str, cfg: Any) -> dict[str, float]:
    """Runs one suite by name, or every suite that exists for ``all``."""
    names = ALL if suite == "all" else (suite,)
    if suite != "all" and suite not in SUITES:
        raise ValueError(f"unknown benchmark suite {suite!r}; choose one of {[*SUITES, 'all']}")
    figures: dict[str, float] = {}
    for name in names:
        try:
            module = importlib.import_module(f"ultimate_rl.benchmarks.{name}")
        except ModuleNotFoundError as err:
            if suite == "all" and err.name == f"ultimate_rl.benchmarks.{name}":
                continue  # a suite not written yet
            raise
        figures.update(module.run(cfg))
    return figures
