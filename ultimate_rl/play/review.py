"""The review of a finished game: the level's value and preferred move before every ply, found
once (without the game's lock: it is slow) and kept in the game's record."""

from __future__ import annotations

from typing import Any

from ultimate_rl.games.base import Game
from ultimate_rl.play.levels import assess
from ultimate_rl.play.record import GameRecord, PlayError


def missing_plies(record: GameRecord) -> list[int]:
    """Plies of a finished game without the agent's value yet (the person's moves, and the
    agent's own after the opening, where it chose without analysing)."""
    if not record.match.over:
        raise PlayError(409, "the review opens when the game is over")
    plies = range(len(record.match.actions))
    return [ply for ply in plies if "value" not in record.reviews.get(ply, {})]


def analyse_plies(game: Game, record: GameRecord, plies: list[int]) -> dict[int, dict[str, Any]]:
    """The level's value and preferred move before each of ``plies`` (no lock on the game)."""
    actions = list(record.match.actions)
    level = record.level
    found = {}
    for ply in plies:
        state = game.apply_sequence(actions[:ply])
        with level.lock:
            found[ply] = assess(level.get_agent(), game, state).review()
    return found


def add_reviews(record: GameRecord, found: dict[int, dict[str, Any]]) -> bool:
    """Adds analysed plies (a move the agent chose stays its preferred move at that ply);
    whether anything was added (the game is to be saved then)."""
    for ply, review in found.items():
        record.reviews[ply] = {**review, **record.reviews.get(ply, {})}
    return bool(found)


def review_json(game: Game, record: GameRecord, seat: int | None = None) -> dict[str, Any]:
    """Each move of the finished game with the agent's value and choice, for whoever looks: the
    person at ``seat``; without one (a watcher), X's side between people (as the board reads,
    whoever created the game), the person's against a level. ``side`` says whose it is."""
    match = record.match
    viewer = seat if seat is not None else 0 if record.opponent == "person" else match.human
    plies = []
    for ply, action in enumerate(match.actions):
        review = record.reviews.get(ply, {})
        mover = ply % 2
        value = review.get("value")
        plies.append(
            {
                "ply": ply,
                "by": record.mover(ply),
                "move": action,
                "move_text": game.move_text(action),
                "best": review.get("best"),
                "best_text": (
                    None if review.get("best") is None else game.move_text(review["best"])
                ),
                "value_for_you": (
                    None if value is None else round(value if mover == viewer else -value, 3)
                ),
            }
        )
    return {
        "id": record.id,
        "level": record.level.name,
        "side": viewer,
        "side_name": game.mark_names[viewer],
        "plies": plies,
    }
