"""What the training loop shows in TensorBoard besides scalars: the probe-position images.

A probe image has one panel per fixed position: the network's policy as a heat map over the
board (red), the position's pieces faintly (blue), and a bar on the right for the value
(green: good for the player to move, its height is (value + 1) / 2). The board comes from the
game's own description, so every game, square or not, draws the same way.
"""

from __future__ import annotations

import numpy as np

from ultimate_rl.games.base import Game

CELL_PIXELS = 12


def policy_grid(game: Game, state: np.ndarray, policy: np.ndarray) -> np.ndarray:
    """The policy laid out on the game's board grid: each action's probability on its cell."""
    shape = game.board_shape
    grid = np.zeros(shape.cells, dtype=np.float32)
    for action in np.flatnonzero(policy):
        grid[game.action_cell(state, int(action))] += policy[action]
    return grid.reshape(shape.rows, shape.cols)


def probe_image(
    game: Game, states: np.ndarray, policies: np.ndarray, values: np.ndarray
) -> np.ndarray:
    """An RGB image ``[3, H, W]`` (float in [0, 1]) with one panel per probe position."""
    rows, cols = game.board_shape.rows, game.board_shape.cols
    panels = []
    for state, policy, value in zip(states, policies, values, strict=True):
        heat = policy_grid(game, state, policy)
        heat = heat / max(float(heat.max()), 1e-9)
        pieces = np.array(game.picture(state).owners).reshape(rows, cols) >= 0
        panel = np.zeros((3, rows, cols + 1), dtype=np.float32)
        panel[0, :, :cols] = heat
        panel[2, :, :cols] = 0.5 * pieces
        filled = round((float(value) + 1) / 2 * rows)
        panel[1, rows - filled :, cols] = 1.0
        panel = panel.repeat(CELL_PIXELS, axis=1).repeat(CELL_PIXELS, axis=2)
        panels += [panel, np.ones((3, panel.shape[1], 2), dtype=np.float32)]
    return np.concatenate(panels[:-1], axis=2)
