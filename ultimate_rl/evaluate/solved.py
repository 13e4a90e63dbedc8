"""Solved games (numerical tic-tac-toe, tic-tac-toe 3x3/4x4): play measured against perfect play.

Figures an Elo number cannot give: the share of a fixed, seeded set of positions (sampled by
random play, so every run and every checkpoint is scored on the same ones) where the agent's move
keeps the exact game value, its match result against the ``perfect`` agent, and for a network
agent the verdict of perfect play itself: its walk against every opponent line as either side
(``agents.every_line``, the walk training's stop rule takes), at the agent's own budget and
inference path. The positions come from ``ultimate_rl.games.sample_positions``, which training's
evaluation uses too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ultimate_rl.agents.base import Agent
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
    every_line: dict[str, dict[str, Any]] | None = None
    """Per side (``first``, ``second``): ``every_line_walks``' figures; None if not walked."""

    @property
    def holds_every_line(self) -> bool | None:
        """Whether no opponent line, as either side, took the agent below the game's value,
        position by position or in a game with its tree kept (None: not walked, or too large
        to walk)."""
        if self.every_line is None:
            return None
        worst = [
            (walk[name], walk["required"])
            for walk in self.every_line.values()
            for name in ("worst", "worst_in_games")
            if name in walk
        ]
        if any(found is not None and found < need for found, need in worst):
            return False
        return None if any(found is None for found, _ in worst) else True

    @property
    def optimal_rate(self) -> float:
        return self.optimal / self.positions

    def as_dict(self) -> dict[str, Any]:
        return {
            "positions": self.positions,
            "optimal": self.optimal,
            "optimal_rate": self.optimal_rate,
            "vs_perfect": self.vs_perfect.summary(),
            "every_line": self.every_line,
            "holds_every_line": self.holds_every_line,
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


def every_line_walks(game: Game, agent: Agent) -> dict[str, dict[str, Any]] | None:
    """Both sides' walks of ``agent`` against every opponent line (``walk_at_stake``), with its
    own evaluator and search, each position searched on a fresh tree: per side the worst line's
    result (None: a ply too large to walk), the ``required`` one, the positions met where its
    value is at stake, those where a move it may play gives that value away, and the inference
    path it was walked on (a verdict holds on its path: ``Checkpoint.judged_perfect``); for an agent
    whose games keep its search tree, once those lines hold, ``worst_in_games``: the worst line
    of its games (``worst_game_line``). None for an agent whose moves the walk cannot follow:
    not a network agent, a time budget (its moves depend on the clock) or sampling
    (temperature > 0)."""
    from ultimate_rl.agents.every_line import SIDES, required, side_walks
    from ultimate_rl.agents.network import NetworkAgent

    if not isinstance(agent, NetworkAgent) or agent.time_per_move or agent.temperature > 0:
        return None
    evaluate = agent.evaluate
    inference = evaluate.backend + (" (failed its check: float32)" if evaluate.fell_back else "")
    found = {}
    for side, name in enumerate(SIDES):
        walks = side_walks(game, evaluate, side, agent.num_simulations, agent.search_config)
        found[name] = {
            "worst": walks[0].worst,
            "required": required(game, side),
            "at_stake": len(walks[0].at_stake),
            "lost": int(walks[0].lost.sum()),
            "inference": inference,
        }
        if len(walks) > 1:
            found[name]["worst_in_games"] = walks[1].worst
    return found


def solved_report(
    game: Game,
    agent_spec: AgentSpec,
    num_positions: int,
    positions_seed: int,
    match: MatchConfig,
    record_path: Path | None = None,
    agent_factory: AgentFactory = build_agent,
    every_line: bool = True,
) -> SolvedReport:
    """The report for ``agent_spec`` (on a game where ``is_solvable``); ``every_line``: walk a
    network agent against every opponent line too."""
    positions = sample_positions(game, num_positions, positions_seed)
    optimal = optimal_move_rate(game, agent_spec, positions, agent_factory, positions_seed)
    vs_perfect = play_match(game, agent_spec, PERFECT, match, record_path, agent_factory)
    walks = every_line_walks(game, agent_factory(agent_spec, None)) if every_line else None
    return SolvedReport(len(positions), optimal, vs_perfect, walks)
