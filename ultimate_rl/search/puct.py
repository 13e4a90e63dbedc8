"""AlphaZero's PUCT: child selection by ``Q + c * P * sqrt(N) / (1 + n)``, Dirichlet noise on the
root prior, and a move sampled by ``visits ** (1 / temperature)``; the policy target is the
root's visit frequencies."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ultimate_rl.search.algorithm import Algorithm, Roots
from ultimate_rl.search.config import SearchConfig
from ultimate_rl.search.solver import exact_result
from ultimate_rl.search.tree import UNPROVEN, Forest, greedy_score


@njit(cache=True)
def _best_edge(f, b, node, priors, c_puct, c_base, fpu_reduction, solver):
    """Edge offset maximising ``Q + c * P * sqrt(N) / (1 + n)``; ``priors`` by edge offset. With
    the ``solver``, a proven move's Q is its exact result and a proven loss is passed over."""
    first = f.first_edge[b, node]
    n_parent = f.visits[b, node]
    c = c_puct + math.log((n_parent + c_base + 1.0) / c_base)
    u_scale = c * math.sqrt(n_parent)
    fpu = f.raw_value[b, node] - fpu_reduction
    best, best_score = 0, -np.inf
    for k in range(f.num_edges[b, node]):
        n = f.edge_visits[b, first + k]
        q = f.edge_value_sum[b, first + k] / n if n > 0 else fpu
        if solver and n > 0:  # a tried move: its child exists, maybe proven
            exact = exact_result(f, b, node, first + k)
            if exact == -1:
                continue
            if exact != UNPROVEN:
                q = exact
        score = q + u_scale * priors[k] / (1.0 + n)
        if score > best_score:
            best, best_score = k, score
    return best


@njit(cache=True)
def select_child(f, b, node, roots, params, scratch):
    """PUCT's choice at ``node``; the root uses the (noisy) root prior and its own FPU."""
    if node == 0:
        priors, fpu = roots.prior[b], params.root_fpu_reduction
    else:
        priors, fpu = f.edge_prior[b, f.first_edge[b, node] :], params.fpu_reduction
    c_puct, c_base, solver = params.c_puct, params.c_puct_base, params.solver
    return _best_edge(f, b, node, priors, c_puct, c_base, fpu, solver)


@njit(cache=True)
def _root_priors(f, num_trees, out):
    """The network's root priors by edge offset (``out[b, k]`` for the k-th root move)."""
    for b in range(num_trees):
        first = f.first_edge[b, 0]
        out[b] = 0.0
        for k in range(f.num_edges[b, 0]):
            out[b, k] = f.edge_prior[b, first + k]


def make_roots(
    f: Forest,
    n: int,
    num_actions: int,
    config: SearchConfig,
    add_noise: bool,
    num_simulations: int,
    rng: np.random.Generator,
) -> Roots:
    """The root priors, mixed with Dirichlet noise when ``add_noise``."""
    prior = np.zeros((n, num_actions), np.float32)
    _root_priors(f, n, prior)
    if add_noise and config.dirichlet_fraction > 0:
        prior = _with_dirichlet_noise(f, prior, config, rng)
    unused = np.zeros(0, np.int64)
    no_schedule = np.zeros((0, 0), np.int32)
    return Roots(prior, np.zeros((0, 0)), unused, no_schedule, np.zeros(n, np.int64), np.zeros(n))


def _with_dirichlet_noise(
    f: Forest, prior: np.ndarray, config: SearchConfig, rng: np.random.Generator
) -> np.ndarray:
    """Root priors mixed with Dirichlet(alpha) noise over each root's legal moves."""
    moves = f.num_edges[: len(prior), 0]
    legal = np.arange(prior.shape[1])[None, :] < moves[:, None]
    noise = rng.gamma(config.dirichlet_alpha, size=prior.shape) * legal
    noise /= np.maximum(noise.sum(axis=1, keepdims=True), 1e-30)
    mixed = (1 - config.dirichlet_fraction) * prior + config.dirichlet_fraction * noise
    return mixed.astype(np.float32)


def choose(
    f: Forest,
    roots: Roots,
    visit_counts: np.ndarray,
    prior: np.ndarray,
    temperatures: np.ndarray,
    config: SearchConfig,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Visit frequencies as the policy target; the move sampled with probability proportional to
    ``visits ** (1 / T)``, T = 0 playing the top move of ``greedy_score`` (exact ties of visits
    and prior broken at random)."""
    policy = (visit_counts / visit_counts.sum(axis=1, keepdims=True)).astype(np.float32)
    relative = visit_counts / visit_counts.max(axis=1, keepdims=True)
    score = greedy_score(visit_counts, prior)
    greedy = temperatures <= 0
    exponent = 1.0 / np.where(greedy, 1.0, temperatures)[:, None]
    top = score == score.max(axis=1, keepdims=True)
    weights = np.where(greedy[:, None], top, relative**exponent)
    cumulative = np.cumsum(weights, axis=1)
    draws = rng.random(len(weights)) * cumulative[:, -1]
    return policy, (cumulative <= draws[:, None]).sum(axis=1).astype(np.int64)


@njit(cache=True)
def _root_lead(f, num_trees, out):
    """The most visited root move's lead in visits over the runner-up, per tree."""
    for b in range(num_trees):
        first, best, second = f.first_edge[b, 0], 0, 0
        for e in range(first, first + f.num_edges[b, 0]):
            n = f.edge_visits[b, e]
            if n > best:
                best, second = n, best
            elif n > second:
                second = n
        out[b] = best - second


def settled(f: Forest, n: int, remaining: np.ndarray) -> np.ndarray:
    """The greedy move (the most visited) cannot change once its lead exceeds the simulations
    left: every one of them going to the runner-up would not catch up."""
    lead = np.zeros(n, np.int64)
    _root_lead(f, n, lead)
    return lead > remaining


PUCT = Algorithm("puct", select_child, make_roots, choose, reuses_trees=True, settled=settled)
