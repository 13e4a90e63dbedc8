"""Games, players and ratings in one SQLite file (the standard library's ``sqlite3``).

A game is one row holding its settings and move list as JSON, so a restarted server (or
``scripts/play.py resume=ID``) rebuilds it exactly. A player is a name with an Elo per game (the
ratings of uttt and 4x4 tic-tac-toe mean different things). One connection serves every thread
behind one lock: SQLite allows one writer at a time anyway, and each call is a few milliseconds.

What survives what:

- A process killed at any moment (SIGKILL included): every change is one transaction, committed
  before the caller answers anyone, so a move someone was told about is in the file, and a
  half-made change is rolled back on the next open. A finished rated game is saved and its
  rating change applied in the same transaction (and the service rates only a game whose stored
  record has no change yet), so no crash can lose or double a rating update.
- A damaged file, or one that is not a database: ``Database`` checks it when it opens it (a full
  read, ``PRAGMA quick_check``) and refuses it with ``UnusableDatabase``; it never writes to it,
  replaces it or deletes it.
- A file another process holds: refused at open within ``LOCK_WAIT_SECONDS``, not when the first
  request comes. The web server opens with ``exclusive=True`` and keeps the file to itself, so a
  second server (or a terminal game) on the same file is refused rather than serving its own
  stale copies of the same games.
- Time without a server: a serving server writes a heartbeat every second and at a clean stop
  (``beat``); the next start gives every running turn clock back the time since (``give_back``),
  so nobody loses on time for seconds in which no server ran, whether it crashed or stopped.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

INITIAL_RATING = 1000.0  # a new player starts level with UCT-1000, the ladder's anchor
K_FACTOR = 32.0
_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY, token TEXT NOT NULL, data TEXT NOT NULL, updated REAL NOT NULL,
    deadline REAL);
CREATE INDEX IF NOT EXISTS games_deadline ON games (deadline);
CREATE INDEX IF NOT EXISTS games_updated ON games (updated);
CREATE TABLE IF NOT EXISTS players (
    game TEXT NOT NULL, name TEXT NOT NULL, rating REAL NOT NULL,
    games INTEGER NOT NULL DEFAULT 0, wins INTEGER NOT NULL DEFAULT 0,
    draws INTEGER NOT NULL DEFAULT 0, losses INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (game, name));
CREATE TABLE IF NOT EXISTS server (key TEXT PRIMARY KEY, value REAL NOT NULL);
"""
SCORES = {"win": 1.0, "draw": 0.5, "loss": 0.0}
LOCK_WAIT_SECONDS = 1.0  # how long opening waits for another process's lock before refusing
BUSY_SECONDS = 5.0  # how long a query waits for another process's lock (non-exclusive use)
_BUSY = {"SQLITE_BUSY", "SQLITE_LOCKED"}
_DAMAGED = {"SQLITE_CORRUPT", "SQLITE_NOTADB"}


class UnusableDatabase(OSError):
    """The play database cannot be used as it is: one line naming the file, the problem and
    the fix (the command line prints it as it is)."""


class _Damaged(sqlite3.DatabaseError):
    """``PRAGMA quick_check`` found damage that SQLite itself did not stop at."""


def default_db_path() -> Path:
    """``$XDG_DATA_HOME/ultimate_rl/play.sqlite3`` (``~/.local/share/...`` by default)."""
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "ultimate_rl" / "play.sqlite3"


def elo_update(rating: float, opponent: float, score: float, k: float = K_FACTOR) -> float:
    """The standard Elo update: ``rating + k * (score - expected score against opponent)``."""
    expected = 1.0 / (1.0 + 10.0 ** ((opponent - rating) / 400.0))
    return rating + k * (score - expected)


@dataclass(frozen=True)
class RatedResult:
    """A finished rated game to rate: one person against a level, or two people."""

    key: str
    """The rating pool (the game and its board size, ``Game.rating_key``)."""
    players: tuple[str, ...]
    """The person (against a level), or the two people (seat 0's, then seat 1's)."""
    outcome: str
    """``players[0]``'s result: ``win``, ``draw`` or ``loss``."""
    level_rating: float | None = None
    """The level's Elo, with one player."""


class Database:
    """The play site's SQLite file (``":memory:"`` for a session that keeps nothing)."""

    def __init__(self, path: str | os.PathLike, *, exclusive: bool = False) -> None:
        """Opens and checks the file now (a damaged or locked one fails here, before any game
        is served); ``exclusive`` holds it until ``close`` so no other process can use it."""
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.path = str(path)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(
                self.path, check_same_thread=False, isolation_level=None, timeout=LOCK_WAIT_SECONDS
            )
        except sqlite3.DatabaseError as err:
            raise _unusable(self.path, err) from None
        try:
            self._open(exclusive)
        except sqlite3.DatabaseError as err:
            self._db.close()
            raise _unusable(self.path, err) from None

    def _open(self, exclusive: bool) -> None:
        """Reads the whole file before writing to it: a damaged one is refused untouched."""
        if exclusive:
            self._db.execute("PRAGMA locking_mode=EXCLUSIVE")
        problems = [row[0] for row in self._db.execute("PRAGMA quick_check").fetchall()]
        if problems != ["ok"]:
            raise _Damaged(" ".join(" ".join(problems).split())[:200])
        self._db.execute("PRAGMA journal_mode=WAL")
        # WAL with NORMAL: a commit is in the file when it returns, so a killed server (SIGKILL
        # included) loses nothing it answered; it is not flushed to the disk at every commit, so a
        # power cut may lose the last moments. An fsync per move, on this VM's disk, stalled every
        # game's moves by hundreds of milliseconds now and then (the relays' p99 0.2-1.6 s)
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} COMMIT;")  # takes the write lock now
        self._db.execute(f"PRAGMA busy_timeout={int(BUSY_SECONDS * 1000)}")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def save_game(
        self,
        game_id: str,
        token: str,
        data: dict[str, Any],
        now: float,
        rating: RatedResult | None = None,
    ) -> list[dict[str, Any]] | None:
        """Stores a game (``data["match"]["deadline"]`` is indexed for ``expired_games``);
        ``rating`` also rates it, in the same transaction.

        Returns each player's rating change ``{"before", "after"}`` (in ``rating.players``'
        order) when one was applied; ``data["rating_changes"]`` stores them too.
        """
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                changes = self._rate(rating) if rating is not None else None
                if changes is not None:
                    data = {**data, "rating_changes": changes}
                self._db.execute(
                    "INSERT OR REPLACE INTO games (id, token, data, updated, deadline) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (game_id, token, json.dumps(data), now, data["match"].get("deadline")),
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return changes

    def _rate(self, result: RatedResult) -> list[dict[str, Any]]:
        """Both people are rated from their ratings before the game (each against the other's),
        a person against a level from the level's."""
        befores = [self._rating(result.key, name) for name in result.players]
        if len(befores) == 1:
            assert result.level_rating is not None, "a game against a level rates by its Elo"
            opponents = [result.level_rating]
        else:
            opponents = befores[::-1]
        score = SCORES[result.outcome]
        changes = []
        for i, (name, before) in enumerate(zip(result.players, befores, strict=True)):
            mine = score if i == 0 else 1.0 - score
            after = elo_update(before, opponents[i], mine)
            column = {1.0: "wins", 0.5: "draws", 0.0: "losses"}[mine]
            self._db.execute(
                f"INSERT INTO players (game, name, rating, games, {column}) "
                f"VALUES (?, ?, ?, 1, 1) ON CONFLICT (game, name) DO UPDATE SET "
                f"rating = excluded.rating, games = games + 1, {column} = {column} + 1",
                (result.key, name, after),
            )
            changes.append({"player": name, "before": round(before, 1), "after": round(after, 1)})
        return changes

    def _rating(self, key: str, name: str) -> float:
        row = self._db.execute(
            "SELECT rating FROM players WHERE game = ? AND name = ?", (key, name)
        ).fetchone()
        return row[0] if row else INITIAL_RATING

    def load_game(self, game_id: str) -> tuple[str, dict[str, Any]] | None:
        """The token and data of a stored game, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT token, data FROM games WHERE id = ?", (game_id,)
            ).fetchone()
        return None if row is None else (row[0], json.loads(row[1]))

    def _ids(self, query: str, *args: Any) -> list[str]:
        """The games ``SELECT id FROM games ...`` finds, in its order."""
        with self._lock:
            return [row[0] for row in self._db.execute(query, args).fetchall()]

    def recent_games(self, limit: int) -> list[str]:
        """Ids of the ``limit`` most recently saved games, the most recent first."""
        return self._ids("SELECT id FROM games ORDER BY updated DESC LIMIT ?", limit)

    def expired_games(self, now: float) -> list[str]:
        """Ids of games whose person's clock ran out without anyone reading them since."""
        return self._ids("SELECT id FROM games WHERE deadline IS NOT NULL AND deadline < ?", now)

    def deadlines(self) -> list[tuple[str, float]]:
        """Each game with a running turn clock, and when it runs out."""
        with self._lock:
            query = "SELECT id, deadline FROM games WHERE deadline IS NOT NULL"
            return [(row[0], row[1]) for row in self._db.execute(query).fetchall()]

    def beat(self, now: float) -> None:
        """The heartbeat: a server ran at ``now``."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO server (key, value) VALUES ('heartbeat', ?)", (now,)
            )

    def give_back(self, now: float) -> float:
        """A server starts at ``now``: every turn clock still running at the last heartbeat gets
        back the time since (none ran meanwhile), in one transaction; the seconds given back."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute("SELECT value FROM server WHERE key = 'heartbeat'")
                last = row.fetchone()
                down = max(0.0, now - last[0]) if last else 0.0
                if down:
                    self._db.execute(
                        "UPDATE games SET deadline = deadline + :down, data = json_set(data, "
                        "'$.match.deadline', deadline + :down) WHERE deadline > :last",
                        {"down": down, "last": last[0]},
                    )
                self._db.execute(
                    "INSERT OR REPLACE INTO server (key, value) VALUES ('heartbeat', ?)", (now,)
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return down

    def delete_game(self, game_id: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM games WHERE id = ?", (game_id,))

    def player(self, key: str, name: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT name, rating, games, wins, draws, losses FROM players "
                "WHERE game = ? AND name = ?",
                (key, name),
            ).fetchone()
        return None if row is None else _player_json(row)

    def leaderboard(self, key: str, limit: int = 50) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT name, rating, games, wins, draws, losses FROM players WHERE game = ? "
                "ORDER BY rating DESC, name LIMIT ?",
                (key, limit),
            ).fetchall()
        return [_player_json(row) for row in rows]


def _unusable(path: str, err: sqlite3.DatabaseError) -> UnusableDatabase:
    """The error for a file SQLite refused, with what to do about it."""
    name = getattr(err, "sqlite_errorname", None)
    if name in _BUSY:
        return UnusableDatabase(
            f"the play database {path} is in use by another process (another play server or "
            f"terminal game): stop that one first, or give this one its own file with db=..."
        )
    if name in _DAMAGED or isinstance(err, _Damaged):
        return UnusableDatabase(
            f"the play database {path} is damaged ({err}); it was left as it is: move it aside "
            f"(mv {path} {path}.damaged) to start a new one, or restore it from a backup"
        )
    return UnusableDatabase(f"cannot use {path} as the play database: {err}")


def _player_json(row: tuple[Any, ...]) -> dict[str, Any]:
    name, rating, games, wins, draws, losses = row
    return {
        "name": name,
        "rating": round(rating, 1),
        "games": games,
        "wins": wins,
        "draws": draws,
        "losses": losses,
    }
