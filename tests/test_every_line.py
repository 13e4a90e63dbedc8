"""The perfect-play verdict (``agents/every_line.py``): every opponent line, at every budget.

An exact network (the solver's values and best moves) holds; one wrong move on one line,
reachable only after an opponent's blunder, or a losing move among tied ones, or at one budget
only, fails the verdict.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tests.helpers import noisy_exact_network
from ultimate_rl.agents import every_line
from ultimate_rl.agents.every_line import (
    budget_player,
    holds_every_line,
    judge_perfect,
    key,
    walk_at_stake,
    walk_budgets,
    worst_game_line,
    worst_line,
)
from ultimate_rl.agents.network import agent_search_config
from ultimate_rl.games import kernels, layout, make, solve
from ultimate_rl.search import BatchedSearch
from ultimate_rl.search.tree import greedy_score

BUDGETS = [0, 32, 200, 800]
# X (the opponent) blunders with 7 (O wins from there); after X's 8, O wins on 6, and its 5 loses
BLUNDER_LINE = [1, 4, 7, 2, 8]
LOSING_REPLY = 5


@pytest.fixture(scope="module")
def ttt():
    return make("tictactoe")


@pytest.fixture(scope="module")
def exact(ttt, ttt_positions):
    """A network that knows the game: the solver's value, its best moves as the policy."""

    def evaluate(planes, masks):
        states = [ttt_positions[p.tobytes()] for p in planes]
        logits = np.full(masks.shape, -4.0, np.float32)
        for row, state in enumerate(states):
            logits[row, solve(ttt, state)[1]] = 0.0
        values = np.array([solve(ttt, s)[0] for s in states], np.float32)
        return logits, values

    return evaluate


def solver_player(ttt, flaw: bytes | None = None):
    """A best move of the solver (the first one ``BLUNDER_LINE`` names, so O follows that line),
    except ``LOSING_REPLY`` in the position ``flaw``."""

    def choose(state):
        if state.tobytes() == flaw:
            return LOSING_REPLY
        best = solve(ttt, state)[1].tolist()
        return next((a for a in BLUNDER_LINE if a in best), best[0])

    return lambda states: [np.array([choose(s)]) for s in states]


def test_a_solver_player_never_loses_a_line(ttt):
    assert worst_line(ttt, solver_player(ttt), side=0) == 0
    assert worst_line(ttt, solver_player(ttt), side=1) == 0


def test_a_loss_after_the_opponents_blunder_counts(ttt):
    """The losing line needs X's non-best 7: a walk of the solver's lines alone misses it."""
    flaw = ttt.apply_sequence(BLUNDER_LINE)
    assert 7 not in solve(ttt, ttt.apply_sequence(BLUNDER_LINE[:2]))[1]
    flawed = solver_player(ttt, flaw.tobytes())
    assert worst_line(ttt, flawed, side=1) == -1
    assert worst_line(ttt, flawed, side=0) == 0  # X never meets that position


def test_every_tied_move_is_followed(ttt):
    """A player that may pick the losing move of a tie (a search's equal visits) can lose."""
    flaw = ttt.apply_sequence(BLUNDER_LINE).tobytes()
    solver = solver_player(ttt)

    def tied(states):
        return [
            np.array([6, LOSING_REPLY]) if s.tobytes() == flaw else solver([s])[0] for s in states
        ]

    assert worst_line(ttt, tied, side=1) == -1


def test_an_exact_network_holds_every_line(ttt, exact):
    budgets = BUDGETS[:2]  # the raw policy and a search (longer ones: the same walk, slower)
    report = walk_budgets(ttt, exact, budgets)
    assert report == {key(b, s): 0 for b in budgets for s in (0, 1)}
    assert holds_every_line(ttt, report, budgets)


def test_one_budget_losing_one_line_fails_the_verdict(ttt, exact, monkeypatch):
    """The network plays exactly at every budget but 200, where one line loses as O."""
    flawed = solver_player(ttt, ttt.apply_sequence(BLUNDER_LINE).tobytes())
    exact_player = every_line.budget_player

    def player(game, evaluate, budget):
        return flawed if budget == 200 else exact_player(game, evaluate, budget)

    monkeypatch.setattr(every_line, "budget_player", player)
    report = walk_budgets(ttt, exact, BUDGETS)
    assert report[key(0, 0)] == report[key(32, 1)] == report[key(200, 0)] == 0
    assert report[key(200, 1)] == -1
    assert key(800, 0) not in report  # the walk stops at the first lost line
    assert not holds_every_line(ttt, report, BUDGETS)
    assert holds_every_line(ttt, report, [0, 32])


def test_the_verdict_needs_every_budget_walked(ttt):
    report = {key(b, s): 0 for b in BUDGETS[:-1] for s in (0, 1)}
    assert holds_every_line(ttt, report, BUDGETS[:-1])
    assert not holds_every_line(ttt, report, BUDGETS)
    assert not holds_every_line(ttt, {**report, key(800, 0): 0, key(800, 1): None}, BUDGETS)
    assert not holds_every_line(ttt, {**report, key(200, 1): -1}, BUDGETS[:-1])
    del report[key(32, 0)]
    assert not holds_every_line(ttt, report, BUDGETS[:-1])


def test_judge_perfect_walks_only_after_the_cheap_tests(ttt, exact):
    cfg = SimpleNamespace(perfect_optimal_rate=0.98, perfect_budgets=[0, 32])
    drawn = {"worst_as_first": 0, "worst_as_second": 0}
    low = {"perfect": drawn, "optimal_rate": 0.9}
    assert not judge_perfect(ttt, exact, low, cfg)
    assert not any(name.startswith("worst_line/") for name in low)
    lost = {"perfect": {**drawn, "worst_as_second": -1}, "optimal_rate": 1.0}
    assert not judge_perfect(ttt, exact, lost, cfg)
    good = {"perfect": drawn, "optimal_rate": 1.0}
    assert judge_perfect(ttt, exact, good, cfg)
    assert good[key(32, 1)] == 0


# Numerical tic-tac-toe: the first player wins, so the second is judged on the lines where the
# first player's mistake saved it. From each start (moves; the first player to move, winning), the
# first player's MISTAKE saves the second, whose REPLY throws it away; the second player plays
# REPLY in every lost position too, so its one losing saved line passes through a position also
# reached by a line lost all along (same board and last move, the two first-player moves swapped).
# The walk meets that position first through the saved path in the first two cases and through
# the lost one in the last two, so keeping either path's flag instead of both misses a loss.
TRANSPOSED = [  # (moves to the start, mistake, reply), found by a search over random starts
    ([22, 68, 17, 39], 29, 1),
    ([60, 77, 4, 48], 11, 25),
    ([9, 66, 8, 43], 58, 23),
    ([65, 21, 31, 16], 42, 59),
]


@pytest.fixture(scope="module")
def numerical():
    return make("numerical_ttt")


def lost_for(game, state, side: int) -> bool:
    if game.is_terminal(state):
        return game.returns(state) * (1 if side == 0 else -1) < 0
    value = solve(game, state)[0]
    return (value if game.current_player(state) == side else -value) < 0


def saved_lines(game, choices, side, state, saved=False, line=()):
    """The reference walk, line by line (no merging): (positions with whether the line was saved
    there, result) of every line from ``state``; saved: it passed a position not lost for
    ``side``."""
    saved = saved or not lost_for(game, state, side)
    line = (*line, (state.tobytes(), saved))
    if game.is_terminal(state):
        return [(line, game.returns(state) * (1 if side == 0 else -1))]
    mine = game.current_player(state) == side
    moves = choices(state[None])[0] if mine else game.legal_actions(state)
    return [
        found
        for move in map(int, moves)
        for found in saved_lines(game, choices, side, game.apply(state, move), saved, line)
    ]


def second_player(game, flaws: dict[bytes, int], everywhere_lost: int | None = None):
    """The solver's first best move, except ``flaws[position]``, and ``everywhere_lost`` (where
    legal) in every position lost for the second player."""

    def choose(state):
        if state.tobytes() in flaws:
            return flaws[state.tobytes()]
        lost = everywhere_lost is not None and lost_for(game, state, 1)
        if lost and game.legal_mask(state)[everywhere_lost]:
            return everywhere_lost
        return int(solve(game, state)[1][0])

    return lambda states: [np.array([choose(s)]) for s in states]


def test_the_losing_side_holds_the_lines_a_mistake_saves(numerical):
    """The solver as the second player: the first player wins with best play, yet every line on
    which it errs ends in a draw or better for the solver."""
    assert solve(numerical, numerical.initial_state())[0] == 1
    assert worst_line(numerical, second_player(numerical, {}), side=1) == 0
    assert every_line.required(numerical, 0) == 1 and every_line.required(numerical, 1) == 0


@pytest.mark.parametrize("moves, mistake, reply", TRANSPOSED)
def test_a_transposition_merges_a_saved_and_a_lost_path(numerical, moves, mistake, reply):
    """The merged walk (each position once, saved if any path to it was) gives the verdict of
    the line-by-line walk where keeping one path's flag would not."""
    start = numerical.apply_sequence(moves)
    saved = numerical.apply(start, mistake)
    assert lost_for(numerical, start, 1) and not lost_for(numerical, saved, 1)
    assert lost_for(numerical, numerical.apply(saved, reply), 1)
    flawed = second_player(numerical, {saved.tobytes(): reply}, everywhere_lost=reply)
    lines = saved_lines(numerical, flawed, 1, start)
    flags: dict[bytes, set[bool]] = {}
    for line, _ in lines:
        for position, was_saved in line:
            flags.setdefault(position, set()).add(was_saved)
    losing = [line for line, result in lines if result < 0 and line[-1][1]]
    assert losing and all(any(flags[p] == {True, False} for p, _ in line) for line in losing)
    assert worst_line(numerical, flawed, side=1, start=start) == -1
    sound = second_player(numerical, {}, everywhere_lost=reply)
    expected = min(r for line, r in saved_lines(numerical, sound, 1, start) if line[-1][1])
    assert worst_line(numerical, sound, side=1, start=start) == expected >= 0


def game_moves(ttt, evaluate, search, side, line):
    """The moves tied for the top ``greedy_score`` of the agent's search after ``line``, found
    by playing the game from its start on one tree (no saved trees), as a user's game with it
    goes."""
    searcher = BatchedSearch(ttt, 1, search, seed=0)
    state = ttt.initial_state()
    for ply in range(len(line) + 1):
        if state[layout.PLAYER] == side:
            out = searcher.search(state[None], evaluate, False, temperature=0.0)
            score = greedy_score(out.visit_counts[0], out.prior[0])
            legal = ttt.legal_actions(state)
            tied = np.flatnonzero(score == score[legal].max())
            if ply == len(line):
                return tied
        kernels.apply(state, line[ply])
    raise AssertionError("the line ends where the opponent moves")


def every_game(ttt, evaluate, search, side, line=(), found=None):
    """(position, moves) at each of the agent's moves over every line, each by its own game."""
    found = [] if found is None else found
    state = ttt.apply_sequence(list(line)) if line else ttt.initial_state()
    if state[layout.STATUS] != layout.ONGOING:
        return found
    if state[layout.PLAYER] == side:
        moves = game_moves(ttt, evaluate, search, side, list(line))
        found.append((state.tobytes(), tuple(moves.tolist())))
    else:
        moves = ttt.legal_actions(state)
    for move in moves:
        every_game(ttt, evaluate, search, side, (*line, int(move)), found)
    return found


@pytest.mark.parametrize("seed, fresh_x, games_x", [(1, 0, -1), (6, -1, 0)])
def test_the_walk_in_games_plays_each_line_as_its_own_game_would(
    ttt, ttt_positions, seed, fresh_x, games_x
):
    """The walk with saved trees meets the positions, and follows the moves, that
    playing every line as a game of its own from the start does. With the tree kept, X's verdict
    differs from the walk position by position, either way: with seed 1 a network that holds
    every line position by position loses one in a game (8 simulations)."""
    evaluate = noisy_exact_network(ttt, ttt_positions, seed)
    for side in (0, 1):
        met: list = []
        worst = worst_game_line(ttt, evaluate, side, 8, met=met)
        walked = sorted((s.tobytes(), tuple(m.tolist())) for s, m in met)
        assert walked == sorted(every_game(ttt, evaluate, agent_search_config(8), side))
        if side == 0:
            assert (worst_line(ttt, budget_player(ttt, evaluate, 8), 0), worst) == (
                fresh_x,
                games_x,
            )


def test_a_ply_past_the_limit_gives_no_verdict_and_searches_lower_it(ttt, exact, monkeypatch):
    """A walk stops with no verdict (None) at a ply of more positions than ``ply_limit`` allows,
    keeping the positions met before it; the limit falls as each position's search grows
    (``MAX_PLY_SIMULATIONS``), so the raw policy walks where a search does not. The exact
    network as X, every tied move followed: at most 2,048 positions a ply for the raw policy,
    1,632 at 8 simulations (measured)."""
    monkeypatch.setattr(every_line, "MAX_PLY_SIMULATIONS", 8 * 1600)
    assert [every_line.ply_limit(budget) for budget in (0, 8)] == [12800, 1600]
    raw = walk_at_stake(ttt, exact, 0, 0)
    assert raw.worst == 0  # a draw, X's value
    cut = walk_at_stake(ttt, exact, 0, 8)
    assert cut.worst is None and 0 < len(cut.at_stake) < len(raw.at_stake)
    monkeypatch.setattr(every_line, "MAX_PLY_SIMULATIONS", 8 * 1632)
    assert walk_at_stake(ttt, exact, 0, 8).worst == 0
    monkeypatch.undo()
    assert every_line.ply_limit(0) == every_line.MAX_POSITIONS > every_line.ply_limit(800)
