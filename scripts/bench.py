"""Benchmarks: `python scripts/bench.py suite=engine|search|selfplay|all`.

Prints a readable table and, as its LAST line, one JSON object with every figure.
"""

from __future__ import annotations

import json

import hydra
from omegaconf import DictConfig

from ultimate_rl.benchmarks import run_suites
from ultimate_rl.runtime.machine import this_machine


@hydra.main(version_base=None, config_path="../configs", config_name="bench")
def main(cfg: DictConfig) -> None:
    figures = run_suites(cfg.suite, cfg)
    print(f"machine: {this_machine().label()}")  # figures compare only on one machine
    width = max(len(k) for k in figures)
    print(f"{'figure':<{width}}  value")
    for key, value in figures.items():
        if isinstance(value, str):  # a name, such as the inference path a suite chose
            shown = value
        elif isinstance(value, float) and abs(value) < 10:
            shown = f"{value:,.3f}"
        else:
            shown = f"{value:,.0f}"
        print(f"{key:<{width}}  {shown}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
