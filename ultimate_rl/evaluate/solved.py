"""Solved games (numerical tic-tac-toe, tic-tac-toe 3x3/4x4): play measured against perfect play.

Two figures an Elo number cannot give: the share of a fixed, seeded set of positions (sampled by
random play, so every run and every checkpoint is scored on the same ones) where the agent's move
keeps the exact game value, and its match result against the ``perfect`` agent. The positions
come from ``ultimate_rl.games.sample_positions``, which training's evaluation uses too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ultimate_rl.evaluate.arena import MatchConfig, MatchResult, play_match
from ultimate_rl.evaluate.specs import AgentFactory, AgentSpec, build_agent, takes_option
from ultimate_rl.games import Game, sample_positions, solve

PERFECT = "perfect"  # the exact solver's agent in ``ultimate_rl.agents``


@dataclass
class SolvedReport:
    """Optimal-move rate on the fixed positions and the match against the exact solver."""

    positions: int
    optimal: int
    vs_perfect: MatchResult

    @property
    def optimal_rate(self) -> float:
        return self.optimal / self.positions

    def as_dict(self) -> dict[str, Any]:
        return {
            "positions": self.positions,
            "optimal": self.optimal,
            "optimal_rate": self.optimal_rate,
            "vs_perfect": self.vs_perfect.summary(),
        }


def optimal_move_rate(
    game: Game,
    agent_spec: AgentSpec,
    positions: list[np.ndarray],
    agent_factory: AgentFactory,
    positions_seed: int,
) -> int:
    """How many of ``positions`` the agent answers with a value-keeping move (a seeded agent
    is seeded with ``positions_seed``, so the figure is reproducible)."""
    agent = agent_factory(agent_spec, None)
    if takes_option(agent, "seed"):
        agent = agent_factory(agent_spec, positions_seed)
    optimal = 0
    for state in positions:
        _, best = solve(game, state)
        optimal += int(agent.select_action(game, state)) in set(best.tolist())
    return optimal


def solved_report(
    game: Game,
    agent_spec: AgentSpec,
    num_positions: int,
    positions_seed: int,
    match: MatchConfig,
    record_path: Path | None = None,
    agent_factory: AgentFactory = build_agent,
) -> SolvedReport:
    """The report for ``agent_spec`` (on a game where ``is_solvable``)."""
    positions = sample_positions(game, num_positions, positions_seed)
    optimal = optimal_move_rate(game, agent_spec, positions, agent_factory, positions_seed)
    vs_perfect = play_match(game, agent_spec, PERFECT, match, record_path, agent_factory)
    return SolvedReport(len(positions), optimal, vs_perfect)
