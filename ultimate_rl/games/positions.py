"""Seeded random positions: the fixed sets that training and the evaluator both score play on,
and the random openings that self-play, gating and the arena start games from.

Training (optimal-move rate, probe images) and the evaluator score play on the same sets, so their
figures are comparable only if both draw them here, with the same seed.
"""

from __future__ import annotations

from typing import Literal

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


IfGameEnds = Literal["stop", "avoid", "redraw"]
MAX_OPENING_DRAWS = 1000  # "redraw" gives up after this many openings that all ended the game


def random_opening(
    game: Game, plies: int, rng: np.random.Generator, if_game_ends: IfGameEnds
) -> list[int]:
    """Up to ``plies`` uniformly random moves from the start that leave the game running.

    Every caller keeps its own rule for a random move that would end the game, since seeded
    results (and the arena's recorded games, which a rerun reuses) depend on it:
    ``"stop"`` ends the opening before that move (self-play: a shorter opening is fine);
    ``"avoid"`` draws among the moves that keep the game running, ending early only if none does
    (training's gating); ``"redraw"`` draws the whole opening again, so it always has ``plies``
    moves (the arena).
    """
    for _ in range(MAX_OPENING_DRAWS):
        state, moves = game.initial_state(), []
        while len(moves) < plies:
            legal = game.legal_actions(state)
            if if_game_ends == "avoid":
                legal = [a for a in legal if not game.is_terminal(game.apply(state, int(a)))]
                if not legal:
                    return moves
            action = int(legal[rng.integers(len(legal))])
            after = game.apply(state, action)
            if game.is_terminal(after) and if_game_ends == "stop":
                return moves
            state = after
            moves.append(action)
            if game.is_terminal(state):
                break  # only "redraw" gets here: draw the opening again
        else:
            return moves
    raise GameError(
        f"could not find a {plies}-ply random opening that leaves {game!r} running in "
        f"{MAX_OPENING_DRAWS} draws; ask for fewer plies"
    )
