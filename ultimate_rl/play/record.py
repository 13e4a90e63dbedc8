"""A stored game of the play site: its two seats, the match, and what it is stored as.

``GameRecord`` is what ``PlayService`` keeps per game and writes to the database as one JSON
row (``to_data`` / ``from_data``); a ``Seat`` is a person's (their secret token), an open one
(a one-use invitation) or the level's. ``rated_result`` holds the rule for a rated game the
computer moved in (``service``'s module doc).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from typing import Any

from ultimate_rl.games.base import Game
from ultimate_rl.play.levels import Level
from ultimate_rl.play.session import Match
from ultimate_rl.play.store import RatedResult

PLAYER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\- ]{0,31}")
DEFAULT_AWAY_SECONDS = 60.0  # a person's seat is played by the computer after this long away


class PlayError(Exception):
    """A request the core refuses: an HTTP-style status and a reason a person can read."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def check_player_name(name: Any) -> str:
    if not isinstance(name, str) or not PLAYER_NAME.fullmatch(name.strip()):
        raise PlayError(
            400, "a player name is 1-32 letters, digits, spaces or _.- starting with a letter/digit"
        )
    return name.strip()


def check_away_seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 86400:
        raise PlayError(
            400, f"away_seconds must be a number of seconds in (0, 86400], got {value!r}"
        )
    return float(value)


def new_secret() -> str:
    return secrets.token_urlsafe(18)


@dataclass
class Seat:
    """Who plays one side: a person (holding the seat's secret token), an open seat waiting for
    the invited person, or the game's level (no token, no invitation)."""

    token: str | None = None
    """A person's seat: the secret that moves and resigns for it."""
    player: str | None = None
    """The person's name (rated games need one)."""
    invite: str | None = None
    """An open seat: the one-use code of the invitation that takes it."""
    last_seen: float | None = None
    """When the person last made a request (not stored: a restarted server counts from then)."""
    connections: int = 0
    """The person's open live connections: present while there is one."""

    @property
    def kind(self) -> str:
        return "person" if self.token else "open" if self.invite else "level"

    def away_in(self, now: float, away_seconds: float) -> float | None:
        """Seconds until this person counts as away (0: away now); None while a connection of
        theirs is open, or for a seat that is not a person's."""
        if self.kind != "person" or self.connections > 0:
            return None
        seen = now if self.last_seen is None else self.last_seen
        return max(0.0, seen + away_seconds - now)

    def to_record(self) -> dict[str, Any]:
        return {"token": self.token, "player": self.player, "invite": self.invite}


@dataclass
class GameRecord:
    """A stored game: the match and everything around it the site needs.

    ``seats[p]`` plays player ``p``; the creator sits at ``match.human``. ``level`` is the
    opponent (against a level) or the takeover level (between people)."""

    id: str
    match: Match
    level: Level
    seats: tuple[Seat, Seat]
    rated: bool = False
    opponent: str = "level"  # or "person"
    away_seconds: float = 60.0
    computer_moves: list[int] = field(
        default_factory=list
    )  # plies the computer played for a person
    reviews: dict[int, dict[str, Any]] = field(default_factory=dict)  # ply -> value, best move
    rating_changes: list[dict[str, Any]] | None = None  # per rated player, once rated
    rematch: str | None = None  # the id of the rematch, once one is made
    version: int = 0  # bumped on every change, so watchers wait for the next one
    thinking: bool = False  # the agent is choosing a move (web: in a worker thread)
    users: int = 0  # requests holding the record (web): it stays in memory meanwhile

    @property
    def busy(self) -> bool:
        """Whether someone holds the record: dropping it from memory would make a second copy."""
        return self.thinking or self.users > 0

    @property
    def token(self) -> str:
        """The creator's seat token."""
        token = self.seats[self.match.human].token
        assert token is not None
        return token

    @property
    def player(self) -> str | None:
        """The creator's name."""
        return self.seats[self.match.human].player

    @property
    def rating_change(self) -> dict[str, Any] | None:
        """The creator's rating change, once the game is rated."""
        if not self.rating_changes:
            return None
        mine = next(c for c in self.rating_changes if c["player"] == self.player)
        return {"before": mine["before"], "after": mine["after"]}

    def mover(self, ply: int) -> str:
        """Who played ``ply``, for the review: ``you`` or ``agent`` against a level; between
        people, the player's name (else their mark), or ``computer`` for an away one's."""
        if ply in self.computer_moves:
            return "computer"
        if self.opponent == "person":
            return self.seats[ply % 2].player or self.match.game.mark_names[ply % 2]
        return "you" if ply % 2 == self.match.human else "agent"

    def rated_result(self, key: str) -> RatedResult | None:
        """What a finished rated game rates: the board's result, except that a seat the
        computer moved for loses; None when it moved for both."""
        match = self.match
        if self.opponent == "level":
            outcome = match.human_result()
            assert outcome is not None
            return RatedResult(key, (str(self.player),), outcome, self.level.rating)
        helped = {ply % 2 for ply in self.computer_moves}
        if len(helped) == 2:
            return None
        outcome = match.result_for(0) if not helped else "loss" if 0 in helped else "win"
        assert outcome is not None
        return RatedResult(key, tuple(str(seat.player) for seat in self.seats), outcome)

    def to_data(self, game: Game) -> dict[str, Any]:
        """The stored row's JSON (``from_data`` rebuilds the record)."""
        return {
            "version": self.version,
            "game": game.name,
            "options": game.options,
            "level": self.level.name,
            "rating": self.level.rating,
            "rated": self.rated,
            "opponent": self.opponent,
            "away_seconds": self.away_seconds,
            "seats": [seat.to_record() for seat in self.seats],
            "computer_moves": self.computer_moves,
            "match": self.match.to_record(),
            "reviews": self.reviews,
            "rating_changes": self.rating_changes,
            "rematch": self.rematch,
        }

    @classmethod
    def from_data(
        cls, game_id: str, token: str, data: dict[str, Any], game: Game, level: Level, now: float
    ) -> GameRecord:
        """The record of a stored row (also one saved before seats or ``rating_changes``);
        every person counts as seen ``now`` (a restarted server starts their away time)."""
        match = Match.from_record(game, data["match"])
        seats = [Seat(last_seen=now, **seat) for seat in data.get("seats", [{}, {}])]
        if "seats" not in data:  # a game saved before seats: the person's and the level's
            seats[match.human] = Seat(token=token, player=data.get("player"), last_seen=now)
        changes = data.get("rating_changes")
        if changes is None and data.get("rating_change"):  # saved before rating_changes
            changes = [{"player": data.get("player"), **data["rating_change"]}]
        return cls(
            game_id,
            match,
            level,
            (seats[0], seats[1]),
            data["rated"],
            data.get("opponent", "level"),
            data.get("away_seconds", DEFAULT_AWAY_SECONDS),
            data.get("computer_moves", []),
            {int(ply): review for ply, review in data.get("reviews", {}).items()},
            changes,
            data.get("rematch"),
            data.get("version", 0),  # versions keep rising across restarts: pages compare them
        )
