"""The numerics rule a reduced-precision inference path must pass against float32.

A path (bf16, int8) computes slightly different logits and values from float32's. What matters
to search is whether it still prefers the same moves and values positions alike, so the rule is
stated on real positions of the network's game (``Probe``, from random games):

- ``near_top_agreement``: the share of positions where the path's best legal move is float32's
  best, or one float32 rates at least ``NEAR_TOP`` of its best (a near tie is no disagreement:
  a fresh network rates every move alike, and any order of equal moves is right);
- ``max_value_difference``: the largest |value - float32 value| over the positions.

``top_move_agreement`` (strict) and ``mean_value_difference`` are reported beside them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ultimate_rl.games.base import Game

NEAR_TOP = 0.9  # a move float32 rates at >= 90% of its best counts as agreeing
MIN_NEAR_TOP_AGREEMENT = 0.95
MAX_VALUE_DIFFERENCE = 0.15
PROBE_POSITIONS = 256


class Probe(NamedTuple):
    """Network inputs of real positions: ``planes`` [N, C, H, W] float32, ``masks`` [N, A]."""

    planes: np.ndarray
    masks: np.ndarray

    def half(self, which: int) -> Probe:
        """Every other position (``which`` 0 or 1): one half calibrates int8, the other checks."""
        return Probe(self.planes[which::2], self.masks[which::2])


_PROBES: dict[tuple, Probe] = {}  # probe_positions' results by game, options, count and seed


def probe_positions(game: Game, count: int = PROBE_POSITIONS, seed: int = 0) -> Probe:
    """``count`` positions from random games of ``game`` (every ply of each game until there are
    enough: fast, unlike ``sample_positions``' one distinct ply per game). Kept per game and
    options (those of its rules and of its planes alike), so loading many agents makes them
    once."""
    key = (game.name, tuple(sorted(game.options.items())), count, seed)
    if key not in _PROBES:
        rng = np.random.default_rng(seed)
        planes, masks = [], []
        while len(planes) < count:
            state = game.initial_state()
            while not game.is_terminal(state) and len(planes) < count:
                planes.append(game.encode(state))
                masks.append(game.legal_mask(state))
                state = game.apply(state, int(rng.choice(game.legal_actions(state))))
        _PROBES[key] = Probe(np.stack(planes).astype(np.float32), np.stack(masks))
    return _PROBES[key]


@dataclass(frozen=True)
class Numerics:
    """How a path's outputs on a probe compare with float32's (see the module doc)."""

    positions: int
    top_move_agreement: float
    near_top_agreement: float
    max_value_difference: float
    mean_value_difference: float

    @property
    def passes(self) -> bool:
        return (
            self.near_top_agreement >= MIN_NEAR_TOP_AGREEMENT
            and self.max_value_difference <= MAX_VALUE_DIFFERENCE
        )

    def summary(self) -> str:
        return (
            f"top move {self.top_move_agreement:.3f} (near-top {self.near_top_agreement:.3f}), "
            f"value diff max {self.max_value_difference:.3f} mean {self.mean_value_difference:.4f}"
        )


def compare(
    reference: tuple[np.ndarray, np.ndarray], got: tuple[np.ndarray, np.ndarray], masks: np.ndarray
) -> Numerics:
    """``got`` (logits, values) against float32's ``reference`` on positions with ``masks``."""
    ref_logits = np.where(masks, reference[0], -np.inf)
    got_logits = np.where(masks, got[0], -np.inf)
    ref_probs = np.exp(ref_logits - ref_logits.max(axis=1, keepdims=True))
    best, chosen = ref_logits.argmax(axis=1), got_logits.argmax(axis=1)
    rows = np.arange(len(masks))
    near = ref_probs[rows, chosen] >= NEAR_TOP * ref_probs[rows, best]
    difference = np.abs(np.asarray(got[1], np.float64) - reference[1])
    return Numerics(
        positions=len(masks),
        top_move_agreement=float(np.mean(chosen == best)),
        near_top_agreement=float(np.mean(near)),
        max_value_difference=float(difference.max(initial=0.0)),
        mean_value_difference=float(difference.mean()) if len(difference) else 0.0,
    )
