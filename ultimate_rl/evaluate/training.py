"""The evaluator inside a training run: the Elo hook that ``scripts/train.py`` hands to ``train``.

``ultimate_rl.train`` sits below this package and must not import it, so the entry point builds
the hook here and passes it in. Every ``eval.elo_every`` iterations the loop saves a snapshot and
calls the hook, which rates it against the ``eval.elo_opponents`` ladder (``evaluate_agent``,
one process, no progress bar) and returns ``Evaluation.scalars()``: Elo, its 95% interval and the
score against each rung, logged under ``eval/``. Every game goes to ``records_dir``, so the
ladder's calibration games are played once per run and an interrupted rating resumes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ultimate_rl.evaluate.arena import check_agent
from ultimate_rl.evaluate.ladder import EvaluationSettings, evaluate_agent
from ultimate_rl.evaluate.specs import parse_spec
from ultimate_rl.games import Game


def rating_hook(
    game: Game,
    eval_cfg: Mapping[str, Any],
    records_dir: Path,
    algorithm: str = "puct",
    seed: int = 0,
) -> Callable[[Path, int], dict[str, float]]:
    """The hook for ``train(..., rating_hook=...)``: ``(snapshot path, step) -> scalars``.

    Reads ``elo_opponents`` (agent specs), ``elo_games`` (per opponent) and ``num_simulations``
    (the network's search, with ``algorithm``) from ``eval_cfg``. The ladder's specs are
    checked now, so a bad one fails before training starts.
    """
    opponents = [parse_spec(str(spec)) for spec in eval_cfg["elo_opponents"]]
    for spec in opponents:
        check_agent(game, spec)
    games = int(eval_cfg["elo_games"])
    simulations = int(eval_cfg["num_simulations"])
    settings = EvaluationSettings(games_per_opponent=games, seed=seed, workers=1, progress=False)

    def rate(checkpoint: Path, step: int) -> dict[str, float]:
        network = {
            "name": "network",
            "checkpoint": str(checkpoint),
            "num_simulations": simulations,
            "algorithm": algorithm,
            "label": f"step-{step}",
        }
        evaluation = evaluate_agent(game, network, opponents, games, settings, records_dir)
        return evaluation.scalars()

    return rate
