"""MCTS-Solver for the batched search: exact results found in the tree move up it.

A node is *proven* when one of its moves reaches a proven win for its mover, or when every move
has been tried and proven (the node then takes the best of them). Finished games are proven
when the search creates them; with ``SearchConfig.solver`` the proofs also climb the tree
(``solve_upward``) and a descent that reaches a proven node below the root stops there and backs
up its exact result, with no network call. The forest keeps proofs in ``proven`` (the first
player's view, like the results backed up; ``tree.UNPROVEN`` otherwise).

With the solver, child selection values a proven move at its exact result and never picks a
proven loss while another move is open; ``play_proven`` keeps the move played off a proven loss
when something else is not one, plays a proven win when there is one, and makes a proven root's
value exact. Without it the search is as it was before proofs existed (finished games are
proven, but nothing reads that): seeded runs reproduce.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ultimate_rl.games import layout
from ultimate_rl.search.tree import UNPROVEN, Forest, for_player


@njit(cache=True, inline="always")
def exact_result(f, b, node, edge):
    """The proven result for ``node``'s mover of its move ``edge`` (-1, 0, 1), or UNPROVEN.
    Inlined where it is called: child selection reads it for every tried move, and a call that
    takes the forest by value there cost PUCT ~5x its speed."""
    child = f.edge_child[b, edge]
    if child < 0 or f.proven[b, child] == UNPROVEN:
        return UNPROVEN
    return int(for_player(int(f.proven[b, child]), f.state[b, node, layout.PLAYER]))


@njit(cache=True)
def _best_proven(f, b, node):
    """The best proven result among ``node``'s moves for its mover, and whether a move is open."""
    best, open_move = UNPROVEN, False
    first = f.first_edge[b, node]
    for e in range(first, first + f.num_edges[b, node]):
        result = exact_result(f, b, node, e)
        if result == UNPROVEN:
            open_move = True
        elif result > best:
            best = result
            if best == 1:
                break
    return best, open_move


@njit(cache=True)
def solve_upward(f, b, node):
    """After ``node`` is proven: proves each ancestor its proof decides, nearest first."""
    while f.parent[b, node] >= 0:
        node = f.parent[b, node]
        if f.proven[b, node] != UNPROVEN:
            return
        best, open_move = _best_proven(f, b, node)
        if best != 1 and (open_move or best == UNPROVEN):
            return
        f.proven[b, node] = for_player(best, f.state[b, node, layout.PLAYER])


@njit(cache=True)
def _most_visited(f, b, only_wins):
    """Edge of the root's most visited proven win (``only_wins``) or move that is not a proven
    loss, or -1."""
    first, chosen, most = f.first_edge[b, 0], -1, -1
    for e in range(first, first + f.num_edges[b, 0]):
        result = exact_result(f, b, 0, e)
        wanted = result == 1 if only_wins else result != -1
        if wanted and f.edge_visits[b, e] > most:
            chosen, most = e, f.edge_visits[b, e]
    return chosen


@njit(cache=True)
def play_proven(f, num_trees, action, root_value, exact):
    """Moves and root values made to agree with the proofs, per tree (see the module doc);
    ``exact[b]`` gets the root's proven result for its mover, or UNPROVEN."""
    for b in range(num_trees):
        first = f.first_edge[b, 0]
        result = UNPROVEN
        for e in range(first, first + f.num_edges[b, 0]):
            if f.edge_action[b, e] == action[b]:
                result = exact_result(f, b, 0, e)
        better = -1
        if result != 1:
            better = _most_visited(f, b, True)
        if better < 0 and result == -1:
            better = _most_visited(f, b, False)
        if better >= 0:
            action[b] = f.edge_action[b, better]
        exact[b] = UNPROVEN
        if f.proven[b, 0] != UNPROVEN:
            exact[b] = for_player(int(f.proven[b, 0]), f.state[b, 0, layout.PLAYER])
            root_value[b] = exact[b]


def proven_roots(f: Forest, n: int) -> np.ndarray:
    """Whether each of the first ``n`` roots is proven ([n] bool): its move cannot change."""
    return f.proven[:n, 0] != UNPROVEN
