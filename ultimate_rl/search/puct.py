"""Batched AlphaZero search (PUCT or Gumbel root search) for a network, over many games at once.

``BatchedSearch`` holds ``B`` trees in flat arrays (a "forest": node and edge arrays of shape
``[B, capacity]``). One simulation step is three calls, whatever ``B`` is:

1. a numba kernel descends every tree to a leaf (with virtual loss when it collects several leaves
   per tree), plays the move into it and writes its planes and legal mask into shared buffers;
   leaves that end the game are backed up at once with their exact result;
2. Python calls ``evaluate(planes, masks)`` ONCE for all pending leaves;
3. a numba kernel turns the logits into priors over the legal moves, expands the leaves and backs
   their values up.

The network is only the ``Evaluator`` callable (this package never imports ``nn``).

Edge ``e`` of node ``n`` holds the statistics of a move from ``n``: visits, and the sum of values
from the view of the player to move at ``n``. Node 0 of every tree is its root.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np
from numba import njit

from ultimate_rl.games import kernels as K
from ultimate_rl.games import layout as L
from ultimate_rl.games.base import Game
from ultimate_rl.search import gumbel as G

Evaluator = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
"""``evaluate(planes [N, C, H, W] float32, masks [N, A] bool) -> (logits [N, A], values [N])``;
values in [-1, 1] for the player to move at each position. (contract)"""

ALGORITHMS = ("puct", "gumbel")
_PUCT, _GUMBEL = 0, 1
_PENDING = -1  # num_edges of a node that waits for the network
_EMPTY = 0  # node_count of a tree that has no root yet


class SearchError(ValueError):
    """Bad search input or a misbehaving evaluator."""


@dataclass(frozen=True)
class SearchConfig:
    """Settings of ``BatchedSearch``. The defaults are AlphaZero's (and mctx's for Gumbel).

    - ``algorithm``: ``"puct"`` (AlphaZero) or ``"gumbel"`` (Gumbel root search, whose policy
      target improves on the prior even with few simulations).
    - ``c_puct``, ``c_puct_base``: exploration ``c = c_puct + log((N + base + 1) / base)``.
    - ``fpu_reduction`` / ``root_fpu_reduction``: an unvisited move is valued at the node's
      network value minus this (first-play urgency).
    - ``dirichlet_alpha``, ``dirichlet_fraction``: root noise of PUCT when ``add_noise``.
    - ``tree_reuse``: keep the subtree of the move played (PUCT only; Gumbel's sequential halving
      needs fresh root counts, so it always starts a new tree).
    - ``leaves_per_tree``, ``virtual_loss``: leaves collected per tree and evaluation call.
    - ``gumbel_num_considered``, ``c_visit``, ``c_scale``: Gumbel's ``m`` and its
      ``sigma(q) = (c_visit + max N) * c_scale * q``.
    """

    algorithm: str = "puct"
    num_simulations: int = 200
    c_puct: float = 1.25
    c_puct_base: float = 19652.0
    fpu_reduction: float = 0.25
    root_fpu_reduction: float = 0.0
    dirichlet_alpha: float = 0.3
    dirichlet_fraction: float = 0.25
    temperature: float = 1.0
    tree_reuse: bool = True
    leaves_per_tree: int = 1
    virtual_loss: float = 1.0
    gumbel_num_considered: int = 16
    c_visit: float = 50.0
    c_scale: float = 0.1

    def __post_init__(self) -> None:
        if self.algorithm not in ALGORITHMS:
            raise SearchError(f"algorithm must be one of {ALGORITHMS}, got {self.algorithm!r}")
        _check_count("num_simulations", self.num_simulations)
        _check_count("leaves_per_tree", self.leaves_per_tree)
        _check_count("gumbel_num_considered", self.gumbel_num_considered)
        for name in ("c_puct", "c_puct_base", "dirichlet_alpha", "c_visit", "c_scale"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise SearchError(f"{name} must be a finite number > 0, got {value!r}")
        for name in ("fpu_reduction", "root_fpu_reduction", "virtual_loss", "temperature"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise SearchError(f"{name} must be a finite number >= 0, got {value!r}")
        if not 0 <= self.dirichlet_fraction <= 1:
            raise SearchError(f"dirichlet_fraction must be in [0, 1]: {self.dirichlet_fraction}")

    @classmethod
    def from_dict(cls, options: dict) -> SearchConfig:
        """Builds a config from a mapping (e.g. a Hydra node); unknown keys raise, listing the
        valid ones."""
        valid = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - valid)
        if unknown:
            raise SearchError(f"unknown search option(s) {unknown}; valid options: {sorted(valid)}")
        return cls(**dict(options))


def _check_count(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise SearchError(f"{name} must be an int, got {value!r}")
    if value <= 0:
        raise SearchError(f"{name} must be positive, got {value}")


@dataclass(frozen=True)
class SearchOutput:
    """What one ``BatchedSearch.search`` call found, one row per game.

    ``policy_target`` is the training target: visit frequencies (PUCT) or the improved policy
    (Gumbel). ``q_values`` are mean values of root moves for the player to move (0 where
    unvisited: check ``visit_counts``). ``prior`` is the network's root policy, without noise.
    """

    policy_target: np.ndarray  # [B, A] float32
    visit_counts: np.ndarray  # [B, A] int32
    root_value: np.ndarray  # [B] float32, the player to move's expected result
    action: np.ndarray  # [B] int64, the move to play
    q_values: np.ndarray  # [B, A] float32
    prior: np.ndarray  # [B, A] float32


class Forest(NamedTuple):
    """Flat arrays of ``B`` trees; numba kernels take the namedtuple as one argument."""

    state: np.ndarray  # [B, N, STATE_LEN] int32
    first_edge: np.ndarray  # [B, N] int32
    num_edges: np.ndarray  # [B, N] int32; _PENDING while waiting for the network, 0 if terminal
    parent: np.ndarray  # [B, N] int32, -1 at the root
    parent_edge: np.ndarray  # [B, N] int32
    visits: np.ndarray  # [B, N] int32, virtual visits included while a step runs
    value_sum: np.ndarray  # [B, N] float64, view of the player to move at the node
    raw_value: np.ndarray  # [B, N] float32, the network's value there
    edge_action: np.ndarray  # [B, E] int32
    edge_prior: np.ndarray  # [B, E] float32
    edge_child: np.ndarray  # [B, E] int32, -1 until the move is first tried
    edge_visits: np.ndarray  # [B, E] int32
    edge_value_sum: np.ndarray  # [B, E] float64, view of the player to move at the parent
    node_count: np.ndarray  # [B] int64
    edge_count: np.ndarray  # [B] int64


def _new_forest(trees: int, nodes: int, edges: int) -> Forest:
    i32 = np.int32
    return Forest(
        state=np.zeros((trees, nodes, L.STATE_LEN), L.STATE_DTYPE),
        first_edge=np.zeros((trees, nodes), i32),
        num_edges=np.zeros((trees, nodes), i32),
        parent=np.zeros((trees, nodes), i32),
        parent_edge=np.zeros((trees, nodes), i32),
        visits=np.zeros((trees, nodes), i32),
        value_sum=np.zeros((trees, nodes), np.float64),
        raw_value=np.zeros((trees, nodes), np.float32),
        edge_action=np.zeros((trees, edges), i32),
        edge_prior=np.zeros((trees, edges), np.float32),
        edge_child=np.zeros((trees, edges), i32),
        edge_visits=np.zeros((trees, edges), i32),
        edge_value_sum=np.zeros((trees, edges), np.float64),
        node_count=np.zeros(trees, np.int64),
        edge_count=np.zeros(trees, np.int64),
    )


# --- kernels -------------------------------------------------------------------------------------


@njit(cache=True)
def _for_player(value, player):
    """A first-player value seen by ``player``."""
    return value if player == 0 else -value


@njit(cache=True)
def _backup(f, b, node, result, virtual_loss):
    """Adds ``result`` (first player's view) from ``node`` up to the root; the visits were already
    counted on the way down, with ``virtual_loss`` taken off the edges, which this gives back."""
    f.value_sum[b, node] += _for_player(result, f.state[b, node, L.PLAYER])
    while f.parent[b, node] >= 0:
        edge, node = f.parent_edge[b, node], f.parent[b, node]
        value = _for_player(result, f.state[b, node, L.PLAYER])
        f.edge_value_sum[b, edge] += value + virtual_loss
        f.value_sum[b, node] += value


@njit(cache=True)
def _undo_descent(f, b, node, virtual_loss):
    """Takes back the visits and virtual loss of a descent that ended on a pending leaf."""
    f.visits[b, node] -= 1
    while f.parent[b, node] >= 0:
        edge, node = f.parent_edge[b, node], f.parent[b, node]
        f.edge_visits[b, edge] -= 1
        f.edge_value_sum[b, edge] += virtual_loss
        f.visits[b, node] -= 1


@njit(cache=True)
def _puct_pick(f, b, node, priors, c_puct, c_base, fpu_reduction):
    """Edge offset maximising ``Q + c * P * sqrt(N) / (1 + n)``; ``priors`` by edge offset."""
    first = f.first_edge[b, node]
    n_parent = f.visits[b, node]
    c = c_puct + math.log((n_parent + c_base + 1.0) / c_base)
    u_scale = c * math.sqrt(n_parent)
    fpu = f.raw_value[b, node] - fpu_reduction
    best, best_score = 0, -np.inf
    for k in range(f.num_edges[b, node]):
        n = f.edge_visits[b, first + k]
        q = f.edge_value_sum[b, first + k] / n if n > 0 else fpu
        score = q + u_scale * priors[k] / (1.0 + n)
        if score > best_score:
            best, best_score = k, score
    return best


@njit(cache=True)
def _emit_leaf(state, planes, masks, scratch, slot):
    """Writes a leaf's network input into row ``slot`` of the shared buffers."""
    K.encode(state, planes[slot])  # writes every entry
    K.legal_mask(state, scratch)
    for a in range(masks.shape[1]):
        masks[slot, a] = scratch[a] != 0


@njit(cache=True)
def select_leaves(
    f,
    num_trees,
    params,
    algorithm,
    root_prior,
    gumbel,
    schedule,
    considered,
    simulations_done,
    num_simulations,
    leaves_per_tree,
    planes,
    masks,
    leaf_tree,
    leaf_node,
):
    """Descends every tree up to ``leaves_per_tree`` times; returns how many leaves await the
    network (their trees and nodes in ``leaf_tree`` / ``leaf_node``, their inputs in ``planes`` /
    ``masks``). Finished games met on the way are backed up at once."""
    c_puct, c_base, fpu, root_fpu, virtual_loss, c_visit, c_scale = params
    scratch = np.zeros(L.MAX_ACTIONS, np.uint8)
    sigma = np.empty(L.MAX_ACTIONS, np.float64)
    pending = 0
    for b in range(num_trees):
        for _ in range(leaves_per_tree):
            if simulations_done[b] >= num_simulations:
                break
            node = 0
            f.visits[b, 0] += 1
            collided = False
            while True:
                count = f.num_edges[b, node]
                if count == _PENDING:
                    _undo_descent(f, b, node, virtual_loss)
                    collided = True
                    break
                if count == 0:  # a finished game: its exact result
                    _backup(f, b, node, K.outcome(f.state[b, node]), virtual_loss)
                    break
                first = f.first_edge[b, node]
                if node == 0 and algorithm == _GUMBEL:
                    done = simulations_done[b]
                    target = schedule[considered[b], done] if done < schedule.shape[1] else -1
                    k = G.root_pick(f, b, gumbel, target, c_visit, c_scale, sigma)
                elif algorithm == _GUMBEL:
                    k = G.interior_pick(f, b, node, c_visit, c_scale, sigma)
                elif node == 0:
                    k = _puct_pick(f, b, 0, root_prior[b], c_puct, c_base, root_fpu)
                else:
                    k = _puct_pick(f, b, node, f.edge_prior[b, first:], c_puct, c_base, fpu)
                edge = first + k
                f.edge_visits[b, edge] += 1
                f.edge_value_sum[b, edge] -= virtual_loss
                child = f.edge_child[b, edge]
                if child >= 0:
                    node = child
                    f.visits[b, node] += 1
                    continue
                child = f.node_count[b]
                f.node_count[b] += 1
                f.edge_child[b, edge] = child
                f.state[b, child] = f.state[b, node]
                K.apply(f.state[b, child], f.edge_action[b, edge])
                f.parent[b, child] = node
                f.parent_edge[b, child] = edge
                f.visits[b, child] = 1
                f.value_sum[b, child] = 0.0
                f.raw_value[b, child] = 0.0
                f.first_edge[b, child] = -1
                if f.state[b, child, L.STATUS] != L.ONGOING:
                    f.num_edges[b, child] = 0
                    _backup(f, b, child, K.outcome(f.state[b, child]), virtual_loss)
                else:
                    f.num_edges[b, child] = _PENDING
                    _emit_leaf(f.state[b, child], planes, masks, scratch, pending)
                    leaf_tree[pending] = b
                    leaf_node[pending] = child
                    pending += 1
                break
            if collided:
                break  # the rest of this tree's leaves wait for the next step
            simulations_done[b] += 1
    return pending


@njit(cache=True)
def expand_leaves(f, count, leaf_tree, leaf_node, masks, logits, values, virtual_loss):
    """Gives each pending leaf its legal moves with softmax priors and backs its value up."""
    for i in range(count):
        b, node = leaf_tree[i], leaf_node[i]
        top = -np.inf
        for a in range(masks.shape[1]):
            if masks[i, a]:
                top = max(top, logits[i, a])
        first = f.edge_count[b]
        k, total = 0, 0.0
        for a in range(masks.shape[1]):
            if masks[i, a]:
                e = first + k
                p = math.exp(logits[i, a] - top)
                total += p
                f.edge_action[b, e] = a
                f.edge_prior[b, e] = p
                f.edge_child[b, e] = -1
                f.edge_visits[b, e] = 0
                f.edge_value_sum[b, e] = 0.0
                k += 1
        for e in range(first, first + k):
            f.edge_prior[b, e] /= total
        f.first_edge[b, node] = first
        f.num_edges[b, node] = k
        f.edge_count[b] = first + k
        f.raw_value[b, node] = values[i]
        result = _for_player(values[i], f.state[b, node, L.PLAYER])
        _backup(f, b, node, result, virtual_loss)


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
def reroot(f, b, new_root):
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
def prepare_roots(f, states, planes, masks, leaf_tree, leaf_node):
    """Points each tree's root at ``states[b]``: kept if it already is, moved down to a node of
    that state within two moves, otherwise a new root. Returns how many new roots need the network
    (listed like ``select_leaves``' leaves)."""
    scratch = np.zeros(L.MAX_ACTIONS, np.uint8)
    pending = 0
    for b in range(states.shape[0]):
        if f.node_count[b] != _EMPTY:
            node = _descendant_with_state(f, b, states[b], 2)
            if node > 0:
                reroot(f, b, node)
            if node >= 0:
                continue
        f.state[b, 0] = states[b]
        f.parent[b, 0], f.parent_edge[b, 0], f.first_edge[b, 0] = -1, -1, -1
        f.num_edges[b, 0] = _PENDING
        f.visits[b, 0], f.value_sum[b, 0], f.raw_value[b, 0] = 1, 0.0, 0.0
        f.node_count[b], f.edge_count[b] = 1, 0
        _emit_leaf(states[b], planes, masks, scratch, pending)
        leaf_tree[pending], leaf_node[pending] = b, 0
        pending += 1
    return pending


@njit(cache=True)
def root_statistics(f, num_trees, visit_counts, q_values, prior, root_value, num_moves):
    """Per-move visits, mean values and priors at each root, scattered to action indices."""
    for b in range(num_trees):
        visit_counts[b], q_values[b], prior[b] = 0, 0.0, 0.0
        first = f.first_edge[b, 0]
        num_moves[b] = f.num_edges[b, 0]
        for e in range(first, first + f.num_edges[b, 0]):
            a = f.edge_action[b, e]
            n = f.edge_visits[b, e]
            visit_counts[b, a] = n
            prior[b, a] = f.edge_prior[b, e]
            q_values[b, a] = f.edge_value_sum[b, e] / n if n > 0 else 0.0
        root_value[b] = f.value_sum[b, 0] / f.visits[b, 0]


@njit(cache=True)
def root_priors(f, num_trees, out):
    """The network's root priors by edge offset (``out[b, k]`` for the k-th root move)."""
    for b in range(num_trees):
        first = f.first_edge[b, 0]
        out[b] = 0.0
        for k in range(f.num_edges[b, 0]):
            out[b, k] = f.edge_prior[b, first + k]


# --- the searcher --------------------------------------------------------------------------------


class BatchedSearch:
    """``batch_size`` search trees of one game, searched together for a network.

    Typical self-play loop::

        searcher = BatchedSearch(game, batch_size=256, config=SearchConfig())
        out = searcher.search(states, evaluate, add_noise=True)
        # play out.action[i] in game i; then either pass the new states to the next search
        # (trees whose root is an ancestor within two moves are reused automatically) or call
        # searcher.advance(i, action) / searcher.reset(i) explicitly.

    ``num_simulations`` per call overrides the config, e.g. for playout-cap randomisation's fast
    moves. ``seed`` fixes the noise (Dirichlet, Gumbel) and the temperature sampling.
    """

    def __init__(
        self,
        game: Game,
        batch_size: int,
        config: SearchConfig | None = None,
        seed: int | None = None,
    ) -> None:
        _check_count("batch_size", batch_size)
        self.game = game
        self.batch_size = int(batch_size)
        self.config = config if config is not None else SearchConfig()
        self.num_actions = int(game.num_actions)
        self._rng = np.random.default_rng(seed)
        cfg = self.config
        self._params = np.array(
            [
                cfg.c_puct,
                cfg.c_puct_base,
                cfg.fpu_reduction,
                cfg.root_fpu_reduction,
                cfg.virtual_loss if cfg.leaves_per_tree > 1 else 0.0,
                cfg.c_visit,
                cfg.c_scale,
            ],
            np.float64,
        )
        slots = self.batch_size * cfg.leaves_per_tree
        self._planes = np.zeros((slots, *game.observation_shape), np.float32)
        self._masks = np.zeros((slots, self.num_actions), bool)
        self._leaf_tree = np.zeros(slots, np.int64)
        self._leaf_node = np.zeros(slots, np.int64)
        nodes = 2 * (cfg.num_simulations + 1)
        self._forest = _new_forest(self.batch_size, nodes, nodes * min(self.num_actions, 16))
        self._schedules: dict[int, np.ndarray] = {}

    # --- tree management -------------------------------------------------------------------------
    def reset(self, i: int) -> None:
        """Forgets tree ``i`` (a new game starts there)."""
        self._check_index(i)
        self._forest.node_count[i] = _EMPTY

    def advance(self, i: int, action: int) -> None:
        """Moves tree ``i``'s root to the child reached by ``action``, keeping its subtree (with
        ``tree_reuse``; otherwise, or if that move was never searched, the tree is reset)."""
        self._check_index(i)
        f = self._forest
        if not self._reusing or f.node_count[i] == _EMPTY or f.num_edges[i, 0] <= 0:
            self.reset(i)
            return
        first = f.first_edge[i, 0]
        edges = slice(first, first + f.num_edges[i, 0])
        hit = np.flatnonzero(f.edge_action[i, edges] == action)
        child = f.edge_child[i, first + hit[0]] if len(hit) else -1
        if child < 0:
            self.reset(i)
        else:
            reroot(f, i, child)

    @property
    def _reusing(self) -> bool:
        return self.config.tree_reuse and self.config.algorithm == "puct"

    def _check_index(self, i: int) -> None:
        if not 0 <= i < self.batch_size:
            raise SearchError(f"tree index {i} is outside 0..{self.batch_size - 1}")

    def _ensure_capacity(self, new_leaves: int) -> None:
        """Doubles the arrays when a step could overflow them (rare; contents are kept)."""
        f = self._forest
        nodes, edges = f.visits.shape[1], f.edge_visits.shape[1]
        need_nodes = int(f.node_count.max()) + new_leaves
        need_edges = int(f.edge_count.max()) + new_leaves * self.num_actions
        if need_nodes <= nodes and need_edges <= edges:
            return
        while need_nodes > nodes:
            nodes *= 2
        while need_edges > edges:
            edges *= 2
        grown = _new_forest(self.batch_size, nodes, edges)
        for old, new in zip(f, grown, strict=True):
            new[(slice(None), *(slice(0, size) for size in old.shape[1:]))] = old
        self._forest = grown

    # --- search --------------------------------------------------------------------------------
    def search(
        self,
        states: np.ndarray,
        evaluate: Evaluator,
        add_noise: bool,
        num_simulations: int | None = None,
        temperature: float | np.ndarray | None = None,
    ) -> SearchOutput:
        """Searches ``states`` ([n, STATE_LEN] int32, n <= batch_size, games not over) with tree
        ``i`` for row ``i``.

        ``add_noise``: Dirichlet noise at the root (PUCT) or Gumbel noise (Gumbel); use it in
        self-play, not in evaluation. ``temperature`` (scalar or per game; default the config's)
        sets PUCT's move choice: 0 plays the most visited move, 1 samples by visits. Gumbel plays
        the move its halving keeps.
        """
        cfg = self.config
        num_simulations = cfg.num_simulations if num_simulations is None else num_simulations
        _check_count("num_simulations", num_simulations)
        states = self._check_states(states)
        n = len(states)
        temperatures = self._check_temperature(temperature, n)
        gumbel_mode = cfg.algorithm == "gumbel"
        self._ensure_capacity(1)
        f = self._forest
        if not self._reusing:
            f.node_count[:n] = _EMPTY
        pending = prepare_roots(
            f, states, self._planes, self._masks, self._leaf_tree, self._leaf_node
        )
        self._evaluate_and_expand(pending, evaluate)

        root_prior = np.zeros((n, self.num_actions), np.float32)
        root_priors(f, n, root_prior)
        gumbel = np.zeros((n, self.num_actions), np.float64)
        if add_noise and gumbel_mode:
            gumbel = self._rng.gumbel(size=(n, self.num_actions))
        elif add_noise and cfg.dirichlet_fraction > 0:
            root_prior = self._noisy(f, root_prior)
        considered = np.minimum(
            cfg.gumbel_num_considered, np.maximum(f.num_edges[:n, 0], 1)
        ).astype(np.int64)
        schedule = self._schedule(num_simulations) if gumbel_mode else np.zeros((1, 1), np.int32)
        simulations_done = np.zeros(n, np.int64)
        algorithm = _GUMBEL if gumbel_mode else _PUCT
        while simulations_done.min() < num_simulations:
            self._ensure_capacity(cfg.leaves_per_tree)
            pending = select_leaves(
                self._forest,
                n,
                self._params,
                algorithm,
                root_prior,
                gumbel,
                schedule,
                considered,
                simulations_done,
                num_simulations,
                cfg.leaves_per_tree,
                self._planes,
                self._masks,
                self._leaf_tree,
                self._leaf_node,
            )
            self._evaluate_and_expand(pending, evaluate)
        return self._output(n, gumbel, temperatures)

    def _noisy(self, f: Forest, root_prior: np.ndarray) -> np.ndarray:
        """Root priors mixed with Dirichlet(alpha) noise over each root's legal moves."""
        cfg = self.config
        n = len(root_prior)
        moves = f.num_edges[:n, 0]
        legal = np.arange(self.num_actions)[None, :] < moves[:, None]
        noise = self._rng.gamma(cfg.dirichlet_alpha, size=root_prior.shape) * legal
        noise /= np.maximum(noise.sum(axis=1, keepdims=True), 1e-30)
        mixed = (1 - cfg.dirichlet_fraction) * root_prior + cfg.dirichlet_fraction * noise
        return mixed.astype(np.float32)

    def _schedule(self, num_simulations: int) -> np.ndarray:
        if num_simulations not in self._schedules:
            table = G.halving_schedule(self.config.gumbel_num_considered, num_simulations)
            self._schedules[num_simulations] = table
        return self._schedules[num_simulations]

    def _evaluate_and_expand(self, pending: int, evaluate: Evaluator) -> None:
        if pending == 0:
            return
        planes, masks = self._planes[:pending], self._masks[:pending]
        logits, values = self._check_evaluation(evaluate(planes, masks), masks)
        expand_leaves(
            self._forest,
            pending,
            self._leaf_tree,
            self._leaf_node,
            masks,
            logits,
            values,
            self._params[4],
        )

    def _output(self, n: int, gumbel: np.ndarray, temperatures: np.ndarray) -> SearchOutput:
        cfg = self.config
        a = self.num_actions
        visit_counts = np.zeros((n, a), np.int32)
        q_values = np.zeros((n, a), np.float32)
        prior = np.zeros((n, a), np.float32)
        root_value = np.zeros(n, np.float32)
        num_moves = np.zeros(n, np.int64)
        root_statistics(self._forest, n, visit_counts, q_values, prior, root_value, num_moves)
        if cfg.algorithm == "gumbel":
            policy = np.zeros((n, a), np.float32)
            action = np.zeros(n, np.int64)
            G.root_results(self._forest, n, gumbel, cfg.c_visit, cfg.c_scale, policy, action)
        else:
            policy = (visit_counts / visit_counts.sum(axis=1, keepdims=True)).astype(np.float32)
            action = self._choose(visit_counts, temperatures)
        return SearchOutput(policy, visit_counts, root_value, action, q_values, prior)

    def _choose(self, visit_counts: np.ndarray, temperatures: np.ndarray) -> np.ndarray:
        """Samples moves with probability proportional to ``visits ** (1 / T)``; T = 0 plays the
        most visited move (ties broken at random)."""
        relative = visit_counts / visit_counts.max(axis=1, keepdims=True)
        greedy = temperatures <= 0
        exponent = 1.0 / np.where(greedy, 1.0, temperatures)[:, None]
        weights = np.where(greedy[:, None], relative == 1.0, relative**exponent)
        cumulative = np.cumsum(weights, axis=1)
        draws = self._rng.random(len(weights)) * cumulative[:, -1]
        return (cumulative <= draws[:, None]).sum(axis=1).astype(np.int64)

    # --- input checks ----------------------------------------------------------------------------
    def _check_states(self, states: np.ndarray) -> np.ndarray:
        states = np.asarray(states)
        if states.ndim != 2 or states.shape[1] != L.STATE_LEN or states.dtype != L.STATE_DTYPE:
            raise SearchError(
                f"states must be an int32 array of shape [n, {L.STATE_LEN}], got {states.dtype} "
                f"{states.shape}; stack states made by the game (np.stack([...]))"
            )
        if not 1 <= len(states) <= self.batch_size:
            raise SearchError(
                f"got {len(states)} states for a searcher of batch_size {self.batch_size}"
            )
        if (states[:, L.GAME] != self.game.game_id).any():
            raise SearchError(f"some states are not {self.game.name!r} states")
        over = np.flatnonzero(states[:, L.STATUS] != L.ONGOING)
        if len(over):
            raise SearchError(f"cannot search finished games (rows {over.tolist()})")
        return np.ascontiguousarray(states)

    def _check_temperature(self, temperature: float | np.ndarray | None, n: int) -> np.ndarray:
        value = self.config.temperature if temperature is None else temperature
        temps = np.broadcast_to(np.asarray(value, np.float64), (n,)).copy()
        if not (np.isfinite(temps).all() and (temps >= 0).all()):
            raise SearchError(f"temperature must be finite and >= 0, got {temperature!r}")
        return temps

    def _check_evaluation(self, result: object, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n, a = masks.shape
        if not (isinstance(result, tuple | list) and len(result) == 2):
            raise SearchError("evaluate must return a (policy_logits, values) pair")
        logits = np.asarray(result[0], dtype=np.float32)
        values = np.asarray(result[1], dtype=np.float32)
        if logits.shape != (n, a):
            raise SearchError(
                f"evaluate returned policy_logits of shape {logits.shape}, expected ({n}, {a}) "
                f"for {n} positions and {a} actions"
            )
        if values.shape != (n,):
            raise SearchError(
                f"evaluate returned values of shape {values.shape}, expected ({n},); "
                "flatten a [N, 1] value head with values.reshape(-1)"
            )
        if not np.isfinite(values).all():
            raise SearchError("evaluate returned NaN or infinite values")
        if np.abs(values).max() > 1.0 + 1e-4:
            raise SearchError(
                f"evaluate returned values outside [-1, 1] (max |v| = {np.abs(values).max():.3f}); "
                "squash the value head with tanh"
            )
        if not np.isfinite(logits).all() and not np.isfinite(np.where(masks, logits, 0.0)).all():
            raise SearchError("evaluate returned NaN or infinite policy logits for legal moves")
        return logits, values
