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


# The smallest training run that exercises every stage: tic-tac-toe, a tiny MLP, 4 simulations.
TINY_RUN = [
    "game=tictactoe",
    "model=mlp",
    "model.mlp_hidden=[32]",
    "search.num_simulations=4",
    "selfplay.parallel_games=8",
    "selfplay.games_per_iteration=8",
    "train.batch_size=16",
    "train.steps_per_iteration=5",
    "train.min_replay=1",
    "train.progress_bar=false",
]


def tiny_run_overrides(*extra: str) -> list[str]:
    """``TINY_RUN`` with ``extra`` overrides added; an extra key replaces the base one, since
    Hydra rejects a key given twice."""
    merged = {override.split("=", 1)[0]: override for override in [*TINY_RUN, *extra]}
    return list(merged.values())
