"""Storage of ``B`` search trees in flat arrays (a "forest"), and tree reuse between moves.

Node and edge arrays have shape ``[B, capacity]``; node 0 of every tree is its root. Edge ``e``
of node ``n`` holds the statistics of a move from ``n``: visits, and the sum of values from the
view of the player to move at ``n``. The search algorithms only read and write these arrays; how
a tree is stored, grown, moved and re-rooted lives here alone.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ultimate_rl.games import layout

PENDING = -1  # num_edges of a node that waits for the network
EMPTY = 0  # node_count of a tree that has no root yet
UNPROVEN = -2  # ``proven`` of a node whose result is not known exactly
REUSE_DEPTH = 2  # a tree is kept when the next root is within this many moves of the old one


class Forest(NamedTuple):
    """Flat arrays of ``B`` trees; numba kernels take the namedtuple as one argument."""

    state: np.ndarray  # [B, N, STATE_LEN] int32
    first_edge: np.ndarray  # [B, N] int32
    num_edges: np.ndarray  # [B, N] int32; PENDING while waiting for the network, 0 if terminal
    parent: np.ndarray  # [B, N] int32, -1 at the root
    parent_edge: np.ndarray  # [B, N] int32
    visits: np.ndarray  # [B, N] int32, virtual visits included while a step runs
    value_sum: np.ndarray  # [B, N] float64, view of the player to move at the node
    raw_value: np.ndarray  # [B, N] float32, the leaf's value there (network, mixed with playouts)
    proven: np.ndarray  # [B, N] int8, the exact result for the first player, or UNPROVEN
    edge_action: np.ndarray  # [B, E] int32
    edge_prior: np.ndarray  # [B, E] float32
    edge_child: np.ndarray  # [B, E] int32, -1 until the move is first tried
    edge_visits: np.ndarray  # [B, E] int32
    edge_value_sum: np.ndarray  # [B, E] float64, view of the player to move at the parent
    node_count: np.ndarray  # [B] int64
    edge_count: np.ndarray  # [B] int64


def new_forest(trees: int, nodes: int, edges: int) -> Forest:
    """An empty forest of ``trees`` trees with room for ``nodes`` nodes and ``edges`` edges each."""
    i32 = np.int32
    return Forest(
        state=np.zeros((trees, nodes, layout.STATE_LEN), layout.STATE_DTYPE),
        first_edge=np.zeros((trees, nodes), i32),
        num_edges=np.zeros((trees, nodes), i32),
        parent=np.zeros((trees, nodes), i32),
        parent_edge=np.zeros((trees, nodes), i32),
        visits=np.zeros((trees, nodes), i32),
        value_sum=np.zeros((trees, nodes), np.float64),
        raw_value=np.zeros((trees, nodes), np.float32),
        proven=np.full((trees, nodes), UNPROVEN, np.int8),
        edge_action=np.zeros((trees, edges), i32),
        edge_prior=np.zeros((trees, edges), np.float32),
        edge_child=np.zeros((trees, edges), i32),
        edge_visits=np.zeros((trees, edges), i32),
        edge_value_sum=np.zeros((trees, edges), np.float64),
        node_count=np.zeros(trees, np.int64),
        edge_count=np.zeros(trees, np.int64),
    )


def with_room(f: Forest, new_leaves: int, num_actions: int) -> Forest:
    """``f``, or a copy with doubled arrays when ``new_leaves`` more leaves could overflow it
    (rare: the arrays start at twice a move's simulations)."""
    need_nodes = int(f.node_count.max()) + new_leaves
    need_edges = int(f.edge_count.max()) + new_leaves * num_actions
    return _with_capacity(f, need_nodes, need_edges)


def _with_capacity(f: Forest, need_nodes: int, need_edges: int) -> Forest:
    """``f``, or a copy whose arrays, doubled as often as it takes, hold ``need_nodes`` nodes
    and ``need_edges`` edges a tree."""
    nodes, edges = f.visits.shape[1], f.edge_visits.shape[1]
    if need_nodes <= nodes and need_edges <= edges:
        return f
    while need_nodes > nodes:
        nodes *= 2
    while need_edges > edges:
        edges *= 2
    grown = new_forest(len(f.node_count), nodes, edges)
    for old, new in zip(f, grown, strict=True):
        new[(slice(None), *(slice(0, size) for size in old.shape[1:]))] = old
    return grown


def _used(f: Forest, b: int) -> list[slice]:
    """Per array of ``f``, the part that holds tree ``b``: its nodes, its edges, its counts."""
    nodes, edges = int(f.node_count[b]), int(f.edge_count[b])
    return [
        slice(0, edges if name.startswith("edge_") else nodes) if array.ndim > 1 else slice(None)
        for name, array in zip(Forest._fields, f, strict=True)
    ]


def copy_tree(f: Forest, b: int) -> Forest:
    """Tree ``b`` alone, a forest of one tree trimmed to its nodes and edges (for ``put_tree``):
    a walk over many continuations of one game keeps the tree the game holds at each."""
    return Forest(
        *(
            array[b : b + 1, used].copy() if array.ndim > 1 else array[b : b + 1].copy()
            for array, used in zip(f, _used(f, b), strict=True)
        )
    )


def put_tree(f: Forest, b: int, saved: Forest) -> Forest:
    """``f`` (grown where ``saved`` would not fit) with tree ``b`` replaced by ``saved``, a tree
    ``copy_tree`` took (``saved`` stays as it is)."""
    f = _with_capacity(f, int(saved.node_count[0]), int(saved.edge_count[0]))
    for array, kept, used in zip(f, saved, _used(saved, 0), strict=True):
        if array.ndim > 1:
            array[b, used] = kept[0]
        else:
            array[b] = kept[0]
    return f


def move_tree(f: Forest, source: int, target: int) -> None:
    """Moves tree ``source`` to index ``target`` (dropping the tree there); ``source`` is left
    empty. Lets a caller compact its rows without losing a live game's tree."""
    if source == target:
        return
    for array in f:
        array[target] = array[source]
    f.node_count[source] = EMPTY


# --- kernels -------------------------------------------------------------------------------------


@njit(cache=True)
def for_player(value, player):
    """A first-player value seen by ``player`` (its own inverse)."""
    return value if player == 0 else -value


@njit(cache=True)
def plant_root(f, b, state):
    """Makes tree ``b`` a single root of ``state`` that waits for the network."""
    f.state[b, 0] = state
    f.parent[b, 0], f.parent_edge[b, 0], f.first_edge[b, 0] = -1, -1, -1
    f.num_edges[b, 0] = PENDING
    f.visits[b, 0], f.value_sum[b, 0], f.raw_value[b, 0] = 1, 0.0, 0.0
    f.proven[b, 0] = UNPROVEN
    f.node_count[b], f.edge_count[b] = 1, 0


@njit(cache=True)
def keep_subtree(f, b, state):
    """Tree reuse: moves tree ``b``'s root to its node of ``state`` within ``REUSE_DEPTH`` moves,
    keeping that node's subtree and statistics. False when the tree has no such node, or only
    an unexpanded one (a draw that contempt's ``dead_draw`` ended the descents at)."""
    if f.node_count[b] == EMPTY:
        return False
    node = _descendant_with_state(f, b, state, REUSE_DEPTH)
    if node > 0 and f.num_edges[b, node] <= 0:
        return False
    if node > 0:
        _reroot(f, b, node)
    return node >= 0


@njit(cache=True)
def _descendant_with_state(f, b, state, max_depth):
    """The node within ``max_depth`` moves of the root whose state equals ``state``, or -1."""
    frontier = np.zeros(1, np.int64)
    for _ in range(max_depth + 1):
        following = np.empty(0, np.int64)
        for node in frontier:
            if (f.state[b, node] == state).all():
                return node
            if f.num_edges[b, node] > 0:
                first = f.first_edge[b, node]
                children = f.edge_child[b, first : first + f.num_edges[b, node]]
                following = np.concatenate((following, children[children >= 0].astype(np.int64)))
        frontier = following
    return -1


@njit(cache=True)
def _reroot(f, b, new_root):
    """Makes ``new_root`` the root of tree ``b``, keeping its subtree and dropping the rest.

    The subtree is copied breadth first to the front of the arrays, so the root is node 0 again.
    """
    old = f.node_count[b]
    order = np.empty(old, np.int64)
    new_index = np.full(old, -1, np.int64)
    order[0], new_index[new_root] = new_root, 0
    head, tail = 0, 1
    while head < tail:
        node = order[head]
        head += 1
        if f.num_edges[b, node] > 0:
            first = f.first_edge[b, node]
            for e in range(first, first + f.num_edges[b, node]):
                child = f.edge_child[b, e]
                if child >= 0:
                    new_index[child] = tail
                    order[tail] = child
                    tail += 1
    nodes = order[:tail]
    state, num_edges = f.state[b, nodes].copy(), f.num_edges[b, nodes].copy()
    first_edge, visits = f.first_edge[b, nodes].copy(), f.visits[b, nodes].copy()
    value_sum, raw_value = f.value_sum[b, nodes].copy(), f.raw_value[b, nodes].copy()
    proven = f.proven[b, nodes].copy()
    edge_action, edge_prior = f.edge_action[b].copy(), f.edge_prior[b].copy()
    edge_child, edge_visits = f.edge_child[b].copy(), f.edge_visits[b].copy()
    edge_value_sum = f.edge_value_sum[b].copy()
    edges = 0
    for i in range(tail):
        f.state[b, i] = state[i]
        f.num_edges[b, i] = num_edges[i]
        f.visits[b, i] = visits[i]
        f.value_sum[b, i] = value_sum[i]
        f.raw_value[b, i] = raw_value[i]
        f.proven[b, i] = proven[i]
        f.first_edge[b, i] = edges
        for k in range(max(num_edges[i], 0)):
            old_edge, e = first_edge[i] + k, edges + k
            f.edge_action[b, e] = edge_action[old_edge]
            f.edge_prior[b, e] = edge_prior[old_edge]
            f.edge_visits[b, e] = edge_visits[old_edge]
            f.edge_value_sum[b, e] = edge_value_sum[old_edge]
            child = edge_child[old_edge]
            f.edge_child[b, e] = -1 if child < 0 else new_index[child]
            if child >= 0:
                f.parent[b, new_index[child]] = i
                f.parent_edge[b, new_index[child]] = e
        edges += max(num_edges[i], 0)
    f.parent[b, 0], f.parent_edge[b, 0] = -1, -1
    f.node_count[b], f.edge_count[b] = tail, edges


@njit(cache=True)
def root_statistics(f, num_trees, visit_counts, q_values, prior, root_value):
    """Per-move visits, mean values and priors at each root, scattered to action indices."""
    for b in range(num_trees):
        visit_counts[b], q_values[b], prior[b] = 0, 0.0, 0.0
        first = f.first_edge[b, 0]
        for e in range(first, first + f.num_edges[b, 0]):
            a = f.edge_action[b, e]
            n = f.edge_visits[b, e]
            visit_counts[b, a] = n
            prior[b, a] = f.edge_prior[b, e]
            q_values[b, a] = f.edge_value_sum[b, e] / n if n > 0 else 0.0
        root_value[b] = f.value_sum[b, 0] / f.visits[b, 0]


def greedy_score(visit_counts: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Each move's rank for a greedy choice (temperature 0): its visits, ties broken by the
    network's prior (halved, so it never outweighs a visit). A search that ends with its top
    moves level in visits (a short one does, often: 32 simulations among 16 moves) then plays the
    same move every time, the one the raw policy prefers, and the every-line walk
    (``agents/every_line.py``) follows one line where it would follow each of the tied moves."""
    return visit_counts + 0.5 * prior


def principal_variation(f: Forest, b: int, max_moves: int) -> list[int]:
    """The moves tree ``b``'s search expects from its root: the most visited move, then the
    most visited reply in the position it leads to, and so on while the tree has visits there
    (at most ``max_moves``); ties in visits go to the prior, as a greedy move does
    (``greedy_score``). What an analysis shows beside the root's move shares."""
    moves: list[int] = []
    node = 0
    while len(moves) < max_moves and f.num_edges[b, node] > 0:
        first = int(f.first_edge[b, node])
        edges = slice(first, first + int(f.num_edges[b, node]))
        visits = f.edge_visits[b, edges]
        best = int(np.argmax(greedy_score(visits, f.edge_prior[b, edges])))
        if visits[best] == 0:
            break
        moves.append(int(f.edge_action[b, first + best]))
        node = int(f.edge_child[b, first + best])
        if node < 0:
            break
    return moves
