"""RGB pictures of a board drawn with numpy alone (no pygame), for ``render_mode="rgb_array"``.

The picture is rebuilt from the moves played, read through the contract action encodings of
DESIGN.md, so it relies on nothing but the public game API: players alternate, the first player
(X, odd numbers) moves first. Sides are even so video encoders (RecordVideo) accept the frames.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ultimate_rl.games.base import Game

BACKGROUND = (245, 244, 238)
LINE = (60, 60, 60)
PLAYER_COLOURS = ((200, 50, 50), (40, 90, 200))  # X / odd numbers, O / even numbers
WON_TINTS = ((246, 200, 200), (200, 214, 246))  # small boards won by X / by O (uttt)
DRAWN_TINT = (212, 212, 212)  # small boards closed without a winner (uttt)
LEGAL_TINT = (255, 238, 160)  # cells where the player to move may play
MARGIN = 8

# 3 wide x 5 high bitmaps of the digits 1..9 (numerical tic-tac-toe).
DIGITS = {
    1: ("010", "110", "010", "010", "111"),
    2: ("111", "001", "111", "100", "111"),
    3: ("111", "001", "111", "001", "111"),
    4: ("101", "101", "111", "001", "001"),
    5: ("111", "100", "111", "001", "111"),
    6: ("111", "100", "111", "101", "111"),
    7: ("111", "001", "010", "010", "010"),
    8: ("111", "101", "111", "101", "111"),
    9: ("111", "101", "111", "001", "111"),
}

LINES_3X3 = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def grid_side(game: Game) -> int:
    """Cells along one side of the picture's grid."""
    if game.name == "uttt":
        return 9
    if game.name == "numerical_ttt":
        return 3
    return round(game.num_actions**0.5)


def action_cell(game: Game, action: int) -> tuple[int, int]:
    """(row, column) of the grid cell an action writes to (the contract encodings)."""
    if game.name == "uttt":
        board, cell = divmod(action, 9)
        return 3 * (board // 3) + cell // 3, 3 * (board % 3) + cell % 3
    if game.name == "numerical_ttt":
        return divmod(action // 9, 3)
    return divmod(action, grid_side(game))


def _mark_masks(cell: int) -> tuple[np.ndarray, np.ndarray]:
    """Boolean X and O shapes filling a ``cell`` x ``cell`` square."""
    centre = np.arange(cell) + 0.5 - cell / 2
    y, x = np.meshgrid(centre, centre, indexing="ij")
    half, width = 0.3 * cell, max(1.5, 0.07 * cell)
    inside = (np.abs(x) <= half) & (np.abs(y) <= half)
    cross = inside & ((np.abs(x - y) <= width) | (np.abs(x + y) <= width))
    ring = np.abs(np.hypot(x, y) - half) <= width / 1.4
    return cross, ring


def _digit_mask(digit: int, cell: int) -> np.ndarray:
    """The digit's bitmap scaled up and centred in a ``cell`` x ``cell`` square."""
    scale = max(1, cell // 9)
    bitmap = np.array([[c == "1" for c in row] for row in DIGITS[digit]])
    glyph = np.kron(bitmap, np.ones((scale, scale), dtype=bool)).astype(bool)
    out = np.zeros((cell, cell), dtype=bool)
    top, left = (cell - glyph.shape[0]) // 2, (cell - glyph.shape[1]) // 2
    out[top : top + glyph.shape[0], left : left + glyph.shape[1]] = glyph
    return out


def _small_board_owners(owner: np.ndarray) -> list[int | None]:
    """For uttt: per small board, 0/1 for its winner, 2 if full without one, None while open."""
    result: list[int | None] = []
    for board in range(9):
        r, c = 3 * (board // 3), 3 * (board % 3)
        cells = owner[r : r + 3, c : c + 3].ravel()
        winner = next(
            (
                int(cells[a])
                for a, b, d in LINES_3X3
                if cells[a] >= 0 and cells[a] == cells[b] == cells[d]
            ),
            None,
        )
        result.append(winner if winner is not None else (2 if (cells >= 0).all() else None))
    return result


def render_rgb(game: Game, actions: Sequence[int], legal_mask: np.ndarray) -> np.ndarray:
    """An (H, W, 3) uint8 picture of the position reached by ``actions`` from the start."""
    side = grid_side(game)
    cell = 2 * (144 // side)
    size = side * cell + 2 * MARGIN
    image = np.empty((size, size, 3), dtype=np.uint8)
    image[:] = BACKGROUND
    board = image[MARGIN : MARGIN + side * cell, MARGIN : MARGIN + side * cell]

    def paint(
        row: int,
        col: int,
        colour: tuple[int, int, int],
        mask: np.ndarray | None = None,
        height: int = 1,
    ) -> None:
        patch = board[row * cell : (row + height) * cell, col * cell : (col + height) * cell]
        if mask is None:
            patch[:] = colour
        else:
            patch[mask] = colour

    owner = np.full((side, side), -1, dtype=np.int64)  # player who wrote each cell
    number = np.zeros((side, side), dtype=np.int64)  # numerical ttt: the number written
    for ply, action in enumerate(actions):
        row, col = action_cell(game, int(action))
        owner[row, col] = ply % 2
        number[row, col] = int(action) % 9 + 1

    if game.name == "uttt":
        for b, status in enumerate(_small_board_owners(owner)):
            if status is not None:
                tint = DRAWN_TINT if status == 2 else WON_TINTS[status]
                paint(3 * (b // 3), 3 * (b % 3), tint, height=3)
    for action in np.flatnonzero(legal_mask):
        paint(*action_cell(game, int(action)), LEGAL_TINT)

    cross, ring = _mark_masks(cell)
    for row, col in zip(*np.nonzero(owner >= 0), strict=True):
        player = int(owner[row, col])
        if game.name == "numerical_ttt":
            shape = _digit_mask(int(number[row, col]), cell)
        else:
            shape = cross if player == 0 else ring
        paint(int(row), int(col), PLAYER_COLOURS[player], shape)

    for k in range(side + 1):
        thick = 3 if game.name == "uttt" and k % 3 == 0 else 1
        start = MARGIN + k * cell - thick // 2
        image[MARGIN : size - MARGIN + 1, max(start, 0) : start + thick] = LINE
        image[max(start, 0) : start + thick, MARGIN : size - MARGIN + 1] = LINE
    return image
