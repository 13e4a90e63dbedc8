"""Helpers shared by several test modules (pytest puts tests/ on the import path)."""

from __future__ import annotations

import numpy as np

from ultimate_rl.games import Game, solve


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


def constant_value(value: float):
    """An evaluator with uniform priors and the same value (for the player to move) everywhere."""

    def evaluate(planes, masks):
        return np.zeros(masks.shape, np.float32), np.full(len(planes), value, np.float32)

    return evaluate


def noisy_exact_network(game: Game, positions: dict[bytes, np.ndarray], seed: int):
    """An evaluator for ``game`` (``positions``: every position by its planes): the solver's
    values and best moves blurred by noise fixed per position, so that it plays most lines right
    and some wrong, and its searches' moves depend on their visits."""

    def evaluate(planes: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        logits = np.zeros(masks.shape, np.float32)
        values = np.zeros(len(masks), np.float32)
        for row, p in enumerate(planes):
            state = positions[p.tobytes()]
            rng = np.random.default_rng([seed, *np.frombuffer(p.tobytes(), np.uint8)[::7]])
            value, best = solve(game, state)
            logits[row] = rng.normal(0.0, 1.0, masks.shape[1])
            logits[row, best] += 1.0
            values[row] = np.clip(value + rng.normal(0.0, 0.6), -1, 1)
        return logits, values

    return evaluate


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
