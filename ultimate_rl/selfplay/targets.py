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

from ultimate_rl.games.base import Game
from ultimate_rl.games.ownership import UNKNOWN


@dataclass(frozen=True)
class Target:
    """One per-position training target.

    ``per_action``: one entry per action (shape ``[A]``); ``per_cell``: one per entry of the
    game's ownership planes (``Game.ownership_grids``, shape ``[K]``); else one per position.
    ``symmetric``: it moves with a board symmetry (a per-action target like the policy and the
    legal mask, a per-cell one plane by plane); a target that does not (a game result) stays as
    it is.
    """

    name: str
    dtype: type
    per_action: bool = False
    symmetric: bool = False
    per_cell: bool = False

    def __post_init__(self) -> None:
        if self.symmetric and not (self.per_action or self.per_cell):
            raise ValueError(
                f"target {self.name!r}: only board-shaped targets move with symmetries"
            )

    def shape(self, game: Game) -> tuple[int, ...]:
        """The shape of one position's entry in ``game``."""
        if self.per_cell:
            return (sum(grid.size for grid in game.ownership_grids),)
        return (game.num_actions,) if self.per_action else ()

    def zeros(self, n: int, game: Game) -> np.ndarray:
        """``n`` entries of zeros: a buffer to fill, or the target of no positions."""
        return np.zeros((n, *self.shape(game)), self.dtype)


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
        # each ownership entry's class at the game's end, mover's view (games.ownership)
        Target("ownership", np.int8, symmetric=True, per_cell=True),
    )
}

ALL_TARGETS: tuple[Target, ...] = (*TARGETS, *OPTIONAL_TARGETS.values())
"""Every target self-play records per position (the replay buffer keeps a selection)."""


def unplayed_ownership(game: Game, n: int) -> np.ndarray:
    """The ownership target of ``n`` positions whose game was not played out (a warm start's
    labels): every entry ``UNKNOWN``, which the loss skips."""
    return np.full((n, *OPTIONAL_TARGETS["ownership"].shape(game)), UNKNOWN, np.int8)


def search_targets(
    policies: np.ndarray,
    values: np.ndarray,
    root_values: np.ndarray,
    full_search: np.ndarray,
    ownership: np.ndarray,
    replies: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """``ALL_TARGETS`` of ``n`` searched positions by name, each ``[n, ...]`` of its dtype.

    ``policies``: the searches' policy targets; ``values``: the value targets (the game's
    result), ``root_values``: the searches' root values, both mover's view; ``full_search``:
    whether a full search gave the policy; ``ownership``: each position's ownership target
    (``games.ownership``; ``UNKNOWN`` entries where the game was not played out); ``replies``:
    the next position's policy target where it is one (``None``: no reply, all zeros).
    """
    made = {
        "policies": policies,
        "values": values,
        "full_search": full_search,
        "root_values": root_values,
        "ownership": ownership,
        "opponent_policies": np.zeros_like(policies) if replies is None else replies,
    }
    return {t.name: np.asarray(made[t.name], t.dtype) for t in ALL_TARGETS}
