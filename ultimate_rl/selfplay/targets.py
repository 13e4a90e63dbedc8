"""The training targets a position carries, declared once.

Self-play produces each target as a ``SelfPlayData`` array of the same name, the replay buffer
stores one ring array per target (and saves it under that name in checkpoints), a sampled
``Batch`` carries them in ``targets``, augmentation permutes those that move with a board
symmetry, and the losses (``ultimate_rl.nn.losses``) read them by name. ``TARGETS`` are always
stored; an ``OPTIONAL_TARGETS`` entry only when a recipe option reads it (``train.learner``), so
a run without it keeps its replay buffer and checkpoints as they were. ``search_targets`` is the
one place that says what each target is made of, for self-play's games and the warm start's
labels alike; everything else (arrays, names, stacking) follows ``ALL_TARGETS``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Target:
    """One per-position training target.

    ``per_action``: one entry per action (shape ``[A]``), else one per position. ``symmetric``:
    it moves with a board symmetry (permuted like the policy and the legal mask); a target that
    does not (a game result) stays as it is.
    """

    name: str
    dtype: type
    per_action: bool = False
    symmetric: bool = False

    def __post_init__(self) -> None:
        if self.symmetric and not self.per_action:
            raise ValueError(f"target {self.name!r}: only per-action targets move with symmetries")

    def shape(self, num_actions: int) -> tuple[int, ...]:
        """The shape of one position's entry."""
        return (num_actions,) if self.per_action else ()

    def zeros(self, n: int, num_actions: int) -> np.ndarray:
        """``n`` entries of zeros: a buffer to fill, or the target of no positions."""
        return np.zeros((n, *self.shape(num_actions)), self.dtype)


TARGETS: tuple[Target, ...] = (
    Target("policies", np.float32, per_action=True, symmetric=True),  # search policy, sums to 1
    Target("values", np.float32),  # final result in [-1, 1], mover's view
    Target("full_search", np.bool_),  # the policy target came from a full search
)

OPTIONAL_TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target("root_values", np.float32),  # the search's root value, mover's view
        # the next position's policy target (the opponent's reply); all zeros where none
        Target("opponent_policies", np.float32, per_action=True, symmetric=True),
    )
}

ALL_TARGETS: tuple[Target, ...] = (*TARGETS, *OPTIONAL_TARGETS.values())
"""Every target self-play records per position (the replay buffer keeps a selection)."""


def search_targets(
    policies: np.ndarray,
    values: np.ndarray,
    root_values: np.ndarray,
    full_search: np.ndarray,
    replies: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """``ALL_TARGETS`` of ``n`` searched positions by name, each ``[n, ...]`` of its dtype.

    ``policies``: the searches' policy targets; ``values``: the value targets (the game's
    result), ``root_values``: the searches' root values, both mover's view; ``full_search``:
    whether a full search gave the policy; ``replies``: the next position's policy target where
    it is one (``None``: no reply, all zeros).
    """
    made = {
        "policies": policies,
        "values": values,
        "full_search": full_search,
        "root_values": root_values,
        "opponent_policies": np.zeros_like(policies) if replies is None else replies,
    }
    return {t.name: np.asarray(made[t.name], t.dtype) for t in ALL_TARGETS}
