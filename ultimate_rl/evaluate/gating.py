"""Gating (AlphaGo Zero): a new network replaces the self-play network only if it wins a match
at a set score. Off by default, as in AlphaZero, which always plays with the latest network."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ultimate_rl.evaluate.arena import MatchConfig, MatchResult, play_match
from ultimate_rl.evaluate.specs import AgentFactory, AgentSpecLike, EvaluationError, build_agent
from ultimate_rl.games import Game


@dataclass(frozen=True)
class GatingConfig:
    """``threshold`` is the candidate's required mean score (AlphaGo Zero used 0.55 over 400)."""

    enabled: bool = False
    num_games: int = 40
    threshold: float = 0.55
    opening_plies: int = 2
    seed: int = 0
    workers: int | None = 1

    def __post_init__(self) -> None:
        if not 0.0 < self.threshold < 1.0:
            raise EvaluationError(f"gating threshold is a score in (0, 1), got {self.threshold}")
        if self.num_games < 2:
            raise EvaluationError(f"gating needs at least 2 games (one per side): {self.num_games}")


@dataclass(frozen=True)
class GateDecision:
    """Whether the candidate is accepted, and the match that decided it (None when disabled)."""

    accepted: bool
    match: MatchResult | None

    @property
    def score(self) -> float | None:
        return self.match.score if self.match else None


def gate(
    game: Game,
    candidate: AgentSpecLike,
    incumbent: AgentSpecLike,
    config: GatingConfig,
    record_path: str | Path | None = None,
    agent_factory: AgentFactory = build_agent,
) -> GateDecision:
    """Plays candidate against incumbent; accepted when its score reaches the threshold.
    Disabled gating accepts without playing."""
    if not config.enabled:
        return GateDecision(True, None)
    match = play_match(
        game,
        candidate,
        incumbent,
        MatchConfig(
            num_games=config.num_games,
            opening_plies=config.opening_plies,
            seed=config.seed,
            workers=config.workers,
            progress=False,
        ),
        record_path,
        agent_factory,
    )
    return GateDecision(match.score >= config.threshold, match)
