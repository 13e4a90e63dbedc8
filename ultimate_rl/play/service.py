"""The play site's core, shared by the terminal and the browser: games, levels, clock, ratings.

``PlayService`` creates, stores and reloads games (``GameRecord``: a ``Match`` with its id, its two
seats, level and rating settings), applies people's moves, lets the level's agent think and move,
ends games on time, rates finished rated games and reviews them. It does no locking of its own
around a game: the web server holds a game's lock around each call except ``think`` (so other
requests go on while an agent thinks); the terminal is single-threaded.

A game is against a level (one seat a person's, the other the level's) or between two people
(``opponent="person"``): the creator's seat, and a seat opened by a one-use invitation that the
second person's ``join`` takes. Each person's seat has its own secret token: it alone moves and
resigns for that seat. A person who is away (no request or open connection for
``away_seconds``) has their moves played by the takeover level until they come back; the
record keeps which moves the computer made. Rated games between people rate both players once,
from each other's ratings before the game. **A rated game in which the computer moved for one
seat is rated as a loss for that seat and a win for the other, whatever the board says**
(leaving a rated game forfeits it; the computer plays on so the other person's game does not
hang, and whoever comes back can finish it), and one in which it moved for both seats is not
rated.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from ultimate_rl.games import make as make_game
from ultimate_rl.games.base import Game
from ultimate_rl.play.levels import Decision, Level, decide, strongest
from ultimate_rl.play.ponder import Ponderer
from ultimate_rl.play.record import (
    DEFAULT_AWAY_SECONDS,
    GameRecord,
    PlayError,
    Seat,
    check_away_seconds,
    check_player_name,
    new_secret,
)
from ultimate_rl.play.session import Match
from ultimate_rl.play.store import Database

OPPONENTS = ("level", "person")
__all__ = ["DEFAULT_AWAY_SECONDS", "GameRecord", "PlayError", "PlayService", "Seat"]


class PlayService:
    """Games against the levels of one game, kept in ``db``; ``clock`` gives the time (seconds)."""

    def __init__(
        self,
        game: Game,
        levels: list[Level],
        db: Database,
        *,
        default_level: str | None = None,
        takeover_level: str | None = None,
        clock: Callable[[], float] = time.time,
        cache_size: int = 256,
        ponder_seconds: float = 0.0,
    ) -> None:
        """``takeover_level`` plays for an away person (default: the strongest rated level);
        ``ponder_seconds`` > 0: a level thinks that long at most on the person's time
        (``play/ponder.py``)."""
        if not levels:
            raise ValueError("the play site needs at least one level")
        self.game = game
        self.levels = {level.name: level for level in levels}
        self.default_level = default_level or levels[-1].name
        self.level(self.default_level)
        self.takeover_level = takeover_level or strongest(levels, self.default_level).name
        self.level(self.takeover_level)
        self.db = db
        self.clock = clock
        self.key = game.rating_key
        self.cache_size = max(1, cache_size)
        self.ponderer = Ponderer(ponder_seconds)
        self._cache: OrderedDict[str, GameRecord] = OrderedDict()

    def level(self, name: str | None) -> Level:
        name = self.default_level if name is None else name
        if name not in self.levels:
            raise PlayError(400, f"unknown level {name!r}; choose one of {list(self.levels)}")
        return self.levels[name]

    def check_rated(self, level: Level) -> None:
        """Refuses rated play against a level without a rating (nothing to rate against)."""
        if level.rating is None:
            rated_ones = [n for n, lv in self.levels.items() if lv.rating is not None]
            raise PlayError(
                400,
                f"level {level.name!r} has no rating, so games against it cannot be rated; "
                f"rated levels: {rated_ones or 'none for this game'}",
            )

    def info(self) -> dict[str, Any]:
        return {
            "game": self.game.name,
            "title": self.game.title,
            "mark_names": list(self.game.mark_names),
            "game_options": self.game.options,
            "rules": self.game.rules,
            "levels": [level.to_json() for level in self.levels.values()],
            "default_level": self.default_level,
            "takeover_level": self.takeover_level,
            "away_seconds": DEFAULT_AWAY_SECONDS,
        }

    # ---- games ----------------------------------------------------------------------------

    def create(
        self,
        human: int,
        *,
        level: str | None = None,
        turn_seconds: float | None = None,
        rated: bool = False,
        player: str | None = None,
        opponent: str = "level",
        away_seconds: float = DEFAULT_AWAY_SECONDS,
    ) -> GameRecord:
        """A new game with the creator at seat ``human``, against ``level`` or (``opponent``
        ``"person"``) with the other seat open for an invited person; the takeover level is
        ``level`` then (default: ``takeover_level``)."""
        if opponent not in OPPONENTS:
            raise PlayError(400, f"unknown opponent {opponent!r}; choose one of {list(OPPONENTS)}")
        person = opponent == "person"
        chosen = self.level(self.takeover_level if person and level is None else level)
        if rated and not person:
            self.check_rated(chosen)
        if rated or player is not None:
            player = check_player_name(player)
        check_away_seconds(away_seconds)
        seats = [Seat(), Seat()]
        seats[human] = Seat(token=new_secret(), player=player, last_seen=self.clock())
        if person:
            seats[1 - human] = Seat(invite=new_secret())
        people = (0, 1) if person else (human,)
        match = Match(self.game, human, turn_seconds, now=self.clock(), people=people)
        return self._new(match, chosen, seats, rated, opponent, float(away_seconds))

    def _new(
        self,
        match: Match,
        level: Level,
        seats: list[Seat],
        rated: bool,
        opponent: str,
        away_seconds: float,
    ) -> GameRecord:
        """A new game under a fresh id, stored and kept in memory."""
        record = GameRecord(
            secrets.token_urlsafe(9),
            match,
            level,
            (seats[0], seats[1]),
            rated,
            opponent,
            away_seconds,
        )
        self.save(record)
        self.remember(record)
        return record

    def join(self, record: GameRecord, invite: Any, player: Any = None) -> int:
        """Takes the open seat with its invitation; returns the seat. 409 if it is taken."""
        if not isinstance(invite, str):
            raise PlayError(400, "send the invitation's code: {'invite': CODE} (the #invite= part)")
        open_seats = [i for i, seat in enumerate(record.seats) if seat.kind == "open"]
        if not open_seats:
            raise PlayError(409, "this game's second seat is taken; ask for a new invitation")
        seat = record.seats[open_seats[0]]
        assert seat.invite is not None
        if not secrets.compare_digest(invite, seat.invite):
            raise PlayError(403, "this invitation is not this game's")
        if record.rated or player is not None:
            player = check_player_name(player)
            if record.rated and player == record.player:
                raise PlayError(
                    400, f"{player!r} created this rated game; join under your own name"
                )
        seat.token, seat.player, seat.invite = new_secret(), player, None
        seat.last_seen = self.clock()
        record.match.start_clock(self.clock())  # the clock starts once both seats are taken
        self.save(record)
        return open_seats[0]

    def start_level(self, record: GameRecord, seat: int, level: str | None) -> None:
        """The creator plays ``level`` instead of waiting for the invited person."""
        if seat != record.match.human:
            raise PlayError(403, "only the game's creator may choose a level for the open seat")
        if record.seats[1 - seat].kind != "open":
            raise PlayError(409, "the second seat is taken already")
        chosen = self.level(level)
        if record.rated:
            self.check_rated(chosen)
        record.seats[1 - seat].invite = None
        record.level, record.opponent = chosen, "level"
        record.match.people = (seat,)
        record.match.start_clock(self.clock())
        self.save(record)

    def rematch(self, record: GameRecord, seat: int) -> GameRecord:
        """The next game between the same two people, who swap sides (each keeps their token)."""
        if record.opponent != "person" or record.seats[1 - seat].kind != "person":
            raise PlayError(409, "a rematch is for a game between two people")
        if not record.match.over:
            raise PlayError(409, "the rematch opens when the game is over")
        if record.rematch is not None:
            return self.load(record.rematch)
        now = self.clock()
        human = 1 - record.match.human  # the creator swaps sides
        match = Match(self.game, human, record.match.turn_seconds, now=now, people=(0, 1))
        seats = [Seat(token=s.token, player=s.player, last_seen=now) for s in record.seats[::-1]]
        created = self._new(match, record.level, seats, record.rated, "person", record.away_seconds)
        record.rematch = created.id
        self.save(record)
        return created

    def load(self, game_id: str) -> GameRecord:
        """The game with this id, from memory or from the database; 404 if there is none."""
        return self.cached(game_id) or self.remember(self.read(game_id))

    def cached(self, game_id: str) -> GameRecord | None:
        """The game if it is in memory (it becomes the most recently used), else None."""
        record = self._cache.get(game_id)
        if record is not None:
            self._cache.move_to_end(game_id)
        return record

    def read(self, game_id: str) -> GameRecord:
        """The game as stored, not kept in memory (``remember`` keeps it); 404 if there is none.
        Touches no shared state, so it may run without the web's lock held."""
        stored = self.db.load_game(game_id)
        if stored is None or stored[1].get("key") != self.key:
            raise PlayError(404, f"no game {game_id!r} of {self.key} here; start a new game")
        token, data = stored
        # a level this server does not offer still shows the game; play stops (``playable``)
        level = self.levels.get(data["level"]) or Level(
            data["level"], "", rating=data.get("rating")
        )
        return GameRecord.from_data(game_id, token, data, self.game, level, self.clock())

    def remember(self, record: GameRecord) -> GameRecord:
        """Keeps ``record`` in memory, dropping the least recently used games beyond
        ``cache_size`` (never one a request or a worker holds); returns the game's copy in
        memory, the one already there if another read of it got there first (a second copy's
        saves would overwrite the first's moves)."""
        kept = self._cache.setdefault(record.id, record)
        self._cache.move_to_end(record.id)
        while len(self._cache) > self.cache_size:
            oldest = next(iter(self._cache))
            if self._cache[oldest].busy:  # a request or a worker still holds it: keep it
                self._cache.move_to_end(oldest)
                break
            self._cache.popitem(last=False)
        return kept

    def games(self) -> list[GameRecord]:
        """The games in memory (the web holds its cache lock around this)."""
        return list(self._cache.values())

    def preload(self) -> int:
        """Reads the most recently changed games (up to ``cache_size``) into memory, so that
        after a restart the pages reconnecting to them find them there; the count read."""
        count = 0
        for game_id in reversed(self.db.recent_games(self.cache_size)):
            try:
                self.remember(self.read(game_id))
            except PlayError:  # another game type's row in the same file
                continue
            count += 1
        return count

    def save(self, record: GameRecord) -> None:
        """Stores the game (rating it once, when a rated game has just ended)."""
        match = record.match
        record.version += 1
        data = {"key": self.key, **record.to_data(self.game)}
        result = None
        if record.rated and match.over and record.rating_changes is None:
            result = record.rated_result(self.key)
        changes = self.db.save_game(record.id, record.token, data, self.clock(), result)
        if changes is not None:
            record.rating_changes = changes

    def seat_of(self, record: GameRecord, token: Any) -> int:
        """The seat whose token this is; 403 for anyone else (watchers included)."""
        if isinstance(token, str):
            for index, seat in enumerate(record.seats):
                if seat.token is not None and secrets.compare_digest(token, seat.token):
                    return index
        raise PlayError(403, "only the holder of this game's play link may move or resign")

    def check_token(self, record: GameRecord, token: Any) -> int:
        """``seat_of``, and the person is there now (presence)."""
        seat = self.seat_of(record, token)
        record.seats[seat].last_seen = self.clock()
        return seat

    def away_left(self, record: GameRecord) -> float | None:
        """Seconds until the computer takes over the person to move (0: it has), None when it
        will not while nothing changes: not a person's turn, a present connection, a game
        against a level, or the other person gone by then (the computer plays a seat only while
        the other person is there: a game whose people are both away waits for one of them)."""
        match = record.match
        if record.opponent != "person" or match.over or match.to_move is None:
            return None
        mover, other = record.seats[match.to_move], record.seats[1 - match.to_move]
        if other.kind != "person":
            return None  # nobody to play against yet
        now = self.clock()
        left = mover.away_in(now, record.away_seconds)
        other_left = other.away_in(now, record.away_seconds)
        if left is None or (other_left is not None and other_left <= left):
            return None
        return left

    def computer_to_move(self, record: GameRecord) -> bool:
        """Whether the level moves now: its own seat's turn, or an away person's."""
        match = record.match
        if match.over or not self.playable(record) or match.to_move is None:
            return False
        if record.seats[match.to_move].kind == "level":
            return True
        return self.away_left(record) == 0.0

    def due_in(self, record: GameRecord) -> float | None:
        """Seconds until the server acts on the game unasked (0: now): the mover's clock runs
        out, or the computer is to move (an away person's seat included) and is not thinking
        yet; None when nothing is coming while nothing changes."""
        waits = [record.match.seconds_left(self.clock())]
        if not record.thinking:
            waits.append(0.0 if self.computer_to_move(record) else self.away_left(record))
        return min((wait for wait in waits if wait is not None), default=None)

    def refresh_clock(self, record: GameRecord) -> bool:
        """Ends the game on time if the mover's deadline passed (also when nobody watched);
        whether it just did."""
        ended = record.match.check_clock(self.clock())
        if ended:
            self.save(record)
        return ended

    def human_move(self, record: GameRecord, action: int, seat: int | None = None) -> None:
        """Plays the (already validated) move of the person at ``seat`` (default: the creator);
        a late move loses on time instead."""
        self.refresh_clock(record)
        match = record.match
        seat = match.human if seat is None else seat
        if match.over:
            raise PlayError(409, f"the game is over: {match.result_text()}")
        if record.opponent == "level" and not self.playable(record):
            raise PlayError(
                409,
                f"this game is against level {record.level.name!r}, which this server does not "
                f"offer (it offers {list(self.levels)}); start the server with that level",
            )
        if record.seats[1 - seat].kind == "open":
            raise PlayError(409, "the invited person has not joined yet (or start a level)")
        if match.to_move != seat:
            raise PlayError(
                409,
                "it is the agent's turn, not yours"
                if record.opponent == "level"
                else "it is the other player's turn, not yours",
            )
        match.play(action, self.clock())
        self.save(record)

    def resign(self, record: GameRecord, seat: int | None = None) -> None:
        self.refresh_clock(record)
        if record.match.over:
            raise PlayError(409, "the game is already over")
        record.match.resign(seat)
        self.save(record)

    def playable(self, record: GameRecord) -> bool:
        """Whether this server offers the game's level (a restart may offer other levels)."""
        return self.levels.get(record.level.name) is record.level

    def think(self, record: GameRecord, state: np.ndarray, ply: int) -> Decision:
        """The level's move in ``state`` (a copy): the slow part, needing no lock on the game."""
        level = record.level
        self.ponderer.stop()  # the move gets the cores
        with level.lock:  # an agent may keep search trees: one position at a time
            return decide(level.get_agent(), self.game, state, ply, level.rng)

    def analyse_position(self, record: GameRecord, state: np.ndarray) -> dict[str, Any]:
        """The level's policy (one share per action) and value for the mover, for the overlay."""
        found = record.level.analyse(self.game, state)
        assert found is not None  # waited for the level
        return found

    def agent_plays(self, record: GameRecord, ply: int, decision: Decision) -> bool:
        """Plays a decision made at ``ply`` unless the game moved on meanwhile (e.g. a resign,
        or the away person came back)."""
        match = record.match
        if len(match.actions) != ply or not self.computer_to_move(record):
            return False
        record.reviews[ply] = decision.review()
        if record.seats[ply % 2].kind == "person":
            record.computer_moves.append(ply)
        match.play(decision.action, self.clock())
        self.save(record)
        if not match.over and not self.computer_to_move(record):  # a person's turn: ponder it
            self.ponderer.start(record.level.get_agent(), self.game, match.state)
        return True

    def agent_move(self, record: GameRecord) -> int:
        """Thinks and plays in one go (the terminal); returns the move."""
        ply = len(record.match.actions)
        decision = self.think(record, record.match.state.copy(), ply)
        self.agent_plays(record, ply, decision)
        return decision.action

    # ---- after the game -------------------------------------------------------------------

    def player(self, name: str) -> dict[str, Any]:
        found = self.db.player(self.key, check_player_name(name))
        if found is None:
            raise PlayError(404, f"no rated games of {self.key} by {name!r} yet")
        return {**found, "game": self.key}

    def leaderboard(self) -> dict[str, Any]:
        return {"game": self.key, "players": self.db.leaderboard(self.key)}


def load_service_game(db: Database, game_id: str) -> Game:
    """The game a stored game was played in (``scripts/play.py resume=ID`` rebuilds it)."""
    stored = db.load_game(game_id)
    if stored is None:
        raise ValueError(f"no saved game {game_id!r} in {db.path}")
    data = stored[1]
    return make_game(data["game"], **data.get("options", {}))
