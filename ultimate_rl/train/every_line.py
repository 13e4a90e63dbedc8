"""Perfect play as a user meets it: the network agent at every budget of ``eval.perfect_budgets``
against EVERY line of the opponent's moves, as first and as second player.

A user plays a checkpoint as ``agents.make("network", num_simulations=N)`` (0: the raw policy).
A value head that is wrong on positions self-play never reached shows only at some budgets
(issue 41: a network that drew every line of the solver at 32 simulations lost lines at 0 and
200), so one budget proves nothing about another. For each budget the walk goes breadth first
from the start, the network's move (the agent's own search, ``agent_search_config``, on a fresh
tree; every move tied for the most visits, since the agent breaks such ties at random) against
each legal reply; transpositions merge, so every position is searched once per budget and a
ply's positions are searched together, in chunks that bound the trees' memory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ultimate_rl.agents.network import agent_search_config
from ultimate_rl.games import Game, kernels, layout, solve
from ultimate_rl.search import Evaluator
from ultimate_rl.train.evaluation import NetworkPlayer

MAX_POSITIONS = 100_000
"""A ply holding more positions than this is not walked (4x4 boards): no verdict of perfect."""
CHUNK = 256
"""Positions searched at once: 256 trees of an 800-simulation 3x3 search take ~150 MB."""
SIDES = ("first", "second")


def key(budget: int, side: int) -> str:
    """The report's entry for the worst result at ``budget`` simulations as ``side``."""
    return f"worst_line/{budget}/{SIDES[side]}"


Chooser = Callable[[np.ndarray], list[np.ndarray]]
"""``choices(states [n, STATE_LEN]) -> n arrays``: every move the player may make in each row."""


def budget_player(game: Game, evaluate: Evaluator, num_simulations: int) -> Chooser:
    """Every move the network agent may play at ``num_simulations`` (0: the raw policy), many
    positions at once: the top-scored moves (a search's tied visit counts are broken at
    random), or the only legal one."""
    search = agent_search_config(num_simulations)
    player = NetworkPlayer(game, evaluate, num_simulations, search)

    def choices(states: np.ndarray) -> list[np.ndarray]:
        found = [game.legal_actions(s) for s in states]
        open_rows = np.flatnonzero([len(moves) > 1 for moves in found])
        for start in range(0, len(open_rows), CHUNK):
            rows = open_rows[start : start + CHUNK]
            scores = player.scored_moves(states[rows])[0]
            best = scores == scores.max(axis=1, keepdims=True)
            for row, top in zip(rows, best, strict=True):
                found[row] = np.flatnonzero(top)
        return found

    return choices


def worst_line(
    game: Game, choices: Chooser, side: int, max_positions: int = MAX_POSITIONS
) -> int | None:
    """The worst result (+1/0/-1, ``side``'s view) of a player making any move of ``choices``
    over every line of the opponent's legal moves; ``None`` if a ply holds more than
    ``max_positions`` positions."""
    frontier = {game.initial_state().tobytes(): game.initial_state()}
    worst = 1
    while frontier:
        following: dict[bytes, np.ndarray] = {}
        states = list(frontier.values())
        ongoing = [s for s in states if s[layout.STATUS] == layout.ONGOING]
        for state in states:
            if state[layout.STATUS] != layout.ONGOING:
                result = int(kernels.outcome(state))
                worst = min(worst, result if side == 0 else -result)
        mine = [s for s in ongoing if s[layout.PLAYER] == side]
        theirs = [s for s in ongoing if s[layout.PLAYER] != side]
        moves = [*(choices(np.stack(mine)) if mine else []), *map(game.legal_actions, theirs)]
        for state, options in zip([*mine, *theirs], moves, strict=True):
            for action in options:
                child = state.copy()
                kernels.apply(child, int(action))
                following[child.tobytes()] = child
        if len(following) > max_positions:
            return None
        frontier = following
    return worst


def walk_budgets(game: Game, evaluate: Evaluator, budgets: Sequence[int]) -> dict[str, Any]:
    """``key(budget, side)``: the worst result at each budget in order, both sides, up to the
    first that falls below the game's value (the later ones would not change the verdict)."""
    first_value = solve(game, game.initial_state())[0]
    found: dict[str, Any] = {}
    for budget in budgets:
        choices = budget_player(game, evaluate, int(budget))
        for side in (0, 1):
            value = first_value if side == 0 else -first_value
            # a side whose value is a loss has nothing to lose: no walk
            worst = value if value < 0 else worst_line(game, choices, side)
            found[key(budget, side)] = worst
            if worst is None or worst < value:
                return found
    return found


def judge_perfect(game: Game, evaluate: Evaluator, report: dict[str, Any], cfg: Any) -> bool:
    """The verdict on one evaluation's ``report`` (``cfg``: the ``eval`` section): optimal on
    ``perfect_optimal_rate`` of the positions, no game lost to the solver, and no line below the
    game's value at any of ``perfect_budgets``. The walks run only once the cheap tests pass;
    their worst results join ``report``."""
    versus = report.get("perfect")
    if versus is None or report.get("optimal_rate", 0.0) < cfg.perfect_optimal_rate:
        return False
    first_value = solve(game, game.initial_state())[0]
    if versus["worst_as_first"] < first_value or versus["worst_as_second"] < -first_value:
        return False
    report.update(walk_budgets(game, evaluate, cfg.perfect_budgets))
    return holds_every_line(game, report, cfg.perfect_budgets)


def holds_every_line(game: Game, report: dict[str, Any], budgets: Sequence[int]) -> bool:
    """Whether ``report`` walked every budget and side without a result below the game's value."""
    first_value = solve(game, game.initial_state())[0]
    for budget in budgets:
        for side in (0, 1):
            worst = report.get(key(int(budget), side))
            if worst is None or worst < (first_value if side == 0 else -first_value):
                return False
    return True
