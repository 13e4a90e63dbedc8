"""Periodic evaluation during training: the current network against fixed baselines.

All evaluation games run side by side so the network's moves of every game are one batched
``evaluate`` (or one batched search) call; only the opponents move game by game. Opponents:
``random``, ``uct`` (``ultimate_rl.agents``) and, for solved games, ``perfect`` (the exact
solver, picking uniformly among the value-keeping moves). Solved games also get the optimal-move
rate on a fixed, seeded set of random-play positions (``ultimate_rl.games.sample_positions``, the
set ``ultimate_rl.evaluate`` scores too); whether the play is perfect is ``every_line``'s verdict.

Gating plays the candidate network against the self-play network the same way, both sides
batched, from seeded random openings that each pair of games plays once from either side (two
deterministic networks would otherwise replay one game).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ultimate_rl.agents.match import BatchPlayer, play_games
from ultimate_rl.agents.network_player import NetworkPlayer
from ultimate_rl.games import Game, random_opening, solve
from ultimate_rl.runtime.faults import failpoint
from ultimate_rl.search import Evaluator, SearchConfig


@dataclass
class MatchScore:
    """Results from the network's point of view, split by the side it played."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    first_results: tuple[int, ...] = ()  # +1/0/-1 per game as first player
    second_results: tuple[int, ...] = ()

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        """(wins + draws / 2) / games."""
        return (self.wins + 0.5 * self.draws) / max(self.games, 1)

    def as_dict(self) -> dict[str, Any]:
        return {
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "score": self.score,
            "win_rate": self.wins / max(self.games, 1),
            "worst_as_first": min(self.first_results, default=None),
            "worst_as_second": min(self.second_results, default=None),
        }


def batched_match(
    game: Game,
    player: BatchPlayer,
    opponent: BatchPlayer,
    games: int,
    opening_plies: int = 0,
    seed: int = 0,
) -> MatchScore:
    """``games`` games, ``player`` first in the first half and second in the rest; game ``i``
    of the second half starts from the same random opening as game ``i`` of the first."""
    half = (games + 1) // 2
    rng = np.random.default_rng(seed)
    openings = [
        game.apply_sequence(random_opening(game, opening_plies, rng, if_game_ends="avoid"))
        for _ in range(half)
    ]
    player_side = (np.arange(games) >= half).astype(np.int32)
    starts = [openings[i % half] for i in range(games)]
    first_result = np.array(play_games(game, (player, opponent), starts, player_side).results)
    mine = np.where(player_side == 0, first_result, -first_result).astype(int)
    return MatchScore(
        wins=int((mine > 0).sum()),
        draws=int((mine == 0).sum()),
        losses=int((mine < 0).sum()),
        first_results=tuple(mine[player_side == 0].tolist()),
        second_results=tuple(mine[player_side == 1].tolist()),
    )


def make_opponent(game: Game, name: str, cfg: Any, seed: int) -> BatchPlayer:
    """One of the baseline opponents (see module doc); it moves position by position."""
    rng = np.random.default_rng(seed)
    agent = None
    if name == "uct":
        from ultimate_rl.agents import make as make_agent

        agent = make_agent("uct", num_simulations=int(cfg.uct_simulations), seed=seed)

    def choose(state: np.ndarray) -> int:
        if agent is not None:
            return int(agent.select_action(game, state))
        moves = game.legal_actions(state) if name == "random" else solve(game, state)[1]
        return int(rng.choice(moves))

    return lambda states: np.array([choose(state) for state in states], dtype=np.int64)


def optimal_move_rate(game: Game, player: NetworkPlayer, positions: list[np.ndarray]) -> float:
    """Share of ``positions`` where the network's move keeps the exact game value."""
    actions = player.actions(np.stack(positions))
    pairs = zip(actions, positions, strict=True)
    hits = [int(action) in set(solve(game, state)[1].tolist()) for action, state in pairs]
    return float(np.mean(hits))


def evaluate_network(
    game: Game,
    evaluate: Evaluator,
    search: SearchConfig,
    cfg: Any,
    seed: int,
    positions: list[np.ndarray] | None,
) -> dict[str, Any]:
    """One evaluation: a match per opponent in ``cfg.opponents`` (+ optimal-move rate)."""
    player = NetworkPlayer(game, evaluate, int(cfg.num_simulations), search)
    report: dict[str, Any] = {}
    for index, name in enumerate(cfg.opponents):
        failpoint("evaluation")  # tests: a kill between two evaluation matches
        opponent = make_opponent(game, name, cfg, seed + index)
        report[name] = batched_match(game, player.actions, opponent, int(cfg.games)).as_dict()
    if positions:
        report["optimal_rate"] = optimal_move_rate(game, player, positions)
    return report


def gating_match(
    game: Game,
    candidate: Evaluator,
    incumbent: Evaluator,
    search: SearchConfig,
    cfg: Any,
    seed: int,
) -> MatchScore:
    """The candidate network against the self-play network: ``cfg.gating.num_games`` games from
    seeded random openings, both searching with ``cfg.num_simulations`` (see module doc)."""
    simulations = int(cfg.num_simulations)
    new = NetworkPlayer(game, candidate, simulations, search)
    old = NetworkPlayer(game, incumbent, simulations, search)
    gating = cfg.gating
    return batched_match(
        game, new.actions, old.actions, int(gating.num_games), int(gating.opening_plies), seed
    )
