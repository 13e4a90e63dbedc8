"""What a batched search algorithm provides (the shape of mctx's policies): root preparation,
child selection and the output at the root. ``core.py`` runs the shared simulate / expand /
backup loop around them, so ``BatchedSearch`` never asks which algorithm it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ultimate_rl.search.config import SearchConfig
from ultimate_rl.search.tree import Forest


class Roots(NamedTuple):
    """Per-move root data that child selection reads, row ``b`` for tree ``b``.

    One record type serves every algorithm so the simulate kernel compiles once; an algorithm
    leaves the fields it does not read empty.
    """

    prior: np.ndarray  # [n, A] float32 by edge offset: PUCT's root prior, noise mixed in
    gumbel: np.ndarray  # [n, A] float64 by edge offset: Gumbel noise (zeros without noise)
    considered: np.ndarray  # [n] int64: how many root moves Gumbel's halving starts with
    schedule: np.ndarray  # [m + 1, S] int32: Gumbel's visits per considered count and simulation
    simulations_done: np.ndarray  # [n] int64, advanced by the simulate kernel
    draw_value: np.ndarray  # [n] float64: a draw's value, first player's view (0 without contempt)


MakeRoots = Callable[[Forest, int, int, SearchConfig, bool, int, np.random.Generator], Roots]
"""``make_roots(forest, n, num_actions, config, add_noise, num_simulations, rng)``, called once
the n roots are expanded; it draws the algorithm's root noise."""

Choose = Callable[
    [Forest, Roots, np.ndarray, np.ndarray, np.ndarray, SearchConfig, np.random.Generator],
    tuple[np.ndarray, np.ndarray],
]
"""``choose(forest, roots, visit_counts, prior, temperatures, config, rng) -> (policy_target
[n, A] float32, action [n] int64)`` once the simulations are done; ``visit_counts`` and the
network's root ``prior`` (no noise) by action."""


Settled = Callable[[Forest, int, np.ndarray], np.ndarray]
"""``settled(forest, n, remaining) -> [n] bool``: whether tree b's move can no longer change in
``remaining[b]`` more simulations (the search may stop early there)."""


class Algorithm(NamedTuple):
    """One search algorithm. ``select_child`` is a numba kernel
    ``(forest, b, node, roots, params, scratch) -> edge offset`` that the core reaches through
    its registry (a cached numba kernel cannot take a function argument)."""

    name: str
    select_child: Callable[..., int]
    make_roots: MakeRoots
    choose: Choose
    reuses_trees: bool  # whether a kept subtree's statistics stay valid for the next move
    settled: Settled | None = None  # None: the algorithm cannot tell, so it never stops early
