"""Symmetry augmentation at sampling time: each sample gets one of the game's symmetries.

Planes, legal mask and policy target move together under the same symmetry, so an augmented
sample is itself a consistent position; the value target does not change (every symmetry, the
numerical n -> 10 - n included, keeps the outcome). Work is vectorised per symmetry (one array
operation per symmetry and batch: 8, or 16 for numerical tic-tac-toe), not per sample.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ultimate_rl.games.symmetry import Symmetry

if TYPE_CHECKING:
    from ultimate_rl.selfplay.replay import Batch


def apply_random_symmetries(
    batch: Batch, symmetries: Sequence[Symmetry], rng: np.random.Generator
) -> Batch:
    """A new batch where each sample is transformed by a uniformly chosen one of ``symmetries``."""
    if not symmetries:
        return batch
    choice = rng.integers(0, len(symmetries), size=len(batch.values))
    return apply_symmetries(batch, symmetries, choice)


def apply_symmetries(batch: Batch, symmetries: Sequence[Symmetry], choice: np.ndarray) -> Batch:
    """A new batch where sample ``i`` is transformed by ``symmetries[choice[i]]``."""
    planes = np.empty_like(batch.planes)
    masks = np.empty_like(batch.masks)
    policies = np.empty_like(batch.policies)
    for k, sym in enumerate(symmetries):
        rows = np.flatnonzero(choice == k)
        if rows.size:
            planes[rows] = sym.planes(batch.planes[rows])
            masks[rows] = sym.policy(batch.masks[rows])
            policies[rows] = sym.policy(batch.policies[rows])
    return batch._replace(planes=planes, masks=masks, policies=policies)
