"""Evaluate agents: `python scripts/evaluate.py checkpoint=PATH` (or `run=RUN_DIR`, or
`game=uttt 'agents=[random,"uct:num_simulations=100"]'`). Settings: configs/evaluate.yaml.

Writes evaluation.json, evaluation.md and elo.png; running the same command again continues an
interrupted evaluation.
"""

from __future__ import annotations

import sys

import hydra
from omegaconf import DictConfig, OmegaConf

from ultimate_rl.evaluate import EvaluationError
from ultimate_rl.evaluate.cli import evaluate_from_config
from ultimate_rl.evaluate.report import markdown_table
from ultimate_rl.games import GameError


@hydra.main(version_base=None, config_path="../configs", config_name="evaluate")
def main(cfg: DictConfig) -> None:
    try:
        evaluation, written = evaluate_from_config(OmegaConf.to_container(cfg, resolve=True))
    except (EvaluationError, GameError) as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    print(markdown_table(evaluation))
    for path in written:
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
