"""Helpers shared by several test modules (pytest puts tests/ on the import path)."""

from __future__ import annotations

import numpy as np

from ultimate_rl.games import Game


def random_play_states(game: Game, count: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``count`` non-terminal positions, every ply of random games in order (so early positions
    are common; ``ultimate_rl.games.sample_positions`` gives distinct random plies)."""
    states: list[np.ndarray] = []
    while len(states) < count:
        state = game.initial_state()
        while not game.is_terminal(state) and len(states) < count:
            states.append(state)
            state = game.apply(state, int(rng.choice(game.legal_actions(state))))
    return states
