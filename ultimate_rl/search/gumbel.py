"""Gumbel root search (Danihelka et al., ICLR 2022, "Policy improvement by planning with Gumbel").

The pieces that differ from PUCT, as numba helpers over the forest arrays of ``tree.py``:

- completed Q-values: visited moves keep their mean value, unvisited ones get the "mixed value"
  (the network value blended with the prior-weighted mean of the visited moves), rescaled to
  [0, 1] and scaled by ``sigma = (c_visit + max visits) * c_scale``;
- the root picks moves by sequential halving: simulation ``k`` goes to the best-scoring move
  (``gumbel + logit + sigma(q)``) among those with exactly ``schedule[m, k]`` visits, which first
  samples ``m`` moves without replacement (Gumbel-top-k) and then halves them phase by phase;
- interior nodes pick deterministically: ``argmax(pi'(a) - N(a) / (1 + sum N))`` with the improved
  policy ``pi' = softmax(logits + sigma(completed q))``, the paper's rule;
- the policy target is that improved policy at the root and the move played is the surviving
  move with the best score.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numba import njit

from ultimate_rl.search.algorithm import Algorithm, Roots
from ultimate_rl.search.config import SearchConfig
from ultimate_rl.search.solver import exact_result
from ultimate_rl.search.tree import UNPROVEN, Forest

_TINY_PRIOR = 1e-30  # floor before taking log(prior), so a zero prior stays finite


def halving_schedule(max_considered: int, num_simulations: int) -> np.ndarray:
    """``[max_considered + 1, num_simulations]`` int32 table: row ``m`` gives, for simulation
    ``k``, the visit count the root move it goes to must have, for ``m`` considered moves.

    Each phase gives every remaining move ``max(1, n // (ceil(log2 m) * remaining))`` visits, then
    keeps the better half (at least two); the phases repeat until the budget is used.
    """
    table = np.zeros((max_considered + 1, num_simulations), np.int32)
    for m in range(1, max_considered + 1):
        if m == 1:
            table[m] = np.arange(num_simulations)
            continue
        phases = math.ceil(math.log2(m))
        sequence: list[int] = []
        visits = [0] * m
        remaining = m
        while len(sequence) < num_simulations:
            rounds = max(1, num_simulations // (phases * remaining))
            for _ in range(rounds):
                sequence.extend(visits[:remaining])
                for i in range(remaining):
                    visits[i] += 1
            remaining = max(2, remaining // 2)
        table[m] = sequence[:num_simulations]
    return table


@njit(cache=True)
def completed_sigma(f, b, node, c_visit, c_scale, solver, out):
    """Writes ``sigma(completed q)`` of each move of ``node`` into ``out[:num_edges]``; with the
    ``solver``, a proven move's q is its exact result."""
    first, count = f.first_edge[b, node], f.num_edges[b, node]
    sum_n, max_n, sum_p, sum_pq = 0, 0, 0.0, 0.0
    for k in range(count):
        e = first + k
        n = f.edge_visits[b, e]
        if n > 0:
            sum_n += n
            max_n = max(max_n, n)
            p = f.edge_prior[b, e]
            sum_p += p
            sum_pq += p * f.edge_value_sum[b, e] / n
    raw = f.raw_value[b, node]
    mixed = raw if sum_p <= 0.0 else (raw + sum_n * sum_pq / sum_p) / (1 + sum_n)
    lo, hi = np.inf, -np.inf
    for k in range(count):
        e = first + k
        n = f.edge_visits[b, e]
        q = f.edge_value_sum[b, e] / n if n > 0 else mixed
        exact = exact_result(f, b, node, e) if solver and n > 0 else UNPROVEN
        if exact != UNPROVEN:
            q = exact
        out[k] = q
        lo, hi = min(lo, q), max(hi, q)
    scale = (c_visit + max_n) * c_scale / max(hi - lo, 1e-8)
    for k in range(count):
        out[k] = (out[k] - lo) * scale


@njit(cache=True)
def improved_policy(f, b, node, c_visit, c_scale, solver, out):
    """Writes ``pi' = softmax(log prior + sigma(completed q))`` of ``node``'s moves into ``out``."""
    first, count = f.first_edge[b, node], f.num_edges[b, node]
    completed_sigma(f, b, node, c_visit, c_scale, solver, out)
    top = -np.inf
    for k in range(count):
        out[k] += math.log(max(f.edge_prior[b, first + k], _TINY_PRIOR))
        top = max(top, out[k])
    total = 0.0
    for k in range(count):
        out[k] = math.exp(out[k] - top)
        total += out[k]
    for k in range(count):
        out[k] /= total


@njit(cache=True)
def _interior_pick(f, b, node, c_visit, c_scale, solver, scratch):
    """Edge offset chosen at a non-root node: ``argmax(pi'(a) - N(a) / (1 + sum N))``, passing
    over proven losses with the ``solver``."""
    first, count = f.first_edge[b, node], f.num_edges[b, node]
    improved_policy(f, b, node, c_visit, c_scale, solver, scratch)
    sum_n = 0
    for k in range(count):
        sum_n += f.edge_visits[b, first + k]
    best, best_score = 0, -np.inf
    for k in range(count):
        e = first + k
        score = scratch[k] - f.edge_visits[b, e] / (1.0 + sum_n)
        if score > best_score and not (solver and exact_result(f, b, node, e) == -1):
            best, best_score = k, score
    return best


@njit(cache=True)
def _root_scores(f, b, gumbel, c_visit, c_scale, solver, sigma):
    """``gumbel + log prior + sigma(completed q)`` for each root move, written into ``sigma``."""
    completed_sigma(f, b, 0, c_visit, c_scale, solver, sigma)
    first = f.first_edge[b, 0]
    for k in range(f.num_edges[b, 0]):
        sigma[k] += gumbel[b, k] + math.log(max(f.edge_prior[b, first + k], _TINY_PRIOR))


@njit(cache=True)
def _best_with_visits(f, b, visits, scores):
    """Edge offset of the best-scoring root move with exactly ``visits`` visits, or -1."""
    first = f.first_edge[b, 0]
    best, best_score = -1, -np.inf
    for k in range(f.num_edges[b, 0]):
        if f.edge_visits[b, first + k] == visits and scores[k] > best_score:
            best, best_score = k, scores[k]
    return best


@njit(cache=True)
def _root_pick(f, b, gumbel, target_visits, c_visit, c_scale, solver, scratch):
    """Edge offset of the root move the next simulation goes to (sequential halving).

    Among moves with exactly ``target_visits`` visits the best score wins; if none has (more
    simulations than scheduled, or -1), the best among the least visited.
    """
    first = f.first_edge[b, 0]
    _root_scores(f, b, gumbel, c_visit, c_scale, solver, scratch)
    best = _best_with_visits(f, b, target_visits, scratch)
    if best >= 0:
        return best
    fewest = f.edge_visits[b, first]
    for k in range(f.num_edges[b, 0]):
        fewest = min(fewest, f.edge_visits[b, first + k])
    return _best_with_visits(f, b, fewest, scratch)


@njit(cache=True)
def select_child(f, b, node, roots, params, scratch):
    """Gumbel's choice at ``node``: sequential halving at the root, ``_interior_pick`` below."""
    if node != 0:
        return _interior_pick(f, b, node, params.c_visit, params.c_scale, params.solver, scratch)
    done = roots.simulations_done[b]
    schedule = roots.schedule
    target = schedule[roots.considered[b], done] if done < schedule.shape[1] else -1
    c_visit, c_scale, solver = params.c_visit, params.c_scale, params.solver
    return _root_pick(f, b, roots.gumbel, target, c_visit, c_scale, solver, scratch)


@njit(cache=True)
def _root_results(f, num_trees, gumbel, c_visit, c_scale, solver, policy, action):
    """Improved policy ``softmax(logits + sigma(completed q))`` and the move to play, per tree."""
    sigma = np.empty(policy.shape[1], np.float64)
    for b in range(num_trees):
        first, count = f.first_edge[b, 0], f.num_edges[b, 0]
        _root_scores(f, b, gumbel, c_visit, c_scale, solver, sigma)
        most = 0
        for k in range(count):
            most = max(most, f.edge_visits[b, first + k])
        best = _best_with_visits(f, b, most, sigma)  # the best score among the most visited
        action[b] = f.edge_action[b, first + best]
        improved_policy(f, b, 0, c_visit, c_scale, solver, sigma)
        policy[b] = 0.0
        for k in range(count):
            policy[b, f.edge_action[b, first + k]] = sigma[k]


@lru_cache(maxsize=8)
def _cached_schedule(max_considered: int, num_simulations: int) -> np.ndarray:
    return halving_schedule(max_considered, num_simulations)


def make_roots(
    f: Forest,
    n: int,
    num_actions: int,
    config: SearchConfig,
    add_noise: bool,
    num_simulations: int,
    rng: np.random.Generator,
) -> Roots:
    """Gumbel noise (when ``add_noise``), the number of root moves considered and the halving
    schedule."""
    gumbel = rng.gumbel(size=(n, num_actions)) if add_noise else np.zeros((n, num_actions))
    moves = np.maximum(f.num_edges[:n, 0], 1)
    considered = np.minimum(config.gumbel_num_considered, moves).astype(np.int64)
    schedule = _cached_schedule(config.gumbel_num_considered, num_simulations)
    no_prior = np.zeros((0, 0), np.float32)
    return Roots(no_prior, gumbel, considered, schedule, np.zeros(n, np.int64), np.zeros(n))


def choose(
    f: Forest,
    roots: Roots,
    visit_counts: np.ndarray,
    prior: np.ndarray,
    temperatures: np.ndarray,
    config: SearchConfig,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """The improved policy and the move the halving kept (no temperature, no randomness)."""
    n, num_actions = visit_counts.shape
    policy = np.zeros((n, num_actions), np.float32)
    action = np.zeros(n, np.int64)
    c_visit, c_scale = config.c_visit, config.c_scale
    _root_results(f, n, roots.gumbel, c_visit, c_scale, config.solver, policy, action)
    return policy, action


# Sequential halving needs fresh root counts, so a kept subtree would spoil the next move's search.
GUMBEL = Algorithm("gumbel", select_child, make_roots, choose, reuses_trees=False)
