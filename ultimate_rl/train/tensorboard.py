"""What the training loop shows in TensorBoard besides scalars: the probe-position images.

A probe image has one panel per fixed position: the network's policy as a heat map over the
board (red), the position's stones faintly (blue), and a bar on the right for the value
(green: good for the player to move, its height is (value + 1) / 2).
"""

from __future__ import annotations

import numpy as np

from ultimate_rl.games.base import Game

CELL_PIXELS = 12


def policy_grid(game: Game, policy: np.ndarray) -> np.ndarray:
    """The policy laid out as the game's board picture (probabilities summed per cell)."""
    side = game.observation_shape[1]
    if game.name == "uttt":  # action = 9 * board + cell, boards and cells row-major
        actions = np.arange(81)
        board, cell = actions // 9, actions % 9
        rows, cols = 3 * (board // 3) + cell // 3, 3 * (board % 3) + cell % 3
        grid = np.zeros((9, 9), dtype=np.float32)
        grid[rows, cols] = policy
        return grid
    per_cell = len(policy) // (side * side)  # numerical_ttt: 9 numbers per cell
    return policy.reshape(side * side, per_cell).sum(axis=1).reshape(side, side)


def probe_image(
    game: Game, planes: np.ndarray, policies: np.ndarray, values: np.ndarray
) -> np.ndarray:
    """An RGB image ``[3, H, W]`` (float in [0, 1]) with one panel per probe position."""
    panels = []
    for position, policy, value in zip(planes, policies, values, strict=True):
        heat = policy_grid(game, policy)
        heat = heat / max(float(heat.max()), 1e-9)
        stones = np.clip(position[:2].sum(axis=0), 0, 1)  # the first two planes: the marks
        side = heat.shape[0]
        panel = np.zeros((3, side, side + 1), dtype=np.float32)
        panel[0, :, :side] = heat
        panel[2, :, :side] = 0.5 * stones[:side, :side]
        filled = round((float(value) + 1) / 2 * side)
        panel[1, side - filled :, side] = 1.0
        panel = panel.repeat(CELL_PIXELS, axis=1).repeat(CELL_PIXELS, axis=2)
        panels += [panel, np.ones((3, panel.shape[1], 2), dtype=np.float32)]
    return np.concatenate(panels[:-1], axis=2)
