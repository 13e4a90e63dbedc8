"""PLACEHOLDER kernels for tictactoe (being written): same signatures as the real ones."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def num_actions(state: np.ndarray) -> int:
    return 9


@njit(cache=True)
def legal_mask(state: np.ndarray, mask: np.ndarray) -> int:
    return 0


@njit(cache=True)
def apply(state: np.ndarray, action: int) -> None:
    pass


@njit(cache=True)
def encode(state: np.ndarray, planes: np.ndarray) -> None:
    pass


@njit(cache=True)
def random_playout(state: np.ndarray) -> float:
    return 0.0
