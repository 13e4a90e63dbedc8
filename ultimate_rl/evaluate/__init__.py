"""Evaluation: the arena (matches between agents), the MCTS ladder, Elo with 95% intervals,
SPRT, and reports (JSON, markdown, PNG). See ``scripts/evaluate.py`` for the command line.

The training loop's entry point: ``evaluate_agent`` (Elo against the ladder, through
``evaluate.training.rating_hook``). Gating is the training loop's own batched match
(``train.evaluation.gating_match``), since training must not import this package.
"""

from __future__ import annotations

from ultimate_rl.evaluate.arena import (
    MatchConfig,
    MatchResult,
    check_agent,
    play_match,
    replay,
)
from ultimate_rl.evaluate.elo import PlayerRating, RatedGame, Ratings, fit_ratings
from ultimate_rl.evaluate.ladder import (
    DEFAULT_ANCHOR,
    DEFAULT_LADDER,
    Evaluation,
    EvaluationSettings,
    evaluate_agent,
    evaluate_agents,
)
from ultimate_rl.evaluate.records import GameRecord
from ultimate_rl.evaluate.report import markdown_table, plot_elo, write_report
from ultimate_rl.evaluate.solved import SolvedReport
from ultimate_rl.evaluate.specs import AgentSpec, EvaluationError, parse_spec
from ultimate_rl.evaluate.sprt import SPRTConfig, SPRTResult, sprt

__all__ = [
    "DEFAULT_ANCHOR",
    "DEFAULT_LADDER",
    "AgentSpec",
    "Evaluation",
    "EvaluationError",
    "EvaluationSettings",
    "GameRecord",
    "MatchConfig",
    "MatchResult",
    "PlayerRating",
    "RatedGame",
    "Ratings",
    "SPRTConfig",
    "SPRTResult",
    "SolvedReport",
    "check_agent",
    "evaluate_agent",
    "evaluate_agents",
    "fit_ratings",
    "markdown_table",
    "parse_spec",
    "play_match",
    "plot_elo",
    "replay",
    "sprt",
    "write_report",
]
