"""The analysis board (``POST /api/analysis``): any position of any registered game, named by its
moves from the start, analysed by the strongest level the site offers for that game.

The moves are action numbers or one text in the game's notation (``notation.play_line``). The
site's own game is analysed by its strongest rated level (else its default level); another
registered game by the strongest of its ``default_levels`` (uttt: the shipped network agent;
tictactoe 3x3 / 4x4 and numerical_ttt: the perfect solver; connect_four: UCT-1000). The agent
runs once a request, under its level's own thinking limit and its level's lock, as for a move
(``Level.analyse``); a level that is busy answers 429 at once, so analyses never queue up
behind a game's move. No analysis while a rated game or a game between people is played
(``check_analysable``): such a game's moves open here once it is over.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ultimate_rl.games import make as make_game
from ultimate_rl.games.base import Game
from ultimate_rl.games.registry import GAME_NAMES
from ultimate_rl.play.levels import Level, default_levels, strongest
from ultimate_rl.play.notation import MoveError, line_text, move_word, play_line
from ultimate_rl.play.record import GameRecord, PlayError
from ultimate_rl.play.service import PlayService
from ultimate_rl.play.view import board_view


def check_analysable(record: GameRecord) -> None:
    """Refuses (403) the analysis of a rated game, or of a game between people, in progress."""
    if record.match.over:
        return
    if record.rated:
        raise PlayError(403, "no analysis during a rated game; it opens here once the game is over")
    if record.opponent == "person":
        raise PlayError(
            403, "no analysis during a game between two people; it opens here once it is over"
        )


class AnalysisBoard:
    """The games the board analyses and their levels: the site's own, and each other registered
    game's ``default_levels``, built on first use and kept (one level, so one lock, per game and
    level, whichever request asks)."""

    def __init__(self, service: PlayService, seed: int | None = None) -> None:
        self.service = service
        self.seed = seed
        self._lock = threading.Lock()
        self._others: dict[str, tuple[Game, dict[str, Level], Level]] = {}

    def target(self, key: Any, level: Any = None) -> tuple[Game, Level]:
        """The game ``key`` names (None: the site's) and the level that analyses it (``level``:
        one of that game's levels by name; default the strongest)."""
        if key is not None and (not isinstance(key, str) or key not in GAME_NAMES):
            raise PlayError(400, f"unknown game {key!r}; choose one of {list(GAME_NAMES)}")
        service = self.service
        if key is None or key == service.game.name:
            levels = service.levels
            game, best = service.game, strongest(list(levels.values()), service.default_level)
        else:
            with self._lock:
                if key not in self._others:
                    game = make_game(key)
                    offered = default_levels(game, self.seed)
                    named = {lv.name: lv for lv in offered}
                    self._others[key] = (game, named, strongest(offered, offered[-1].name))
                game, levels, best = self._others[key]
        if level is None:
            return game, best
        if not isinstance(level, str) or level not in levels:
            raise PlayError(
                400, f"unknown level {level!r} for {game.name}; choose one of {list(levels)}"
            )
        return game, levels[level]

    def analyse(self, body: dict[str, Any]) -> dict[str, Any]:
        """The answer to ``{"moves": [...] or "text", "game": KEY, "level": NAME}``."""
        game, level = self.target(body.get("game"), body.get("level"))
        moves = body.get("moves", [])
        if not isinstance(moves, list | str):
            raise PlayError(
                400,
                "'moves' must be a list of action numbers ([40, 37]) or one text in the game's "
                f"notation ('e5 e4'). {game.notation_help}",
            )
        try:
            actions, state = play_line(game, moves)
        except MoveError as err:
            raise PlayError(400, str(err)) from None
        self.service.ponderer.stop()  # the analysis gets the cores a ponder would take
        return position_json(game, level, actions, state)


def position_json(
    game: Game, level: Level, actions: list[int], state: np.ndarray
) -> dict[str, Any]:
    """The position after ``actions`` with the level's analysis (none once the game is over)."""
    over = game.is_terminal(state)
    if over:
        found: dict[str, Any] = {"policy": [0.0] * game.num_actions, "value": None, "pv": []}
    else:
        answer = level.analyse(game, state, wait=False)
        if answer is None:
            raise PlayError(
                429,
                f"the analysis agent ({level.name}) is busy with another position; "
                "try again in a few seconds",
            )
        found = answer
    return {
        "game": game.name,
        "title": game.title,
        "level": level.to_json(),
        "moves": actions,
        "moves_text": [move_word(game, action) for action in actions],
        "line": line_text(game, actions),
        "ply": len(actions),
        "to_move": None if over else game.current_player(state),
        "over": over,
        "result_text": game.outcome_text(state, game.mark_names) if over else None,
        **found,
        "pv_text": [move_word(game, action) for action in found["pv"]],
        "board": board_view(game, state).to_json(),
        "notation": game.notation_help,
    }
