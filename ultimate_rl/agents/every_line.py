"""Perfect play as a user meets it: the network agent at every budget of ``eval.perfect_budgets``
against EVERY line of the opponent's moves, as first and as second player.

A user plays a checkpoint as ``agents.make("network", num_simulations=N)`` (0: the raw policy).
A value head that is wrong on positions self-play never reached shows only at some budgets
(issue 41: a network that drew every line of the solver at 32 simulations lost lines at 0 and
200), so one budget proves nothing about another. For each budget the walk goes breadth first
from the start, the network's move (the agent's own search, ``agent_search_config``, on a fresh
tree; the most visited move, ties broken by the network's prior, and every move still tied
after that, since the agent breaks such ties at random: ``search.tree.greedy_score``) against
each legal reply; transpositions merge, so every position is searched once per budget and a
ply's positions are searched together, in chunks that bound the trees' memory.

An agent that keeps its search tree from move to move (``tree_reuse``, PUCT) starts each search
from the subtree of the move played and the reply, so its move depends on the line that led to
it, not only on the position, and a network that holds every line position by position can lose
one in a game (numerical tic-tac-toe at 800 simulations: 843 visits, 43 of them kept, chose a
losing move where a fresh search kept the draw; docs/experiments/numerical_ttt_perfect). Its
games are walked line by line (``worst_game_line``: the tree saved after each search and
restored for each continuation), but their lines do not merge: on 4x4 as O at 32 simulations
they passed a million searches. So the training verdict (``walk_budgets``) walks positions, and
the agent of a network its run judged perfect searches each position on a fresh tree
(``NetworkAgent``): it plays what was walked. ``scripts/evaluate.py`` walks an agent's games
too where it keeps its tree (``side_walks``).

A side must hold its game-theoretic value on every line: win a won game, draw a drawn one, and
where the game is lost for it (numerical tic-tac-toe's second player) not lose any line on which
the opponent's mistake left it a draw or a win (``required``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from ultimate_rl.agents.network import agent_search_config
from ultimate_rl.agents.network_player import NetworkPlayer
from ultimate_rl.games import Game, kernels, layout, solve
from ultimate_rl.search import Evaluator, SearchConfig
from ultimate_rl.search.batched import BatchedSearch, keeps_trees
from ultimate_rl.search.memo import MemoEvaluator
from ultimate_rl.search.tree import Forest, greedy_score

MAX_POSITIONS = 1_000_000
"""A ply holding more positions than this is not walked (an estimated half gigabyte of states
and keys): no verdict."""
MAX_PLY_SIMULATIONS = 200_000_000
"""Nor a ply whose positions times the search's simulations exceed this (250,000 positions at
800 simulations: ~35 minutes on a loaded 2-core CPU, where a 4x4 network's searches of 1,024
book positions took 8.4 ms a position, the memo sparing most evaluations); a 4x4 walk as O
met 368,618 positions over its 8 plies at 32 simulations."""
MAX_GAME_SEARCHES = 1_000_000
"""``worst_game_line`` gives no verdict past this many searches."""
CHUNK = 256
"""Positions searched at once: 256 trees of an 800-simulation 3x3 search take ~150 MB."""
SIDES = ("first", "second")


KEY_PREFIX = "worst_line/"
"""Every ``key`` starts so: a report's walk verdicts, which the next evaluation replaces."""


def key(budget: int, side: int) -> str:
    """The report's entry for the worst result at ``budget`` simulations as ``side``."""
    return f"{KEY_PREFIX}{budget}/{SIDES[side]}"


def walks_games(budget: int, search: SearchConfig) -> bool:
    """Whether the network agent at ``budget`` with ``search`` keeps its search tree between a
    game's moves, so that its games are walked besides its positions."""
    return budget > 0 and keeps_trees(search)


def holds(game: Game, side: int, worst: int | None) -> bool:
    """Whether a walk's worst result (None: too large to walk) meets ``required``."""
    return worst is not None and worst >= required(game, side)


def ply_limit(budget: int) -> int:
    """The most positions a ply of the walk at ``budget`` simulations (0: the raw policy) may
    hold: ``MAX_POSITIONS``, fewer where each is searched (``MAX_PLY_SIMULATIONS``)."""
    return min(MAX_POSITIONS, MAX_PLY_SIMULATIONS // max(budget, 1))


Chooser = Callable[[np.ndarray], list[np.ndarray]]
"""``choices(states [n, STATE_LEN]) -> n arrays``: every move the player may make in each row."""


def budget_player(
    game: Game, evaluate: Evaluator, num_simulations: int, search: SearchConfig | None = None
) -> Chooser:
    """Every move the network agent may play at ``num_simulations`` (0: the raw policy), many
    positions at once: the top-scored moves (the logits, or a search's ``greedy_score``), or
    the only legal one. ``search``: the agent's search (``agent_search_config``'s
    unless given), on a fresh tree at each position. The network is fixed for the walk, and
    its searches overlap, so each distinct position goes to it once (``MemoEvaluator``)."""
    search = search or agent_search_config(num_simulations)
    player = NetworkPlayer(game, MemoEvaluator(evaluate), num_simulations, search)

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


def _line_result(state: np.ndarray, side: int, held: bool) -> int:
    """What a finished line counts toward the worst: its result for ``side``, a loss only where
    the line passed through a position not lost for ``side`` (``held``)."""
    result = int(kernels.outcome(state)) * (1 if side == 0 else -1)
    return result if held or result >= 0 else 1


def _not_lost(game: Game, state: np.ndarray, side: int) -> bool:
    """Whether ``state`` (ongoing) is at least a draw for ``side`` with best play: the solver."""
    value = solve(game, state)[0]
    return (value if state[layout.PLAYER] == side else -value) >= 0


def worst_line(
    game: Game,
    choices: Chooser,
    side: int,
    max_positions: int = MAX_POSITIONS,
    start: np.ndarray | None = None,
    met: list[tuple[np.ndarray, np.ndarray]] | None = None,
) -> int | None:
    """The worst result (+1/0/-1, ``side``'s view) of a player making any move of ``choices``
    over every line of the opponent's legal moves from ``start`` (the initial position) that
    passes through a position not lost for ``side`` (+1 if none does); ``None`` if a ply holds
    more than ``max_positions`` positions.

    A side the game wins or draws starts not lost, so that is every line. A side the game loses
    (numerical tic-tac-toe's second player) is judged on the lines where the opponent's mistake
    left it a draw or a win: it must not lose those. A position reached both by such a line and by
    one still lost is walked once, as reached by both (its flag is the OR of its paths'), which
    keeps the verdict of a walk line by line (``tests/test_every_line.py``). ``met``, if given,
    receives each position where ``side`` moves, with the moves ``choices`` made there.
    """
    start = game.initial_state() if start is None else game.check_state(start)
    frontier = {start.tobytes(): (start, _not_lost(game, start, side))}
    worst = 1
    while frontier:
        following: dict[bytes, tuple[np.ndarray, bool]] = {}
        mine, theirs = [], []
        for state, held in frontier.values():
            if state[layout.STATUS] != layout.ONGOING:
                worst = min(worst, _line_result(state, side, held))
            else:
                held = held or _not_lost(game, state, side)
                (mine if state[layout.PLAYER] == side else theirs).append((state, held))
        states = [state for state, _ in mine]
        moves = [*(choices(np.stack(states)) if states else [])]
        if met is not None:
            met.extend(zip(states, moves, strict=True))
        moves += [game.legal_actions(state) for state, _ in theirs]
        for (state, held), options in zip([*mine, *theirs], moves, strict=True):
            for action in options:
                child = state.copy()
                kernels.apply(child, int(action))
                child_key = child.tobytes()
                seen = following.get(child_key)
                following[child_key] = (child, held or (seen is not None and seen[1]))
        if len(following) > max_positions:
            return None
        frontier = following
    return worst


def worst_game_line(
    game: Game,
    evaluate: Evaluator,
    side: int,
    num_simulations: int,
    search: SearchConfig | None = None,
    max_searches: int = MAX_GAME_SEARCHES,
    met: list[tuple[np.ndarray, np.ndarray]] | None = None,
) -> int | None:
    """``worst_line``'s result for the network agent at ``num_simulations`` (> 0; ``search``:
    its search, ``agent_search_config``'s unless given) as a game with it goes: one tree kept from
    move to move, a search at each of its moves (a forced one too: it grows the tree the next
    move keeps) without an early stop, every move tied for the top ``greedy_score`` followed.
    Each line is walked on its own, from the tree its game would hold there; ``None`` past
    ``max_searches`` searches. ``met``, if given, receives each position searched (once per
    line that reaches it) with the moves followed there.

    The positions waiting for the agent's move, each with its game's tree, are searched
    ``CHUNK`` at a time (a tree a row: the rows of a search do not meet), the latest first, so
    that the trees held stay few. Each distinct position goes to the network once
    (``MemoEvaluator``)."""
    searcher = BatchedSearch(game, CHUNK, search or agent_search_config(num_simulations), seed=0)
    evaluate = MemoEvaluator(evaluate)
    waiting: list[tuple[np.ndarray, bool, Forest | None]] = []
    worst = 1

    def reach(state: np.ndarray, held: bool, tree: Forest | None) -> None:
        """Follows every opponent move from ``state`` to the positions where the agent moves
        (into ``waiting``, with the game's ``tree``) or the game ends (into ``worst``)."""
        nonlocal worst
        if state[layout.STATUS] != layout.ONGOING:
            worst = min(worst, _line_result(state, side, held))
            return
        held = held or _not_lost(game, state, side)
        if state[layout.PLAYER] == side:
            waiting.append((state, held, tree))
            return
        for action in game.legal_actions(state):
            child = state.copy()
            kernels.apply(child, int(action))
            reach(child, held, tree)

    reach(game.initial_state(), False, None)
    searches = 0
    while waiting:
        batch = [waiting.pop() for _ in range(min(CHUNK, len(waiting)))]
        searches += len(batch)
        if searches > max_searches:
            return None
        for row, (_, _, tree) in enumerate(batch):
            if tree is None:
                searcher.reset(row)
            else:
                searcher.restore_tree(row, tree)
        states = np.stack([state for state, _, _ in batch])
        out = searcher.search(states, evaluate, False, num_simulations, temperature=0.0)
        for row, (state, held, _) in enumerate(batch):
            score = greedy_score(out.visit_counts[row], out.prior[row])
            moves = np.flatnonzero(score == score[game.legal_actions(state)].max())
            if met is not None:
                met.append((state, moves))
            tree = searcher.saved_tree(row)
            for action in moves:
                child = state.copy()
                kernels.apply(child, int(action))
                reach(child, held, tree)
    return worst


def required(game: Game, side: int) -> int:
    """The worst line result ``side`` may allow: the game's value for it, and for a side the
    game loses a draw on the lines its opponent's mistake saved (``worst_line``)."""
    first_value = solve(game, game.initial_state())[0]
    return max(first_value if side == 0 else -first_value, 0)


def walk_budgets(
    game: Game, evaluate: Evaluator, budgets: Sequence[int], known: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``key``: the worst result of the position-by-position walk at each budget in order, both
    sides, up to the first that falls below ``required`` (the later ones would not change the
    verdict). A result in ``known`` (this evaluation's walks for the run's book) is taken, not
    walked again."""
    known = known or {}
    found: dict[str, Any] = {}
    for budget in map(int, budgets):
        choices = None
        for side in (0, 1):
            name = key(budget, side)
            if name in known:
                worst = known[name]
            else:
                choices = choices or budget_player(game, evaluate, budget)
                worst = worst_line(game, choices, side, ply_limit(budget))
            found[name] = worst
            if not holds(game, side, worst):
                return found
    return found


def judge_perfect(game: Game, evaluate: Evaluator, report: dict[str, Any], cfg: Any) -> bool:
    """The verdict on one evaluation's ``report`` (``cfg``: the ``eval`` section): optimal on
    ``perfect_optimal_rate`` of the positions, no game lost to the solver, and no line below the
    game's value at any of ``perfect_budgets``. The walks run only once the cheap tests pass,
    and only where ``report`` holds no result of the same walk; their worst results join it."""
    versus = report.get("perfect")
    if versus is None or report.get("optimal_rate", 0.0) < cfg.perfect_optimal_rate:
        return False
    first_value = solve(game, game.initial_state())[0]
    if versus["worst_as_first"] < first_value or versus["worst_as_second"] < -first_value:
        return False
    report.update(walk_budgets(game, evaluate, cfg.perfect_budgets, known=report))
    return holds_every_line(game, report, cfg.perfect_budgets)


def holds_every_line(game: Game, report: dict[str, Any], budgets: Sequence[int]) -> bool:
    """Whether ``report`` walked every budget and side without a result below ``required``."""
    return all(
        holds(game, side, report.get(key(budget, side)))
        for budget in map(int, budgets)
        for side in (0, 1)
    )


class StakeWalk(NamedTuple):
    """One side's walk at one budget (``walk_at_stake``)."""

    at_stake: np.ndarray
    """``[N, STATE_LEN]``: the positions met where the side's value is at stake."""
    lost: np.ndarray
    """``[N]`` bool: where a move the agent may play gives that value away."""
    worst: int | None
    """``worst_line``'s result for the walk: the perfect-play verdict's figure, so that an
    evaluation that walks for its book does not walk again for the verdict."""


def walk_at_stake(
    game: Game,
    evaluate: Evaluator,
    side: int,
    budget: int = 0,
    search: SearchConfig | None = None,
    in_games: bool = False,
) -> StakeWalk:
    """The walk of the network agent at ``budget`` simulations (0: the raw policy; ``search``:
    its search, by default ``agent_search_config``'s) as ``side`` against every opponent line:
    the positions it meets where its value is at stake, where it gives that value away, and
    the line's worst result (``None`` past ``ply_limit``'s positions a ply: no verdict, and the
    positions met up to that ply). ``in_games``: the walk of its games with the tree kept
    (``worst_game_line``; a position once per line that reaches it)."""
    met: list[tuple[np.ndarray, np.ndarray]] = []
    if in_games:
        worst = worst_game_line(game, evaluate, side, budget, search, met=met)
    else:
        choices = budget_player(game, evaluate, budget, search)
        worst = worst_line(game, choices, side, ply_limit(budget), met=met)
    floor = required(game, side)
    at_stake, lost = [], []
    for state, moves in met:
        if solve(game, state)[0] >= floor:
            at_stake.append(state)
            lost.append(any(value_after(game, state, int(move)) < floor for move in moves))
    states = np.stack(at_stake) if at_stake else np.zeros((0, layout.STATE_LEN), layout.STATE_DTYPE)
    return StakeWalk(states, np.array(lost, dtype=bool), worst)


def value_after(game: Game, state: np.ndarray, action: int) -> int:
    """The solver's value, for the player who moves, of playing ``action`` at ``state``."""
    child = state.copy()
    kernels.apply(child, action)
    return -solve(game, child)[0]


def side_walks(
    game: Game, evaluate: Evaluator, side: int, budget: int, search: SearchConfig
) -> list[StakeWalk]:
    """``side``'s walk of the network agent at ``budget`` with ``search`` position by position,
    and where that holds and the agent's games keep the tree (``walks_games``), the walk of its
    games after it, so a side already lost on a position costs no walk of games."""
    walks = [walk_at_stake(game, evaluate, side, budget, search)]
    if holds(game, side, walks[0].worst) and walks_games(budget, search):
        walks.append(walk_at_stake(game, evaluate, side, budget, search, in_games=True))
    return walks
