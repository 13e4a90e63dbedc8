"""The simulate / expand / backup loop that every batched search algorithm shares.

One simulation step over ``B`` trees is three calls, whatever ``B`` is:

1. ``simulate`` descends every tree to a leaf (with virtual loss when it collects several leaves
   per tree), choosing children with the algorithm's ``select_child``, plays the move into the
   leaf and writes its planes and legal mask into a ``LeafBatch``; leaves that end the game are
   backed up at once with their exact result;
2. the caller evaluates all pending leaves in ONE network call;
3. ``expand_leaves`` turns the logits into priors over the legal moves, expands the leaves and
   backs their values up.
"""

from __future__ import annotations

import importlib
import math
from typing import NamedTuple

import numpy as np
from numba import literal_unroll, njit
from numba.core.registry import CPUDispatcher

from ultimate_rl.games import kernels, layout
from ultimate_rl.search.algorithm import Algorithm
from ultimate_rl.search.config import ALGORITHMS
from ultimate_rl.search.solver import solve_upward
from ultimate_rl.search.tree import PENDING, UNPROVEN, for_player, keep_subtree, plant_root


def _algorithm(name: str) -> Algorithm:
    """Algorithm ``name``: the ``NAME`` record (upper case) of module ``search/name.py``."""
    return getattr(importlib.import_module(f"ultimate_rl.search.{name}"), name.upper())


REGISTRY = tuple(_algorithm(name) for name in ALGORITHMS)
"""Every batched algorithm, derived from ``config.ALGORITHMS`` (``SearchParams.algorithm``
indexes both): adding one is a module like ``puct.py`` and its name in that list."""


class _Selector(NamedTuple):
    algorithm: int  # index into REGISTRY
    select_child: CPUDispatcher


# numba cannot take a function as a cached kernel's argument, so the kernels reach each
# algorithm's child selection through this constant, unrolled at compile time.
_SELECTORS = tuple(_Selector(i, algorithm.select_child) for i, algorithm in enumerate(REGISTRY))


class LeafBatch(NamedTuple):
    """Leaves waiting for the network: row ``i`` is node ``node[i]`` of tree ``tree[i]``."""

    planes: np.ndarray  # [slots, C, H, W] float32
    masks: np.ndarray  # [slots, A] bool
    tree: np.ndarray  # [slots] int64
    node: np.ndarray  # [slots] int64


def new_leaf_batch(slots: int, observation_shape: tuple[int, ...], num_actions: int) -> LeafBatch:
    return LeafBatch(
        planes=np.zeros((slots, *observation_shape), np.float32),
        masks=np.zeros((slots, num_actions), bool),
        tree=np.zeros(slots, np.int64),
        node=np.zeros(slots, np.int64),
    )


@njit(cache=True)
def _emit_leaf(f, b, node, leaves, slot, scratch):
    """Writes node ``node`` of tree ``b`` as row ``slot`` of the leaves for the network."""
    state = f.state[b, node]
    kernels.encode(state, leaves.planes[slot])  # writes every entry
    kernels.legal_mask(state, scratch)
    for a in range(leaves.masks.shape[1]):
        leaves.masks[slot, a] = scratch[a] != 0
    leaves.tree[slot], leaves.node[slot] = b, node


@njit(cache=True)
def start_roots(f, states, reuse, leaves):
    """Points tree ``b``'s root at ``states[b]``: with ``reuse``, the tree's node of that state
    keeps its subtree (``tree.keep_subtree``); otherwise a new root. Returns how many new roots
    wait for the network (listed in ``leaves``)."""
    scratch = np.zeros(layout.MAX_ACTIONS, np.uint8)
    pending = 0
    for b in range(states.shape[0]):
        if reuse and keep_subtree(f, b, states[b]):
            continue
        plant_root(f, b, states[b])
        _emit_leaf(f, b, 0, leaves, pending, scratch)
        pending += 1
    return pending


@njit(cache=True)
def _backup(f, b, node, result, virtual_loss):
    """Adds ``result`` (first player's view) from ``node`` up to the root; the visits were already
    counted on the way down, with ``virtual_loss`` taken off the edges, which this gives back."""
    f.value_sum[b, node] += for_player(result, f.state[b, node, layout.PLAYER])
    while f.parent[b, node] >= 0:
        edge, node = f.parent_edge[b, node], f.parent[b, node]
        value = for_player(result, f.state[b, node, layout.PLAYER])
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
def simulate(f, num_trees, params, roots, num_simulations, leaves):
    """Descends every tree up to ``params.leaves_per_tree`` times (counting simulations in
    ``roots.simulations_done``); returns how many leaves await the network in ``leaves``.

    A descent ends on a new leaf (left for the network), on a finished game or a proven node
    below the root (backed up at once with its exact result, a draw as ``roots.draw_value``;
    with ``params.solver`` a new finished game's result then climbs the tree, ``solver.py``;
    with ``params.dead_draws`` a position the game proves drawn counts as finished) or on
    another descent's pending leaf (undone; the tree's remaining leaves wait for the next
    step). The descent is written out in this one loop, and the algorithm's ``select_child`` is
    reached without a wrapper: each extra call level that takes the forest by value cost ~25%
    of the search's speed (``scripts/bench.py suite=search``).
    """
    virtual_loss = params.virtual_loss
    scratch = np.zeros(layout.MAX_ACTIONS, np.uint8)
    sigma = np.empty(layout.MAX_ACTIONS, np.float64)
    done = roots.simulations_done
    pending = 0
    for b in range(num_trees):
        for _ in range(params.leaves_per_tree):
            if done[b] >= num_simulations:
                break
            node, created = 0, False
            f.visits[b, 0] += 1
            # expanded and not proven (the root's moves are searched even when it is proven)
            while f.num_edges[b, node] > 0 and (node == 0 or f.proven[b, node] == UNPROVEN):
                k = 0
                for selector in literal_unroll(_SELECTORS):
                    if selector.algorithm == params.algorithm:
                        k = selector.select_child(f, b, node, roots, params, sigma)
                edge = f.first_edge[b, node] + k
                f.edge_visits[b, edge] += 1
                f.edge_value_sum[b, edge] -= virtual_loss
                child = f.edge_child[b, edge]
                if child < 0:  # first visit: the node is created, not yet expanded
                    child, created = f.node_count[b], True
                    f.node_count[b] += 1
                    f.edge_child[b, edge] = child
                    f.state[b, child] = f.state[b, node]
                    kernels.apply(f.state[b, child], f.edge_action[b, edge])
                    f.parent[b, child], f.parent_edge[b, child] = node, edge
                    f.visits[b, child], f.first_edge[b, child] = 0, -1
                    f.value_sum[b, child], f.raw_value[b, child] = 0.0, 0.0
                    ongoing = f.state[b, child, layout.STATUS] == layout.ONGOING
                    if ongoing and params.dead_draws:
                        ongoing = not kernels.dead_draw(f.state[b, child])
                    f.num_edges[b, child] = PENDING if ongoing else 0
                    f.proven[b, child] = (  # a dead draw's outcome: 0, a draw
                        UNPROVEN if ongoing else round(kernels.outcome(f.state[b, child]))
                    )
                node = child
                f.visits[b, node] += 1
            if f.proven[b, node] != UNPROVEN:  # a finished game or a proof: its exact result
                result = float(f.proven[b, node])
                _backup(f, b, node, result if result != 0 else roots.draw_value[b], virtual_loss)
                if created and params.solver:
                    solve_upward(f, b, node)
            elif created:  # a new leaf for the network
                _emit_leaf(f, b, node, leaves, pending, scratch)
                pending += 1
            else:  # another descent's leaf, still pending: this one waits for the next step
                _undo_descent(f, b, node, virtual_loss)
                break
            done[b] += 1
    return pending


@njit(cache=True)
def expand_leaves(f, leaves, count, logits, values, params):
    """Gives each pending leaf its legal moves with softmax priors and backs its value up: the
    network's, or with ``params.rollouts`` its mix with the leaf's playouts (``raw_value`` keeps
    the mix too, so first-play urgency and Gumbel's completed values start from it)."""
    masks = leaves.masks
    weight = params.rollout_weight
    for i in range(count):
        b, node = leaves.tree[i], leaves.node[i]
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
        result = for_player(values[i], f.state[b, node, layout.PLAYER])  # first player's view
        if params.rollouts > 0:
            total = kernels.playouts(f.state[b, node], params.rollouts, params.guided_rollouts)
            result = (1.0 - weight) * result + weight * total / params.rollouts
        f.raw_value[b, node] = for_player(result, f.state[b, node, layout.PLAYER])
        _backup(f, b, node, result, params.virtual_loss)
