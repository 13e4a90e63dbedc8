"""Search settings: ``SearchConfig`` for users and configs, ``SearchParams`` for the kernels."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np

ALGORITHMS = ("puct", "gumbel")
"""The batched search algorithms, each the module ``search/NAME.py`` (``core.REGISTRY`` derives
from this list); ``SearchParams.algorithm`` is an index into it."""


ROLLOUT_POLICIES = ("random", "guided")
"""How the search's playouts choose moves (``SearchConfig.rollout_policy``)."""


class SearchError(ValueError):
    """Bad search input or a misbehaving evaluator."""


@dataclass(frozen=True)
class SearchConfig:
    """Settings of ``BatchedSearch``. The defaults are AlphaZero's (and mctx's for Gumbel);
    each field's docstring says what it does (``docs/reference/config.md`` lists them)."""

    algorithm: str = "puct"
    """``puct`` (AlphaZero) or ``gumbel`` (Gumbel root search, whose policy target improves on
    the prior even with few simulations)."""
    num_simulations: int = 200
    """Simulations per move (self-play's full searches; its cheap ones take
    ``selfplay.playout_cap.fast_simulations``). More: stronger targets, fewer games per
    minute."""
    c_puct: float = 1.25
    """PUCT exploration: ``c = c_puct + log((N + c_puct_base + 1) / c_puct_base)`` weighs the
    prior against the values found; larger explores more."""
    c_puct_base: float = 19652.0
    """PUCT: the visit count ``N`` at which exploration starts to grow (see ``c_puct``)."""
    fpu_reduction: float = 0.25
    """PUCT first-play urgency: an unvisited move below the root is valued at its node's
    network value minus this; larger searches deeper, smaller wider."""
    root_fpu_reduction: float = 0.0
    """PUCT: the same at the root; 0 keeps the root's search wide."""
    dirichlet_alpha: float = 0.3
    """PUCT root noise (self-play's full searches): Dirichlet concentration; larger spreads
    the noise over more moves."""
    dirichlet_fraction: float = 0.25
    """PUCT root noise: the share of noise mixed into the root priors (0: none)."""
    temperature: float = 1.0
    """PUCT's move choice when the caller gives none: sampled by ``visits ** (1 / T)`` (0: the
    most visited move). Training passes its own (``selfplay.temperature``, 0 in evaluations),
    so it has no effect there."""
    tree_reuse: bool = True
    """Keep the subtree of the move played for the next search (PUCT only: Gumbel's
    sequential halving needs fresh root counts, so it always starts a new tree)."""
    leaves_per_tree: int = 1
    """Leaves each tree collects per network call: more, larger batches for fewer games at
    once, at some cost in search quality."""
    solver: bool = False
    """MCTS-Solver: results of finished games found in the tree climb it as proofs (a move
    that wins by force, a position lost whatever is played), a proven position is no longer
    searched, and a proven loss is never played while another move is open
    (``search/solver.py``)."""
    rollouts: int = 0
    """Playouts run from each new leaf (the game's ``random_playout`` kernel, a few microseconds
    each), their mean result mixed into the network's value by ``rollout_weight``: AlphaGo's
    mixed leaf value, which corrects the network where a tactic decides and a playout to the
    end sees it. 0: the network's value alone (the search as it was)."""
    rollout_weight: float = 0.5
    """With ``rollouts``: lambda in ``(1 - lambda) * v_network + lambda * mean(playouts)``, the
    value a new leaf backs up (1: the playouts alone). Finished games and proofs keep their
    exact value."""
    rollout_policy: str = "random"
    """With ``rollouts``: ``random`` (uniform moves, the game's ``random_playout``) or
    ``guided`` (the game's own playout policy, ``guided_playout``, where it has one: for uttt
    wins taken and free choices of board not given away; other games play random ones)."""
    contempt: float = 0.0
    """How much the searching side dislikes a draw: a draw counts ``-contempt`` for the side the
    search plays for (the player to move unless the caller names it: ``BatchedSearch.search``'s
    ``side``) and ``+contempt`` for the other, so against a weaker opponent it keeps the game
    open rather than settle (Leela's contempt). Finished draws count so, and positions that the
    game proves drawn before the end (its ``dead_draw`` kernel: for uttt, no big-board line left
    to either player) end the descent as draws. 0: a draw is worth 0 and the search is as it
    was. For a player of one side (agents); self-play searches both sides in one tree."""
    virtual_loss: float = 1.0
    """With ``leaves_per_tree > 1``: the loss a pending leaf's path counts, so the other
    descents of that call go elsewhere."""
    gumbel_num_considered: int = 16
    """Gumbel: the root moves sampled (``m``, Gumbel-top-k) and then halved phase by phase."""
    c_visit: float = 50.0
    """Gumbel: ``sigma(q) = (c_visit + max N) * c_scale * q`` turns the completed values
    (rescaled to [0, 1]) into logit bonuses, weighted from ``c_visit * c_scale`` up as the
    visits grow."""
    c_scale: float = 0.1
    """Gumbel: the scale in ``sigma(q)`` (see ``c_visit``); larger trusts the values more than
    the prior."""

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
        if isinstance(self.rollouts, bool) or not isinstance(self.rollouts, int | np.integer):
            raise SearchError(
                f"rollouts must be an int (playouts per new leaf), got {self.rollouts!r}"
            )
        if self.rollouts < 0:
            raise SearchError(f"rollouts must be >= 0 (0: no playouts), got {self.rollouts}")
        if self.rollout_policy not in ROLLOUT_POLICIES:
            raise SearchError(
                f"rollout_policy must be one of {ROLLOUT_POLICIES}, got {self.rollout_policy!r}"
            )
        if not 0 <= self.rollout_weight <= 1:
            raise SearchError(
                f"rollout_weight must be in [0, 1] (the playouts' share of a leaf's value), "
                f"got {self.rollout_weight!r}"
            )
        if not (math.isfinite(self.contempt) and 0 <= self.contempt < 1):
            raise SearchError(
                f"contempt must be in [0, 1) (how much worse than 0 a draw counts for the "
                f"searching side; 0: none), got {self.contempt!r}"
            )
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
    solver: bool
    rollouts: int  # playouts per new leaf (0: none)
    rollout_weight: float  # their share of the leaf's value
    guided_rollouts: bool  # the game's guided playout policy instead of random moves
    dead_draws: bool  # with contempt: positions the game proves drawn end descents as draws

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
            solver=bool(config.solver),
            rollouts=int(config.rollouts),
            rollout_weight=float(config.rollout_weight),
            guided_rollouts=config.rollout_policy == "guided",
            dead_draws=config.contempt > 0,
        )


def check_count(name: str, value: object) -> None:
    """Raises unless ``value`` is a positive int (bools are refused)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise SearchError(f"{name} must be an int, got {value!r}")
    if value <= 0:
        raise SearchError(f"{name} must be positive, got {value}")
