"""What a game tells the renderers about its board, so they draw any game without knowing which.

A board is a grid of ``rows x columns`` cells, indexed row-major from the top left; it may be cut
into square blocks (uttt's small boards) that the pictures box and tint. Each game reads its own
state into a ``BoardPicture``; the text, ``rgb_array``, TensorBoard, terminal and browser renderers
draw only from that and from ``Game.action_cell`` (where an action lands, which for Connect Four
depends on the position).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BoardShape:
    """The drawn grid: ``rows`` x ``cols`` cells, in ``block`` x ``block`` blocks if ``block``."""

    rows: int
    cols: int
    block: int = 0  # side of the boxed sub-boards (uttt: 3); 0: the grid has no blocks

    @property
    def cells(self) -> int:
        return self.rows * self.cols

    @property
    def blocks(self) -> int:
        """How many blocks the grid is cut into (0 without blocks)."""
        return (self.rows // self.block) * (self.cols // self.block) if self.block else 0

    def block_of(self, cell: int) -> int:
        """The block (row-major) holding grid cell ``cell``; the grid must have blocks."""
        row, col = divmod(cell, self.cols)
        return (row // self.block) * (self.cols // self.block) + col // self.block

    def block_cells(self, block: int) -> list[int]:
        """The grid cells of ``block``, row-major."""
        top, left = divmod(block, self.cols // self.block)
        return [
            (top * self.block + r) * self.cols + left * self.block + c
            for r in range(self.block)
            for c in range(self.block)
        ]


@dataclass(frozen=True)
class BoardPicture:
    """One position as its game sees it: what stands on every cell and what is won."""

    owners: list[int]  # per cell: -1 empty, else the player (0 or 1) whose piece stands there
    labels: list[str]  # per cell: "" empty, else what is written there ("X", "O", "7"...)
    blocks: list[str]  # per block: "" open, a mark name (won by that player) or "draw"
    winning_cells: list[int]  # the cells of the line(s) that won the game, sorted
    last_cell: int | None  # the cell the last move played on, None at the start


def lines(rows: int, cols: int, k: int) -> list[tuple[int, ...]]:
    """Every run of ``k`` cells across, down or diagonal on a ``rows`` x ``cols`` grid."""
    runs = []
    for row in range(rows):
        for col in range(cols):
            for d_row, d_col in ((0, 1), (1, 0), (1, 1), (1, -1)):
                end_row, end_col = row + d_row * (k - 1), col + d_col * (k - 1)
                if 0 <= end_row < rows and 0 <= end_col < cols:
                    runs.append(tuple((row + d_row * i) * cols + col + d_col * i for i in range(k)))
    return runs


def won_lines(owners: list[int], runs: list[tuple[int, ...]]) -> list[int]:
    """The sorted cells of every run whose cells one player holds all of."""
    won: set[int] = set()
    for run in runs:
        first = owners[run[0]]
        if first >= 0 and all(owners[c] == first for c in run):
            won.update(run)
    return sorted(won)
