"""RGB pictures of a board drawn with numpy alone (no pygame), for ``render_mode="rgb_array"``.

The picture is drawn from the game's own board description (``Game.board_shape``,
``Game.picture``, ``Game.action_cell``), so any game draws without a branch on its name: blocks
tinted by their result, the mover's cells in yellow, crosses and rings, or the digit written.
Sides are even so video encoders (RecordVideo) accept the frames.
"""

from __future__ import annotations

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


def render_rgb(game: Game, state: np.ndarray) -> np.ndarray:
    """An (H, W, 3) uint8 picture of ``state``, drawn from the game's board description."""
    shape, picture = game.board_shape, game.picture(state)
    cell = 2 * (144 // max(shape.rows, shape.cols))
    height, width = shape.rows * cell + 2 * MARGIN, shape.cols * cell + 2 * MARGIN
    image = np.empty((height, width, 3), dtype=np.uint8)
    image[:] = BACKGROUND
    board = image[MARGIN : height - MARGIN, MARGIN : width - MARGIN]

    def paint(index: int, colour: tuple[int, int, int], mask: np.ndarray | None = None) -> None:
        row, col = divmod(index, shape.cols)
        patch = board[row * cell : (row + 1) * cell, col * cell : (col + 1) * cell]
        if mask is None:
            patch[:] = colour
        else:
            patch[mask] = colour

    for block, result in enumerate(picture.blocks):
        if result:
            won = game.mark_names.index(result) if result in game.mark_names else None
            for index in shape.block_cells(block):
                paint(index, DRAWN_TINT if won is None else WON_TINTS[won])
    if not game.is_terminal(state):
        for action in game.legal_actions(state):
            paint(game.action_cell(state, int(action)), LEGAL_TINT)
    cross, ring = _mark_masks(cell)
    for index, (owner, label) in enumerate(zip(picture.owners, picture.labels, strict=True)):
        if owner >= 0:
            digit = label.isdigit() and 1 <= int(label) <= 9
            shape_mask = _digit_mask(int(label), cell) if digit else (cross, ring)[owner]
            paint(index, PLAYER_COLOURS[owner], shape_mask)

    step = shape.block or shape.rows + shape.cols  # thick rules between blocks only
    for k in range(shape.cols + 1):
        thick = 3 if shape.block and k % step == 0 else 1
        start = MARGIN + k * cell - thick // 2
        image[MARGIN : height - MARGIN + 1, max(start, 0) : start + thick] = LINE
    for k in range(shape.rows + 1):
        thick = 3 if shape.block and k % step == 0 else 1
        start = MARGIN + k * cell - thick // 2
        image[max(start, 0) : start + thick, MARGIN : width - MARGIN + 1] = LINE
    return image
