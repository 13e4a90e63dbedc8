"""The ownership target: who holds each cell, and how each block ended, when the game was over.

A game declares the planes its ownership head predicts in its own file (``Game.ownership``:
``CELLS`` for a board of cells, ``CELLS`` and ``BLOCKS`` for uttt's small boards; none: the game
has no ownership target). Each plane is a grid over the game's ``board_shape`` (its cells, or its
blocks), read from the game's own ``picture`` of the final position, so no game decodes its state
twice. An entry is a class: 0 the first player's, 1 the second player's, then the plane's neutral
classes; ``movers_view`` makes 0 the mover's and 1 the opponent's, like the value target. The
planes of a game lie one after another in one flat vector (row-major each), which a board
symmetry moves plane by plane (``transformed``), as it moves the input planes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ultimate_rl.games.board import BoardPicture, BoardShape
from ultimate_rl.games.symmetry import Symmetry

UNKNOWN = -1
"""An entry with no target (a position whose game was not played out: a warm-start label)."""


@dataclass(frozen=True)
class OwnershipPlane:
    """One kind of ownership plane: its class names (mover's view; the first two are the
    players'), its grid on a board, and how a picture gives each entry's class (first player's
    view: 0 the first player, 1 the second)."""

    name: str
    classes: tuple[str, ...]
    grid: Callable[[BoardShape], tuple[int, int]]
    read: Callable[[BoardPicture, tuple[str, str]], list[int]]


# named functions, not lambdas: a plane pickles by reference (games travel to worker processes)
def _cell_grid(shape: BoardShape) -> tuple[int, int]:
    return shape.rows, shape.cols


def _cell_classes(picture: BoardPicture, marks: tuple[str, str]) -> list[int]:
    return [2 if owner < 0 else owner for owner in picture.owners]


def _block_grid(shape: BoardShape) -> tuple[int, int]:
    return shape.rows // shape.block, shape.cols // shape.block


def _block_classes(picture: BoardPicture, marks: tuple[str, str]) -> list[int]:
    return [marks.index(b) if b in marks else 2 if b == "draw" else 3 for b in picture.blocks]


CELLS = OwnershipPlane("cells", ("mover", "opponent", "empty"), _cell_grid, _cell_classes)
"""Every cell's owner: whose piece stands on it at the end, or empty."""
BLOCKS = OwnershipPlane(
    "blocks", ("mover", "opponent", "drawn", "open"), _block_grid, _block_classes
)
"""Every block's result (uttt's small boards): won by either player, drawn, or still open."""


@dataclass(frozen=True)
class OwnershipGrid:
    """A plane laid on one game's board: ``rows`` x ``cols`` entries."""

    plane: OwnershipPlane
    rows: int
    cols: int

    @property
    def size(self) -> int:
        return self.rows * self.cols

    @property
    def classes(self) -> int:
        return len(self.plane.classes)


def ownership_grids(planes: Sequence[OwnershipPlane], shape: BoardShape) -> tuple[OwnershipGrid]:
    """``planes`` on a board of ``shape``, in order."""
    return tuple(OwnershipGrid(plane, *plane.grid(shape)) for plane in planes)


def read_ownership(
    grids: Sequence[OwnershipGrid], picture: BoardPicture, marks: tuple[str, str]
) -> np.ndarray:
    """The flat int8 vector of ``grids``' classes in ``picture`` (first player's view)."""
    values = [c for grid in grids for c in grid.plane.read(picture, marks)]
    return np.asarray(values, np.int8).reshape(sum(grid.size for grid in grids))


def movers_view(ownership: np.ndarray, players: np.ndarray) -> np.ndarray:
    """``[n, K]`` targets from one final ownership ``[K]`` (first player's view): row ``i`` with
    the two players' classes swapped where ``players[i]`` (the mover) is the second player."""
    swapped = np.where(ownership == 0, 1, np.where(ownership == 1, 0, ownership))
    second = np.asarray(players)[:, None] == 1
    return np.where(second, swapped, ownership).astype(np.int8)


def transformed(symmetry: Symmetry, ownership: np.ndarray, grids: Sequence[OwnershipGrid]):
    """``ownership`` ``[..., K]`` moved by ``symmetry``'s board transform, plane by plane (a
    relabelling keeps every cell's owner: numerical tic-tac-toe's n -> 10 - n keeps parity)."""
    out = np.empty_like(ownership)
    start = 0
    for grid in grids:
        part = ownership[..., start : start + grid.size]
        moved = symmetry.grid(part.reshape(*part.shape[:-1], grid.rows, grid.cols))
        out[..., start : start + grid.size] = moved.reshape(part.shape)
        start += grid.size
    return out
