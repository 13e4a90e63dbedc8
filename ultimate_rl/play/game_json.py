"""The game as a page draws it (``game_json``), and what only the person of a seat is sent:
the seat's secret token and play link (``seat_urls``). Built anew for every answer, from the
record and the service's clock, so each page sees who is here and who plays for whom now."""

from __future__ import annotations

from typing import Any

from ultimate_rl.play.record import GameRecord
from ultimate_rl.play.service import PlayService


def game_json(
    service: PlayService, record: GameRecord, seat: int | None, watchers: int
) -> dict[str, Any]:
    """The game for a page; ``seat``: the asking person's (None: a watcher); ``watchers``: the
    open live connections without a seat."""
    away, now = service.away_left(record), service.clock()
    seats = []
    for index, held in enumerate(record.seats):
        left = held.away_in(now, record.away_seconds)
        here = left is None or left > 0
        to_move = record.match.to_move == index
        seats.append(
            {
                "kind": held.kind,
                "player": held.player,
                "present": here,
                "connected": held.connections > 0,
                "computer": held.kind == "level" or (to_move and away == 0.0),
            }
        )
    return {
        "id": record.id,
        "version": record.version,
        "level": record.level.to_json(),
        "opponent": record.opponent,
        "rated": record.rated,
        "player": record.player,
        "seats": seats,
        "seat": seat,
        "away_seconds": record.away_seconds,
        "computer_moves": list(record.computer_moves),
        "rating_change": record.rating_change,
        "rating_changes": record.rating_changes,
        "rematch": record.rematch,
        "watchers": watchers,
        "thinking": record.thinking,
        **record.match.to_json(now),
    }


def seat_urls(record: GameRecord, seat: int) -> dict[str, Any]:
    """A seat's secret token and play link, and the watch link (for the person it is for)."""
    token = record.seats[seat].token
    return {
        "seat": seat,
        "token": token,
        "play_url": f"/game/{record.id}#play={token}",
        "watch_url": f"/game/{record.id}",
    }
