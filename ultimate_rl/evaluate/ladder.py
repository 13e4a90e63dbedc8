"""The MCTS ladder and the Python API the training loop calls: agents in, Elo with intervals out.

The ladder (default: random, UCT-100, UCT-1,000, UCT-10,000) is calibrated by matches between
neighbouring rungs; every evaluated agent then plays every rung. One Bradley–Terry fit over all
those games gives every rating, anchored so that UCT-1,000 = 1000 (``EvaluationSettings.anchor``;
without the anchor among the players the mean rating is pinned at ``anchor_elo`` instead).

With a ``records_dir`` every match is saved to (and resumed from) its own JSONL file there, so the
ladder's own games are played once and reused by later evaluations, and an interrupted evaluation
continues where it stopped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations, pairwise
from pathlib import Path
from typing import Any

from ultimate_rl.evaluate.arena import MatchConfig, MatchResult, check_agent, play_match
from ultimate_rl.evaluate.elo import PlayerRating, Ratings, fit_ratings
from ultimate_rl.evaluate.solved import PERFECT, SolvedReport, solved_report
from ultimate_rl.evaluate.specs import (
    AgentFactory,
    AgentSpec,
    AgentSpecLike,
    EvaluationError,
    build_agent,
    parse_spec,
)
from ultimate_rl.evaluate.sprt import SPRTConfig
from ultimate_rl.games import Game, is_solvable

DEFAULT_LADDER: tuple[str, ...] = (
    "random",
    "uct:num_simulations=100",
    "uct:num_simulations=1000",
    "uct:num_simulations=10000",
)
DEFAULT_ANCHOR = "uct-1000"


@dataclass(frozen=True)
class EvaluationSettings:
    """How much to play. ``ladder_games`` is per pair of neighbouring rungs (None: the same as
    ``games_per_opponent``, 0: no calibration). ``solved_positions`` > 0 adds, on solved games,
    the optimal-move rate on that many positions and a match against the ``perfect`` agent from
    the start position (a random opening could hand either side a lost game), and with
    ``every_line`` each network agent's walk against every opponent line as either side."""

    games_per_opponent: int = 40
    ladder_games: int | None = None
    opening_plies: int = 2
    seed: int = 0
    time_per_move: float | None = None
    workers: int | None = None
    anchor: str = DEFAULT_ANCHOR
    anchor_elo: float = 1000.0
    prior_draws: float = 1.0
    sprt: SPRTConfig | None = None
    solved_positions: int = 0
    positions_seed: int = 1234
    perfect_games: int = 20
    every_line: bool = True
    progress: bool = True
    backend: str = "processes"
    ray_address: str | None = None

    def match(self, num_games: int) -> MatchConfig:
        return MatchConfig(
            num_games=num_games,
            opening_plies=self.opening_plies,
            seed=self.seed,
            time_per_move=self.time_per_move,
            workers=self.workers,
            sprt=self.sprt,
            progress=self.progress,
            backend=self.backend,
            ray_address=self.ray_address,
        )


@dataclass
class Evaluation:
    """Ratings of every player, the matches behind them, and per-subject extras."""

    ratings: Ratings
    matches: list[MatchResult]
    subjects: list[str]  # labels of the evaluated agents, in the order given
    opponents: list[str]  # labels of the ladder rungs
    steps: dict[str, int] = field(default_factory=dict)  # training step of checkpoint subjects
    solved: dict[str, SolvedReport] = field(default_factory=dict)

    def rating(self, label: str | None = None) -> PlayerRating:
        """The rating of ``label`` (default: the first evaluated agent)."""
        return self.ratings[label if label is not None else self.subjects[0]]

    def matches_of(self, label: str) -> list[MatchResult]:
        return [m for m in self.matches if label in (m.agent_a.label, m.agent_b.label)]

    def move_seconds(self, label: str) -> tuple[float, float]:
        """Mean and slowest seconds per move ``label`` played over all its matches (how a
        "at most N s per move" figure is read); NaNs if it played no move."""
        times = [t for m in self.matches_of(label) for t in m.move_times(label)]
        return (sum(times) / len(times), max(times)) if times else (math.nan, math.nan)

    def scalars(self, label: str | None = None) -> dict[str, float]:
        """Flat figures for TensorBoard: Elo, its interval, and the score against each opponent."""
        rating = self.rating(label)
        out = {
            "elo": rating.elo,
            "elo_ci_low": rating.ci_low,
            "elo_ci_high": rating.ci_high,
            "score": rating.score,
            "draw_rate": rating.draw_rate,
        }
        for match in self.matches_of(rating.name):
            a_is_subject = match.agent_a.label == rating.name
            other = match.agent_b.label if a_is_subject else match.agent_a.label
            out[f"score_vs/{other}"] = match.score if a_is_subject else 1.0 - match.score
        if rating.name in self.solved:
            report = self.solved[rating.name]
            out["optimal_move_rate"] = report.optimal_rate
            out["score_vs/perfect"] = report.vs_perfect.score
            for side, walk in (report.every_line or {}).items():
                out[f"every_line/lost_{side}"] = walk["lost"]
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "ratings": self.ratings.as_dict(),
            "subjects": self.subjects,
            "opponents": self.opponents,
            "steps": self.steps,
            "matches": [m.summary() for m in self.matches],
            "move_seconds": {
                r: dict(zip(("mean", "max"), self.move_seconds(r), strict=True))
                for r in self.ratings.players
            },
            "solved": {k: v.as_dict() for k, v in self.solved.items()},
        }


def evaluate_agent(
    game: Game,
    agent: AgentSpecLike,
    opponents: Sequence[AgentSpecLike] = DEFAULT_LADDER,
    games_per_opponent: int = 40,
    settings: EvaluationSettings | None = None,
    records_dir: str | Path | None = None,
    agent_factory: AgentFactory = build_agent,
) -> Evaluation:
    """Rates one agent against the ladder (the call the training loop makes every few iterations).

    ``evaluation.rating()`` holds its Elo and 95% interval, ``evaluation.matches_of(label)`` the
    win/draw/loss record per opponent, ``evaluation.scalars()`` the same as TensorBoard figures.
    """
    settings = settings or EvaluationSettings()
    settings = replace(settings, games_per_opponent=games_per_opponent)
    return evaluate_agents(game, [agent], opponents, settings, records_dir, agent_factory)


def evaluate_agents(
    game: Game,
    subjects: Sequence[AgentSpecLike],
    opponents: Sequence[AgentSpecLike] = DEFAULT_LADDER,
    settings: EvaluationSettings | None = None,
    records_dir: str | Path | None = None,
    agent_factory: AgentFactory = build_agent,
    round_robin: bool = False,
    steps: Mapping[str, int] | None = None,
) -> Evaluation:
    """Rates ``subjects`` against the ``opponents`` ladder (and each other with ``round_robin``).

    Every spec is built (and every checkpoint read) before the first game, so a bad one fails
    fast. ``steps`` maps subject labels to training steps, for the Elo-vs-step plot.
    """
    settings = settings or EvaluationSettings()
    subject_specs = [parse_spec(s) for s in subjects]
    ladder = [parse_spec(s) for s in opponents]
    _check_unique([*subject_specs, *ladder])
    with_solver = settings.solved_positions > 0 and is_solvable(game)
    for spec in [*subject_specs, *ladder, *([parse_spec(PERFECT)] if with_solver else [])]:
        check_agent(game, spec, agent_factory)
    ladder_games = (
        settings.games_per_opponent if settings.ladder_games is None else settings.ladder_games
    )
    pairs = [(a, b, ladder_games) for a, b in pairwise(ladder)] if ladder_games else []
    pairs += [(s, o, settings.games_per_opponent) for s in subject_specs for o in ladder]
    if round_robin:
        pairs += [(a, b, settings.games_per_opponent) for a, b in combinations(subject_specs, 2)]
    if not pairs:
        raise EvaluationError(
            "nothing to play: give at least one opponent, or two agents with round_robin"
        )
    records = Path(records_dir) if records_dir is not None else None
    matches = [
        play_match(
            game,
            a,
            b,
            settings.match(num_games),
            records / f"{_slug(a.label)}__vs__{_slug(b.label)}.jsonl" if records else None,
            agent_factory,
        )
        for a, b, num_games in pairs
    ]
    labels = [s.label for s in [*ladder, *subject_specs]]
    anchor = settings.anchor if settings.anchor in labels else None
    ratings = fit_ratings(
        (r.as_rated() for m in matches for r in m.records),
        anchor=anchor,
        anchor_elo=settings.anchor_elo,
        prior_draws=settings.prior_draws,
        players=labels,
    )
    solved = {
        spec.label: solved_report(
            game,
            spec,
            settings.solved_positions,
            settings.positions_seed,
            replace(settings.match(settings.perfect_games), opening_plies=0),
            records / f"{_slug(spec.label)}__vs__{PERFECT}.jsonl" if records else None,
            agent_factory,
            settings.every_line,
        )
        for spec in subject_specs
        if with_solver
    }
    return Evaluation(
        ratings,
        matches,
        [s.label for s in subject_specs],
        [s.label for s in ladder],
        dict(steps or {}),
        solved,
    )


def _check_unique(specs: list[AgentSpec]) -> None:
    labels = [s.label for s in specs]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise EvaluationError(
            f"players {repeated} appear twice; give each a distinct label, "
            "e.g. 'uct:num_simulations=100,seed=1,label=uct-100b'"
        )


def _slug(label: str) -> str:
    """A file-name-safe form of a player label."""
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", label).strip("_") or "player"
