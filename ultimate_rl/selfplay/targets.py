"""The training targets a position carries, declared once.

Self-play produces each target as a ``SelfPlayData`` array of the same name, the replay buffer
stores one ring array per target (and saves it under that name in checkpoints), a sampled
``Batch`` carries them in ``targets``, augmentation permutes those that move with a board
symmetry, and the losses (``ultimate_rl.nn.losses``) read them by name. ``TARGETS`` are always
stored; an ``OPTIONAL_TARGETS`` entry only when a recipe option reads it (``train.learner``), so
a run without it keeps its replay buffer and checkpoints as they were.
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
