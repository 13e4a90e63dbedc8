"""An evaluator that remembers a fixed network's outputs for the positions it has evaluated.

The every-line walks (``agents/every_line.py``) search every position a player meets against
every opponent line with one network that does not change during the walk, and those searches
overlap: on 4x4 tic-tac-toe at 32 simulations, 15% of the positions a walk sent to the network
were distinct (26.9M evaluated, 4.1M distinct). Each distinct position goes to the network once;
a repeat costs a hash and a copy. Only for a network that stays fixed while it is in use.
"""

from __future__ import annotations

from hashlib import blake2b

import numpy as np

from ultimate_rl.search.batched import Evaluator

MAX_POSITIONS = 4_000_000
"""Positions remembered before the memory starts again (an estimate: about 1 GB at 4x4's 16 moves,
outputs and keys)."""


class MemoEvaluator:
    """``evaluate`` with a memory: a position (its planes and legal moves) already evaluated,
    earlier or in the same batch, is answered from it. ``evaluated`` counts the positions that
    went to the network, ``asked`` those asked for."""

    def __init__(self, evaluate: Evaluator, max_positions: int = MAX_POSITIONS) -> None:
        if max_positions < 1:
            raise ValueError(f"max_positions must be at least 1, got {max_positions}")
        self.evaluate, self.max_positions = evaluate, max_positions
        self.rows: dict[bytes, int] = {}
        self.logits = np.zeros((0, 0), np.float32)
        self.values = np.zeros(0, np.float32)
        self.asked = self.evaluated = 0

    def __call__(self, planes: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        planes = np.ascontiguousarray(planes, dtype=np.float32)
        masks = np.ascontiguousarray(masks, dtype=bool)
        n = len(planes)
        self.asked += n
        if len(self.rows) + n > self.max_positions:
            self.rows.clear()
        whole = np.concatenate([planes.reshape(n, -1).view(np.uint8), masks.view(np.uint8)], 1)
        keys = [blake2b(row, digest_size=16).digest() for row in whole]
        new: dict[bytes, int] = {}  # key -> its first row in this batch
        for i, k in enumerate(keys):
            if k not in self.rows and k not in new:
                new[k] = i
        if new:
            self._store(new, planes, masks)
        rows = np.fromiter((self.rows[k] for k in keys), np.int64, n)
        return self.logits[rows], self.values[rows]

    def _store(self, new: dict[bytes, int], planes: np.ndarray, masks: np.ndarray) -> None:
        first = np.fromiter(new.values(), np.int64, len(new))
        logits, values = self.evaluate(planes[first], masks[first])
        start = len(self.rows)
        end = start + len(first)
        if end > len(self.values):  # grow the stores (doubling), keeping the rows so far
            size = max(end, 2 * len(self.values), 1024)
            grown = np.zeros((size, logits.shape[1]), np.float32)
            if start:
                grown[:start] = self.logits[:start]
            self.logits, self.values = grown, np.resize(self.values, size)
        self.logits[start:end], self.values[start:end] = logits, values
        self.rows.update(zip(new, range(start, end), strict=True))
        self.evaluated += len(first)
