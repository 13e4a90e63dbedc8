"""Game symmetries acting on planes and on actions: any subgroup of a board's turns and mirrors
(the 8 of a square board, Connect Four's single left-right mirror, or none), optionally composed
with a relabelling of the pieces (numerical tic-tac-toe's n -> 10 - n).

One grid transform drives both views, so they cannot drift apart: a cell that the transform moves
from grid index ``i`` to ``j`` takes every action played on ``i`` to the action of the same rank
played on ``j`` (for numerical tic-tac-toe the rank is the number written). A relabelling keeps
every cell in place and renames what stands on it, so it moves plane channels and actions together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DIHEDRAL = tuple((rotations, flip) for flip in (False, True) for rotations in range(4))
"""The 8 transforms of a square grid, as ``(quarter turns, mirrored first)``, the identity first."""
MIRROR = ((0, False), (0, True))
"""The identity and the left-right mirror: the symmetries of a board with gravity."""


@dataclass(frozen=True)
class Symmetry:
    """One symmetry: a board transform, then an optional relabelling of the plane channels.

    ``action_perm[a]`` is where action ``a`` goes; ``channel_perm[c]`` is where plane ``c`` goes
    (``None``: every plane keeps its channel, as for a pure board symmetry).
    """

    name: str
    rotations: int  # quarter turns, counter-clockwise as np.rot90
    flip: bool  # mirror left-right before rotating
    action_perm: np.ndarray
    channel_perm: np.ndarray | None = None

    def grid(self, array: np.ndarray) -> np.ndarray:
        """Transforms the last two axes of ``array`` (planes, or a board picture); an odd number
        of quarter turns needs a square grid."""
        if self.flip:
            array = np.flip(array, axis=-1)
        return np.ascontiguousarray(np.rot90(array, self.rotations, axes=(-2, -1)))

    def planes(self, planes: np.ndarray) -> np.ndarray:
        """Transforms ``(..., channels, rows, cols)`` planes: the grid, then the channel order."""
        moved = self.grid(planes)
        if self.channel_perm is None:
            return moved
        out = np.empty_like(moved)
        out[..., self.channel_perm, :, :] = moved
        return out

    def policy(self, policy: np.ndarray) -> np.ndarray:
        """Moves the last axis (one entry per action) along with the board."""
        out = np.empty_like(policy)
        out[..., self.action_perm] = policy
        return out

    def actions(self, actions: np.ndarray | list[int]) -> np.ndarray:
        return self.action_perm[np.asarray(actions, dtype=np.int64)]


def board_symmetries(
    rows: int,
    action_cells: np.ndarray,
    cols: int | None = None,
    transforms: Sequence[tuple[int, bool]] = DIHEDRAL,
) -> list[Symmetry]:
    """The symmetries ``transforms`` of a ``rows`` x ``cols`` grid (square by default), in order.

    ``action_cells[a]`` is the grid index (row * cols + col) of the cell action ``a`` plays on;
    ``transforms`` lists ``(quarter turns, mirrored first)`` pairs, the identity first.
    """
    cols = rows if cols is None else cols
    if rows != cols and any(turns % 2 for turns, _ in transforms):
        raise ValueError(f"a {rows}x{cols} grid has no quarter-turn symmetry; use MIRROR or none")
    action_cells = np.asarray(action_cells, dtype=np.int64)
    num_actions = len(action_cells)
    # rank of each action among the actions on its cell, and (cell, rank) -> action
    rank = np.zeros(num_actions, dtype=np.int64)
    by_cell: dict[tuple[int, int], int] = {}
    seen = np.zeros(rows * cols, dtype=np.int64)
    for a, cell in enumerate(action_cells):
        rank[a] = seen[cell]
        seen[cell] += 1
        by_cell[(int(cell), int(rank[a]))] = a
    index = np.arange(rows * cols).reshape(rows, cols)
    out = []
    for rotations, flip in transforms:
        name = f"{'flip+' if flip else ''}rot{90 * rotations}"
        moved = Symmetry(name, rotations, flip, rank).grid(index).ravel()
        cell_perm = np.argsort(moved)  # moved[j] is the cell now at j; cell_perm its inverse
        perm = [
            by_cell[(int(cell_perm[c]), int(r))] for c, r in zip(action_cells, rank, strict=True)
        ]
        out.append(Symmetry(name, rotations, flip, np.array(perm, dtype=np.int64)))
    return out


def with_relabelling(
    symmetries: list[Symmetry],
    name: str,
    action_perm: np.ndarray | list[int],
    channel_perm: np.ndarray | list[int],
) -> list[Symmetry]:
    """``symmetries``, then each of them followed by one relabelling of the pieces.

    The relabelling sends action ``a`` to ``action_perm[a]`` and plane ``c`` to
    ``channel_perm[c]`` without moving any cell; it must itself be a symmetry of the game (the
    game's tests check that every result commutes with play). The result keeps the order of
    ``symmetries``, so an identity first stays first.
    """
    if not symmetries:
        raise ValueError("with_relabelling needs at least one symmetry to compose with")
    actions = _permutation(action_perm, len(symmetries[0].action_perm), "action_perm")
    channels = _permutation(channel_perm, len(channel_perm), "channel_perm")
    relabelled = [
        Symmetry(
            f"{sym.name}+{name}",
            sym.rotations,
            sym.flip,
            actions[sym.action_perm],
            channels if sym.channel_perm is None else channels[sym.channel_perm],
        )
        for sym in symmetries
    ]
    return [*symmetries, *relabelled]


def _permutation(values: np.ndarray | list[int], size: int, what: str) -> np.ndarray:
    """``values`` as an int64 array, checked to be a permutation of ``0..size-1``."""
    perm = np.asarray(values, dtype=np.int64)
    if perm.shape != (size,) or not np.array_equal(np.sort(perm), np.arange(size)):
        raise ValueError(
            f"{what} must hold each of 0..{size - 1} exactly once (where each one goes); "
            f"got shape {perm.shape} with values {perm.tolist()}"
        )
    return perm
