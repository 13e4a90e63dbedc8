"""The play site's core, shared by the terminal and the browser: games, levels, clock, ratings.

``PlayService`` creates, stores and reloads games (``GameRecord``: a ``Match`` with its id, secret
play token, level and rating settings), applies the person's moves, lets the level's agent think
and move, ends games on time, rates finished rated games and reviews them. It does no locking
of its own around a game: the web server holds a game's lock around each call except ``think``
(so other requests go on while an agent thinks); the terminal is single-threaded.
"""

from __future__ import annotations

import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ultimate_rl.games import make as make_game
from ultimate_rl.games.base import Game
from ultimate_rl.play.levels import Decision, Level, analysis_parts, assess, decide
from ultimate_rl.play.session import Match
from ultimate_rl.play.store import Database

PLAYER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\- ]{0,31}")


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


@dataclass
class GameRecord:
    """A stored game: the match and everything around it the site needs."""

    id: str
    token: str
    match: Match
    level: Level
    rated: bool = False
    player: str | None = None
    reviews: dict[int, dict[str, Any]] = field(default_factory=dict)  # ply -> value, best move
    rating_change: dict[str, Any] | None = None
    version: int = 0  # bumped on every change, so watchers wait for the next one
    thinking: bool = False  # the agent is choosing a move (web: in a worker thread)
    users: int = 0  # requests holding the record (web): it stays in memory meanwhile

    @property
    def busy(self) -> bool:
        """Whether someone holds the record: dropping it from memory would make a second copy."""
        return self.thinking or self.users > 0


class PlayService:
    """Games against the levels of one game, kept in ``db``; ``clock`` gives the time (seconds)."""

    def __init__(
        self,
        game: Game,
        levels: list[Level],
        db: Database,
        *,
        default_level: str | None = None,
        clock: Callable[[], float] = time.time,
        cache_size: int = 256,
    ) -> None:
        if not levels:
            raise ValueError("the play site needs at least one level")
        self.game = game
        self.levels = {level.name: level for level in levels}
        self.default_level = default_level or levels[-1].name
        self.level(self.default_level)
        self.db = db
        self.clock = clock
        self.key = game.rating_key
        self.cache_size = max(1, cache_size)
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
    ) -> GameRecord:
        chosen = self.level(level)
        if rated:
            self.check_rated(chosen)
        if rated or player is not None:
            player = check_player_name(player)
        match = Match(self.game, human, turn_seconds, now=self.clock())
        record = GameRecord(
            secrets.token_urlsafe(9), secrets.token_urlsafe(18), match, chosen, rated, player
        )
        self.save(record)
        self._remember(record)
        return record

    def load(self, game_id: str) -> GameRecord:
        """The game with this id, from memory or from the database; 404 if there is none."""
        if game_id in self._cache:
            self._cache.move_to_end(game_id)
            return self._cache[game_id]
        stored = self.db.load_game(game_id)
        if stored is None or stored[1].get("key") != self.key:
            raise PlayError(404, f"no game {game_id!r} of {self.key} here; start a new game")
        token, data = stored
        # a level this server does not offer still shows the game; play stops (``playable``)
        level = self.levels.get(data["level"]) or Level(
            data["level"], "", rating=data.get("rating")
        )
        record = GameRecord(
            game_id,
            token,
            Match.from_record(self.game, data["match"]),
            level,
            data["rated"],
            data.get("player"),
            {int(ply): review for ply, review in data.get("reviews", {}).items()},
            data.get("rating_change"),
            data.get("version", 0),  # versions keep rising across restarts: pages compare them
        )
        self._remember(record)
        return record

    def _remember(self, record: GameRecord) -> None:
        self._cache[record.id] = record
        while len(self._cache) > self.cache_size:
            oldest = next(iter(self._cache))
            if self._cache[oldest].busy:  # a request or a worker still holds it: keep it
                self._cache.move_to_end(oldest)
                break
            self._cache.popitem(last=False)

    def save(self, record: GameRecord) -> None:
        """Stores the game (rating it once, when a rated game has just ended)."""
        match = record.match
        record.version += 1
        data = {
            "version": record.version,
            "key": self.key,
            "game": self.game.name,
            "options": self.game.options,
            "level": record.level.name,
            "rating": record.level.rating,
            "rated": record.rated,
            "player": record.player,
            "match": match.to_record(),
            "reviews": record.reviews,
            "rating_change": record.rating_change,
        }
        rating = None
        if record.rated and match.over and record.rating_change is None:
            rating = (self.key, record.player, record.level.rating, match.human_result())
        change = self.db.save_game(record.id, record.token, data, self.clock(), rating)
        if change is not None:
            record.rating_change = change

    def check_token(self, record: GameRecord, token: Any) -> None:
        if not isinstance(token, str) or not secrets.compare_digest(token, record.token):
            raise PlayError(403, "only the holder of this game's play link may move or resign")

    def refresh_clock(self, record: GameRecord) -> None:
        """Ends the game on time if the person's deadline passed (also when nobody watched)."""
        if record.match.check_clock(self.clock()):
            self.save(record)

    def human_move(self, record: GameRecord, action: int) -> None:
        """Plays the person's (already validated) move; a late move loses on time instead."""
        self.refresh_clock(record)
        match = record.match
        if match.over:
            raise PlayError(409, f"the game is over: {match.result_text()}")
        if not self.playable(record):
            raise PlayError(
                409,
                f"this game is against level {record.level.name!r}, which this server does not "
                f"offer (it offers {list(self.levels)}); start the server with that level",
            )
        if not match.human_to_move:
            raise PlayError(409, "it is the agent's turn, not yours")
        match.play(action, self.clock())
        self.save(record)

    def resign(self, record: GameRecord) -> None:
        self.refresh_clock(record)
        if record.match.over:
            raise PlayError(409, "the game is already over")
        record.match.resign()
        self.save(record)

    def playable(self, record: GameRecord) -> bool:
        """Whether this server offers the game's level (a restart may offer other levels)."""
        return self.levels.get(record.level.name) is record.level

    def agent_to_move(self, record: GameRecord) -> bool:
        return not record.match.over and not record.match.human_to_move and self.playable(record)

    def think(self, record: GameRecord, state: np.ndarray, ply: int) -> Decision:
        """The level's move in ``state`` (a copy): the slow part, needing no lock on the game."""
        level = record.level
        with level.lock:  # an agent may keep search trees: one position at a time
            return decide(level.get_agent(), self.game, state, ply, level.rng)

    def analyse_position(self, record: GameRecord, state: np.ndarray) -> dict[str, Any]:
        """The level's policy (one share per action) and value for the mover, for the overlay."""
        level = record.level
        with level.lock:
            analysis = level.get_agent().analyse(self.game, state)
        policy, value = analysis_parts(analysis, self.game, state)
        return {
            "policy": policy.round(4).tolist(),
            "value": None if value is None else round(value, 4),
        }

    def agent_plays(self, record: GameRecord, ply: int, decision: Decision) -> bool:
        """Plays a decision made at ``ply`` unless the game moved on meanwhile (e.g. a resign)."""
        match = record.match
        if match.over or len(match.actions) != ply or match.human_to_move:
            return False
        record.reviews[ply] = decision.review()
        match.play(decision.action, self.clock())
        self.save(record)
        return True

    def agent_move(self, record: GameRecord) -> int:
        """Thinks and plays in one go (the terminal); returns the move."""
        ply = len(record.match.actions)
        decision = self.think(record, record.match.state.copy(), ply)
        self.agent_plays(record, ply, decision)
        return decision.action

    # ---- after the game -------------------------------------------------------------------

    def review_missing(self, record: GameRecord) -> list[int]:
        """Plies of a finished game without the agent's value yet (the person's moves, and the
        agent's own after the opening, where it chose without analysing)."""
        if not record.match.over:
            raise PlayError(409, "the review opens when the game is over")
        plies = range(len(record.match.actions))
        return [ply for ply in plies if "value" not in record.reviews.get(ply, {})]

    def analyse_plies(self, record: GameRecord, plies: list[int]) -> dict[int, dict[str, Any]]:
        """The level's value and preferred move before each of ``plies`` (no lock on the game)."""
        actions = list(record.match.actions)
        level = record.level
        found = {}
        for ply in plies:
            state = self.game.apply_sequence(actions[:ply])
            with level.lock:
                found[ply] = assess(level.get_agent(), self.game, state).review()
        return found

    def add_reviews(self, record: GameRecord, found: dict[int, dict[str, Any]]) -> None:
        """Adds analysed plies; a move the agent chose stays its preferred move at that ply."""
        for ply, review in found.items():
            record.reviews[ply] = {**review, **record.reviews.get(ply, {})}
        if found:
            self.save(record)

    def review(self, record: GameRecord) -> dict[str, Any]:
        """Each move of the finished game with the agent's value (for the person) and choice."""
        match = record.match
        plies = []
        for ply, action in enumerate(match.actions):
            review = record.reviews.get(ply, {})
            mover = ply % 2
            value = review.get("value")
            plies.append(
                {
                    "ply": ply,
                    "by": "you" if mover == match.human else "agent",
                    "move": action,
                    "move_text": self.game.move_text(action),
                    "best": review.get("best"),
                    "best_text": (
                        None if review.get("best") is None else self.game.move_text(review["best"])
                    ),
                    "value_for_you": (
                        None
                        if value is None
                        else round(value if mover == match.human else -value, 3)
                    ),
                }
            )
        return {"id": record.id, "level": record.level.name, "plies": plies}

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
