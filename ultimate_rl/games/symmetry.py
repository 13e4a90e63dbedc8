"""Game symmetries acting on planes and on actions: the 8 of a square board (the dihedral group),
optionally composed with a relabelling of the pieces (numerical tic-tac-toe's n -> 10 - n).

One grid transform drives both views, so they cannot drift apart: a cell that the transform moves
from grid index ``i`` to ``j`` takes every action played on ``i`` to the action of the same rank
played on ``j`` (for numerical tic-tac-toe the rank is the number written). A relabelling keeps
every cell in place and renames what stands on it, so it moves plane channels and actions together.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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
        """Transforms the last two (square) axes of ``array``: planes, or a board picture."""
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


def board_symmetries(size: int, action_cells: np.ndarray) -> list[Symmetry]:
    """The 8 symmetries of a ``size`` x ``size`` grid, the identity first.

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
