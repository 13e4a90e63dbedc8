"""Search settings: ``SearchConfig`` for users and configs, ``SearchParams`` for the kernels."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np

ALGORITHMS = ("puct", "gumbel")
"""Names of the batched search algorithms; ``SearchParams.algorithm`` is an index into this."""


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
        check_count("num_simulations", self.num_simulations)
        check_count("leaves_per_tree", self.leaves_per_tree)
        check_count("gumbel_num_considered", self.gumbel_num_considered)
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


class SearchParams(NamedTuple):
    """The settings the search kernels read, as one typed record (numba compiles a namedtuple's
    fields by name, so no kernel depends on an argument's position)."""

    algorithm: int  # index into ALGORITHMS
    c_puct: float
    c_puct_base: float
    fpu_reduction: float
    root_fpu_reduction: float
    virtual_loss: float  # 0 with one leaf per tree: no other descent can collide with it
    leaves_per_tree: int
    c_visit: float
    c_scale: float

    @classmethod
    def from_config(cls, config: SearchConfig) -> SearchParams:
        return cls(
            algorithm=ALGORITHMS.index(config.algorithm),
            c_puct=float(config.c_puct),
            c_puct_base=float(config.c_puct_base),
            fpu_reduction=float(config.fpu_reduction),
            root_fpu_reduction=float(config.root_fpu_reduction),
            virtual_loss=float(config.virtual_loss) if config.leaves_per_tree > 1 else 0.0,
            leaves_per_tree=int(config.leaves_per_tree),
            c_visit=float(config.c_visit),
            c_scale=float(config.c_scale),
        )


def check_count(name: str, value: object) -> None:
    """Raises unless ``value`` is a positive int (bools are refused)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise SearchError(f"{name} must be an int, got {value!r}")
    if value <= 0:
        raise SearchError(f"{name} must be positive, got {value}")
