"""UCT with random rollouts and MCTS-Solver: the baseline every checkpoint is measured against.

The whole simulation (selection, expansion, rollout, backup) runs inside one numba kernel over
flat node arrays, so a single compiled kernel serves every game and no Python runs per simulation.
Python only drives blocks of simulations, to check a time budget and to grow the arrays.

Node ``i`` stores the statistics of the move that led to it, from the view of the player who made
that move (``mover[i]``). Children of a node are contiguous slots, shuffled when created, and are
tried in that order before UCB1 chooses among them. Proven results (MCTS-Solver) propagate up the
tree: a child that is a proven win for the player to move solves its parent, and a parent whose
children are all proven takes the best of them; proven losses are never selected again.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

from ultimate_rl.games import kernels, layout
from ultimate_rl.search.tree import UNPROVEN

_BLOCK_SIMULATIONS = 512  # simulations per kernel call when a time budget is set


class UctTree(NamedTuple):
    """Flat node arrays of one UCT tree (a namedtuple, so numba kernels take it as one argument)."""

    parent: np.ndarray  # int32
    action: np.ndarray  # int32, the move into the node
    mover: np.ndarray  # int8, the player who made that move
    first_child: np.ndarray  # int32, -1 while the node has no child slots
    num_children: np.ndarray  # int32
    num_tried: np.ndarray  # int32, children visited so far (they are tried in slot order)
    visits: np.ndarray  # int64
    value_sum: np.ndarray  # float64, mover's view
    proven: np.ndarray  # int8, -1/0/+1 for the mover, or UNPROVEN
    state_row: np.ndarray  # int32, the node's row in the states array (-1 while unvisited)
    counts: np.ndarray  # int64 [2]: node slots used, state rows used


@njit(cache=True)
def _new_children(node, tree, states, mask):
    """Creates the child slots of ``node`` in random order (it has room: the caller checked)."""
    state = states[tree.state_row[node]]
    n = kernels.legal_mask(state, mask)
    start = tree.counts[0]
    k = 0
    for a in range(kernels.num_actions(state)):
        if mask[a]:
            tree.action[start + k] = a
            k += 1
    for i in range(n - 1, 0, -1):  # Fisher-Yates
        j = np.random.randint(i + 1)
        tree.action[start + i], tree.action[start + j] = (
            tree.action[start + j],
            tree.action[start + i],
        )
    for c in range(start, start + n):
        tree.parent[c] = node
        tree.mover[c] = state[layout.PLAYER]
        tree.first_child[c] = -1
        tree.num_children[c] = 0
        tree.num_tried[c] = 0
        tree.visits[c] = 0
        tree.value_sum[c] = 0.0
        tree.proven[c] = UNPROVEN
        tree.state_row[c] = -1
    tree.first_child[node] = start
    tree.num_children[node] = n
    tree.counts[0] = start + n


@njit(cache=True)
def _ucb_child(node, tree, exploration):
    """The child UCB1 picks; proven losses for the player choosing are skipped."""
    log_n = math.log(tree.visits[node])
    best, best_score = tree.first_child[node], -np.inf
    for c in range(tree.first_child[node], tree.first_child[node] + tree.num_children[node]):
        proven = tree.proven[c]
        if proven == -1:
            continue
        q = proven if proven != UNPROVEN else tree.value_sum[c] / tree.visits[c]
        score = q + exploration * math.sqrt(log_n / tree.visits[c])
        if score > best_score:
            best, best_score = c, score
    return best


@njit(cache=True)
def _try_solve(node, tree):
    """Sets ``proven[node]`` when its children decide it; returns whether it is now proven."""
    best = -1
    unknown = tree.num_tried[node] < tree.num_children[node]
    for c in range(tree.first_child[node], tree.first_child[node] + tree.num_children[node]):
        proven = tree.proven[c]
        if proven == 1:
            tree.proven[node] = -1  # the player to move here has a winning move
            return True
        if proven == UNPROVEN:
            unknown = True
        elif proven > best:
            best = proven
    if unknown:
        return False
    tree.proven[node] = -best
    return True


@njit(cache=True)
def run_simulations(tree, states, num_simulations, exploration, path):
    """Runs up to ``num_simulations`` simulations; returns how many ran.

    Stops early when the root is proven or when the arrays are nearly full (the caller grows them
    and calls again).
    """
    mask = np.empty(layout.MAX_ACTIONS, dtype=np.uint8)
    done = 0
    while done < num_simulations and tree.proven[0] == UNPROVEN:
        if tree.counts[0] + layout.MAX_ACTIONS > tree.parent.shape[0] or tree.counts[1] >= len(
            states
        ):
            break
        node, depth = 0, 0
        path[0] = 0
        while True:
            if tree.proven[node] != UNPROVEN:
                result = tree.proven[node] if tree.mover[node] == 0 else -tree.proven[node]
                break
            if tree.first_child[node] < 0:
                _new_children(node, tree, states, mask)
            if tree.num_tried[node] < tree.num_children[node]:
                child = tree.first_child[node] + tree.num_tried[node]
                tree.num_tried[node] += 1
                row = tree.counts[1]
                tree.counts[1] += 1
                tree.state_row[child] = row
                states[row] = states[tree.state_row[node]]
                kernels.apply(states[row], tree.action[child])
                depth += 1
                path[depth] = child
                if states[row, layout.STATUS] != layout.ONGOING:
                    result = kernels.outcome(states[row])
                    tree.proven[child] = result if tree.mover[child] == 0 else -result
                else:
                    result = kernels.random_playout(states[row])
                break
            node = _ucb_child(node, tree, exploration)
            depth += 1
            path[depth] = node
        solving = tree.proven[path[depth]] != UNPROVEN
        for i in range(depth, -1, -1):
            n = path[i]
            tree.visits[n] += 1
            tree.value_sum[n] += result if tree.mover[n] == 0 else -result
            if solving and i < depth and tree.proven[n] == UNPROVEN:
                solving = _try_solve(n, tree)
        done += 1
    return done


@dataclass(frozen=True)
class UctResult:
    """One search: the move chosen and what the search saw at the root."""

    action: int
    visit_counts: np.ndarray  # [num_actions] int64, visits of each root move
    root_value: float  # expected result for the player to move, in [-1, 1]
    simulations: int
    proven: bool  # the root's value is exact (MCTS-Solver)


class UCT:
    """UCT search over any game of ``ultimate_rl.games``.

    ``num_simulations`` and/or ``time_per_move`` (seconds) bound each search; with both the first
    limit reached ends it, with neither it runs 1,000 simulations. ``exploration`` is the UCB1
    constant on values in [-1, 1]. ``seed`` makes searches reproducible (for a simulation budget).
    """

    def __init__(
        self,
        num_simulations: int | None = None,
        time_per_move: float | None = None,
        exploration: float = 1.4,
        seed: int | None = None,
    ) -> None:
        if num_simulations is None and time_per_move is None:
            num_simulations = 1000
        if num_simulations is not None and (
            isinstance(num_simulations, bool) or not isinstance(num_simulations, int | np.integer)
        ):
            raise TypeError(f"num_simulations must be an int, got {num_simulations!r}")
        if num_simulations is not None and num_simulations <= 0:
            raise ValueError(f"num_simulations must be positive, got {num_simulations}")
        if time_per_move is not None and not time_per_move > 0:
            raise ValueError(
                f"time_per_move must be a positive number of seconds, got {time_per_move}"
            )
        if not (exploration >= 0 and math.isfinite(exploration)):
            raise ValueError(f"exploration must be a finite number >= 0, got {exploration}")
        self.num_simulations = num_simulations
        self.time_per_move = time_per_move
        self.exploration = float(exploration)
        self._rng = np.random.default_rng(seed)
        self._allocate(nodes=4096, rows=1024)

    def _allocate(self, nodes: int, rows: int) -> None:
        int32 = np.int32
        self._tree = UctTree(
            parent=np.empty(nodes, int32),
            action=np.empty(nodes, int32),
            mover=np.empty(nodes, np.int8),
            first_child=np.empty(nodes, int32),
            num_children=np.empty(nodes, int32),
            num_tried=np.empty(nodes, int32),
            visits=np.empty(nodes, np.int64),
            value_sum=np.empty(nodes, np.float64),
            proven=np.empty(nodes, np.int8),
            state_row=np.empty(nodes, int32),
            counts=np.zeros(2, np.int64),
        )
        self._states = np.empty((rows, layout.STATE_LEN), layout.STATE_DTYPE)
        self._path = np.empty(layout.MAX_ACTIONS + 2, np.int64)

    def _grow(self) -> None:
        """Doubles whichever arrays are nearly full, keeping their contents."""
        used_nodes, used_rows = (int(x) for x in self._tree.counts)
        old_tree, old_states = self._tree, self._states
        nodes, rows = len(old_tree.parent), len(old_states)
        self._allocate(
            nodes * 2 if used_nodes + layout.MAX_ACTIONS > nodes else nodes,
            rows * 2 if used_rows >= rows else rows,
        )
        for name in UctTree._fields:
            used = 2 if name == "counts" else used_nodes
            getattr(self._tree, name)[:used] = getattr(old_tree, name)[:used]
        self._states[:used_rows] = old_states[:used_rows]

    def _reset(self, state: np.ndarray) -> None:
        tree = self._tree
        tree.parent[0], tree.action[0], tree.mover[0] = -1, -1, 1 - state[layout.PLAYER]
        tree.first_child[0], tree.num_children[0], tree.num_tried[0] = -1, 0, 0
        tree.visits[0], tree.value_sum[0], tree.proven[0], tree.state_row[0] = 0, 0.0, UNPROVEN, 0
        tree.counts[:] = (1, 1)
        self._states[0] = state

    def search(self, state: np.ndarray) -> UctResult:
        """Searches ``state`` (a flat state array, game not over) and returns the chosen move."""
        state = np.asarray(state)
        if state.dtype != layout.STATE_DTYPE or state.shape != (layout.STATE_LEN,):
            raise ValueError(
                f"a state is an int32 array of shape ({layout.STATE_LEN},), got {state.dtype} "
                f"{state.shape}; make states with game.initial_state() and game.apply()"
            )
        if state[layout.STATUS] != layout.ONGOING:
            raise ValueError("cannot search a finished game: the state is terminal")
        kernels.seed(int(self._rng.integers(2**31 - 1)))
        self._reset(state)
        deadline = None if self.time_per_move is None else time.perf_counter() + self.time_per_move
        budget = self.num_simulations
        done = 0
        while (budget is None or done < budget) and self._tree.proven[0] == UNPROVEN:
            block = _BLOCK_SIMULATIONS if budget is None else budget - done
            if deadline is not None:
                block = min(block, _BLOCK_SIMULATIONS)
            ran = run_simulations(self._tree, self._states, block, self.exploration, self._path)
            done += ran
            if deadline is not None and time.perf_counter() >= deadline:
                break
            if ran < block and self._tree.proven[0] == UNPROVEN:
                self._grow()
        return self._result(state, done)

    def _result(self, state: np.ndarray, simulations: int) -> UctResult:
        tree = self._tree
        children = np.arange(tree.first_child[0], tree.first_child[0] + tree.num_children[0])
        visits = tree.visits[children]
        counts = np.zeros(int(kernels.num_actions(state)), np.int64)
        counts[tree.action[children]] = visits
        proven = tree.proven[children]
        if (proven == 1).any():
            best = children[np.argmax(proven == 1)]
        else:
            # the most visited move that is not a proven loss (if any is not), then the best mean
            means = tree.value_sum[children] / np.maximum(visits, 1)
            alive = proven != -1
            order = np.lexsort((means, visits, alive if alive.any() else ~alive))
            best = children[order[-1]]
        root_proven = bool(tree.proven[0] != UNPROVEN)
        if root_proven:
            root_value = -float(tree.proven[0])
        else:
            root_value = -tree.value_sum[0] / max(int(tree.visits[0]), 1)
        return UctResult(
            int(tree.action[best]), counts, float(root_value), simulations, root_proven
        )
