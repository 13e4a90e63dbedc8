"""Fixed, seeded sets of positions: the same positions for every run, checkpoint and evaluator.

Training (optimal-move rate, probe images) and the evaluator score play on these sets, so their
figures are comparable only if both draw them here, with the same seed.
"""

from __future__ import annotations

import numpy as np

from ultimate_rl.games.base import Game
from ultimate_rl.games.errors import GameError


def sample_positions(game: Game, count: int, seed: int) -> list[np.ndarray]:
    """``count`` distinct non-terminal positions, each a uniformly random ply of a random game."""
    rng = np.random.default_rng(seed)
    found: dict[bytes, np.ndarray] = {}
    for _ in range(100 * count):
        if len(found) == count:
            break
        states = [game.initial_state()]
        while not game.is_terminal(states[-1]):
            states.append(game.apply(states[-1], int(rng.choice(game.legal_actions(states[-1])))))
        state = states[int(rng.integers(len(states) - 1))]
        found.setdefault(state.tobytes(), state)
    if len(found) < count:
        raise GameError(
            f"found only {len(found)} distinct positions of {game!r} by random play; ask for fewer"
        )
    return list(found.values())
