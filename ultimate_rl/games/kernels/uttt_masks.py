"""Lookup tables over 9-bit masks (bit ``i`` = cell or small board ``i``, row-major), shared by
uttt's big and small boards: one table read instead of a loop over the eight lines."""

from __future__ import annotations

import numpy as np

from ultimate_rl.games.board import lines

LINES = tuple(sum(1 << cell for cell in line) for line in lines(3, 3, 3))  # 9-bit masks


def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per 9-bit mask: whether it holds a line, how many bits it has, and where its k-th bit is."""
    has_line = np.zeros(512, dtype=np.uint8)
    popcount = np.zeros(512, dtype=np.int64)
    nth_bit = np.zeros((512, 9), dtype=np.int64)
    for mask in range(512):
        has_line[mask] = any(mask & line == line for line in LINES)
        bits = [i for i in range(9) if mask >> i & 1]
        popcount[mask] = len(bits)
        nth_bit[mask, : len(bits)] = bits
    return has_line, popcount, nth_bit


HAS_LINE, POPCOUNT, NTH_BIT = _tables()
THREATS = np.array(
    [sum(1 << c for c in range(9) if not m >> c & 1 and HAS_LINE[m | 1 << c]) for m in range(512)],
    dtype=np.int64,
)
"""Per 9-bit mask of one player's marks: the cells that would complete a line (the guided
playout's small-board wins)."""
OPEN_LINE = np.array([any(m & line == 0 for line in LINES) for m in range(512)], dtype=np.uint8)
"""Per 9-bit mask of one player's marks: whether some line holds none of them, i.e. whether the
other player can still complete a line there."""
