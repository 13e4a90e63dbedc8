"""The 8 symmetries of a square board (the dihedral group), acting on planes and on actions.

One grid transform drives both, so the plane and action views cannot drift apart: a cell that the
transform moves from grid index ``i`` to ``j`` takes every action played on ``i`` to the action of
the same rank played on ``j`` (for numerical tic-tac-toe the rank is the number written).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Symmetry:
    """One board symmetry. ``action_perm[a]`` is where action ``a`` goes."""

    name: str
    rotations: int  # quarter turns, counter-clockwise as np.rot90
    flip: bool  # mirror left-right before rotating
    action_perm: np.ndarray

    def grid(self, array: np.ndarray) -> np.ndarray:
        """Transforms the last two (square) axes of ``array``: planes, or a board picture."""
        if self.flip:
            array = np.flip(array, axis=-1)
        return np.ascontiguousarray(np.rot90(array, self.rotations, axes=(-2, -1)))

    def planes(self, planes: np.ndarray) -> np.ndarray:
        return self.grid(planes)

    def policy(self, policy: np.ndarray) -> np.ndarray:
        """Moves the last axis (one entry per action) along with the board."""
        out = np.empty_like(policy)
        out[..., self.action_perm] = policy
        return out

    def actions(self, actions: np.ndarray | list[int]) -> np.ndarray:
        return self.action_perm[np.asarray(actions, dtype=np.int64)]


def board_symmetries(size: int, action_cells: np.ndarray) -> list[Symmetry]:
    """The 8 symmetries of a ``size`` x ``size`` grid.

    ``action_cells[a]`` is the grid index (row * size + col) of the cell action ``a`` plays on.
    """
    action_cells = np.asarray(action_cells, dtype=np.int64)
    num_actions = len(action_cells)
    # rank of each action among the actions on its cell, and (cell, rank) -> action
    rank = np.zeros(num_actions, dtype=np.int64)
    by_cell: dict[tuple[int, int], int] = {}
    seen = np.zeros(size * size, dtype=np.int64)
    for a, cell in enumerate(action_cells):
        rank[a] = seen[cell]
        seen[cell] += 1
        by_cell[(int(cell), int(rank[a]))] = a
    index = np.arange(size * size).reshape(size, size)
    out = []
    for flip in (False, True):
        for rotations in range(4):
            name = f"{'flip+' if flip else ''}rot{90 * rotations}"
            moved = Symmetry(name, rotations, flip, rank).grid(index).ravel()
            cell_perm = np.argsort(moved)  # moved[j] is the cell now at j; cell_perm its inverse
            perm = [
                by_cell[(int(cell_perm[c]), int(r))]
                for c, r in zip(action_cells, rank, strict=True)
            ]
            out.append(Symmetry(name, rotations, flip, np.array(perm, dtype=np.int64)))
    return out
