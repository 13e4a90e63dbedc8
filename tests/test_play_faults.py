"""Faults the play site survives: the server SIGKILLed mid-game, a damaged or a locked database.

The kill tests run the real server (``scripts/play.py ui=web``) as a subprocess, play games
against it from threads (an agent thinking, clocks running, rated games ending, a clock running
out), kill it at seeded random moments and restart it on the same file; then every answer a
player got is checked against what the database holds.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import select
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections import defaultdict
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from test_play_web import ApiClient, SeededRandomAgent, Server

from ultimate_rl.games import make
from ultimate_rl.play import store
from ultimate_rl.play.levels import Level
from ultimate_rl.play.service import PlayService
from ultimate_rl.play.session import Match
from ultimate_rl.play.store import INITIAL_RATING, Database, UnusableDatabase

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
GAME = make("uttt")
DOWN = (OSError, http.client.HTTPException)  # what a call to a killed or starting server raises


def free_port() -> int:
    with closing(socket.socket()) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def play_command(db: Path, *settings: str) -> list[str]:
    return [sys.executable, str(ROOT / "scripts/play.py"), "ui=web", f"db={db}", *settings]


class PlayProcess:
    """The real server on ``db`` and ``port`` in its own process, so it can be killed for real."""

    def __init__(self, db: Path, port: int, log: Path) -> None:
        self.log = log.open("a")
        self.proc = subprocess.Popen(
            play_command(db, "game=uttt", f"port={port}", "seed=0"),
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            cwd=ROOT,
            env=ENV,
        )
        ready, _, _ = select.select([self.proc.stdout], [], [], 120)
        line = self.proc.stdout.readline() if ready else ""
        if "Play at http://" not in line:
            self.kill()
            raise AssertionError(f"the server did not start: {line!r}\n{log.read_text()}")
        self.url = line.split()[2].rstrip("/")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.proc.stdout.close()
        self.log.close()


@dataclass
class Plan:
    """What one player does game after game."""

    body: dict[str, Any]  # the new-game request
    resign_after: int | None = None  # the person's moves before resigning
    stall_after: int | None = None  # ...before letting the clock run out
    wait: bool = True  # whether a move's answer waits for the agent's reply


PLANS = [
    Plan({"side": "x", "level": "uct-10000"}),  # the agent thinks a while
    Plan({"side": "o", "level": "uct-1000", "turn_seconds": 60}, wait=False),  # a clock runs
    Plan({"side": "x", "level": "uct-1000", "rated": True, "player": "ann"}, resign_after=3),
    Plan({"side": "x", "level": "uct-1000", "rated": True, "player": "cara"}),  # to the end
    Plan(  # loses on time, sometimes while the server is down
        {"side": "o", "level": "uct-1000", "rated": True, "player": "bob", "turn_seconds": 1.5},
        stall_after=1,
    ),
]


@dataclass
class Player:
    """A person's browser: plays its plan until told to stop, resending what a kill cut off."""

    url: str
    plan: Plan
    seed: int
    stop: threading.Event  # start no new game
    ended: threading.Event  # the server is gone for good: resend nothing
    answers: dict[str, list[list[int]]] = field(default_factory=lambda: defaultdict(list))
    resent_moves: list[tuple[str, int, int]] = field(default_factory=list)  # game, ply, action
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.api = ApiClient(self.url)  # the server comes back on the same port
        self.rng = random.Random(self.seed)

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, dict[str, Any], bool]:
        """The answer (resent until the server is back), and whether it had to be resent."""
        resent = False
        while True:
            try:
                status, answer = self.api.call(method, path, body)
                break
            except DOWN:
                if self.ended.is_set():
                    raise
                resent = True
                time.sleep(0.05)
        if 200 <= status < 300 and "actions" in answer:
            self.answers[answer["id"]].append(answer["actions"])
        elif status >= 500:
            self.errors.append(f"{method} {path}: {status} {answer}")
        return status, answer, resent

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                self.play_one()
        except Exception as err:  # reported by the test, not lost in the thread
            self.errors.append(repr(err))

    def play_one(self) -> None:
        status, game, _ = self.call("POST", "/api/games", {**self.plan.body, "wait": True})
        if status != 201:
            self.errors.append(f"new game: {status} {game}")
            return
        path, moves = f"/api/games/{game['id']}", 0
        while not game["over"] and not self.stop.is_set():
            if self.plan.resign_after is not None and moves >= self.plan.resign_after:
                self.call("POST", path + "/resign", {})  # a resent one may find it over: 409
                game = self.call("GET", path)[1]
            elif not game["human_to_move"] or moves == self.plan.stall_after:
                game = self.call("GET", f"{path}?after={game['version']}")[1]  # agent or clock
            else:
                game, moves = self.move(path, game, moves)
            if "over" not in game:  # the game itself is gone
                self.errors.append(f"{path}: {game}")
                return

    def move(self, path: str, game: dict[str, Any], moves: int) -> tuple[dict[str, Any], int]:
        ply = len(game["actions"])
        legal = GAME.legal_actions(GAME.apply_sequence(game["actions"]))
        action = int(self.rng.choice(legal))
        body = {"action": action, "ply": ply, "wait": self.plan.wait}
        status, answer, resent = self.call("POST", path + "/move", body)
        if status == 200:
            return answer, moves + 1
        if status == 409 and resent and "moved on" in answer["error"]:
            self.resent_moves.append((game["id"], ply, action))  # it went in before the kill
            moves += 1
        elif status != 409:  # 409: e.g. the clock ran out meanwhile
            self.errors.append(f"move {body}: {status} {answer}")
        return self.call("GET", path)[1], moves


def read_database(db: Path) -> tuple[dict[str, dict[str, Any]], dict[str, tuple[Any, ...]]]:
    """Every stored game's data by id, and every player's row by name (the server is dead)."""
    with closing(sqlite3.connect(db)) as conn:
        games = {gid: json.loads(data) for gid, data in conn.execute("SELECT id, data FROM games")}
        rows = conn.execute("SELECT name, rating, games, wins, draws, losses FROM players")
        return games, {row[0]: row[1:] for row in rows}


def check_games(players: list[Player], stored: dict[str, dict[str, Any]]) -> None:
    """Every answered move is stored once, in order; nothing the person did not send is there."""
    for player in players:
        assert not player.errors, player.errors
        for gid, answered in player.answers.items():
            assert gid in stored, f"game {gid} was answered 201, then lost"
            match = stored[gid]["match"]
            actions = match["actions"]
            GAME.apply_sequence(actions)  # a move applied twice would be illegal here
            for seen in answered:
                assert actions[: len(seen)] == seen, (gid, seen, actions)
            later = range(len(answered[-1]), len(actions))
            assert len(later) <= 1, (gid, answered[-1], actions)  # at most the agent's reply
            assert all(ply % 2 != match["human"] for ply in later), (gid, answered[-1], actions)
        for gid, ply, action in player.resent_moves:
            assert stored[gid]["match"]["actions"][ply] == action


def check_ratings(stored: dict[str, dict[str, Any]], rows: dict[str, tuple[Any, ...]]) -> None:
    """Each finished rated game is rated exactly once, and only finished ones are."""
    results: dict[str, list[str]] = defaultdict(list)
    deltas: dict[str, float] = defaultdict(float)
    for data in stored.values():
        match = Match.from_record(GAME, data["match"])
        if not (data["rated"] and match.over):
            assert data.get("rating_changes") is None, data
            continue
        player = data["seats"][match.human]["player"]
        results[player].append(match.human_result())
        (change,) = data["rating_changes"]
        assert change["player"] == player
        deltas[player] += change["after"] - change["before"]
    assert set(results) == set(rows)
    for name, outcomes in results.items():
        rating, games, wins, draws, losses = rows[name]
        counts = [outcomes.count(key) for key in ("win", "draw", "loss")]
        assert (games, wins, draws, losses) == (len(outcomes), *counts), name
        # the rounded changes chain (each one starts where the last ended): their sum is exact
        assert rating - INITIAL_RATING == pytest.approx(deltas[name], abs=0.06), name


def kill_and_restart(tmp_path: Path, kills: int, seed: int) -> dict[str, Any]:
    """Plays ``PLANS`` against the real server, SIGKILLed ``kills`` times; checks all answers."""
    db, port, log = tmp_path / "play.sqlite3", free_port(), tmp_path / "server.log"
    rng, stop, ended = random.Random(seed), threading.Event(), threading.Event()
    server = PlayProcess(db, port, log)
    players = [
        Player(server.url, plan, seed * 100 + i, stop, ended) for i, plan in enumerate(PLANS)
    ]
    threads = [threading.Thread(target=player.run, daemon=True) for player in players]
    try:
        for thread in threads:
            thread.start()
        for _ in range(kills):
            time.sleep(rng.uniform(0.1, 1.0))
            server.kill()
            server = PlayProcess(db, port, log)
        time.sleep(0.5)
        stop.set()
        for thread in threads:
            thread.join(timeout=120)
        assert not any(thread.is_alive() for thread in threads), "a player is stuck"
        board = ApiClient(server.url).call("GET", "/api/leaderboard")[1]["players"]
    finally:
        stop.set()
        ended.set()
        server.kill()
    assert "Traceback" not in log.read_text(), log.read_text()
    stored, rows = read_database(db)
    check_games(players, stored)
    check_ratings(stored, rows)
    assert {p["name"]: p["games"] for p in board} == {name: row[1] for name, row in rows.items()}
    reasons = [Match.from_record(GAME, data["match"]).reason() for data in stored.values()]
    return {"games": len(stored), "rated": sum(row[1] for row in rows.values()), "ends": reasons}


def test_the_server_killed_mid_game_loses_nothing_and_doubles_nothing(tmp_path: Path) -> None:
    seen = kill_and_restart(tmp_path, kills=5, seed=1)
    assert seen["rated"] >= 2 and {"resign", "time"} <= set(seen["ends"]), seen


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 3])
def test_the_server_killed_thirty_times_loses_nothing(tmp_path: Path, seed: int) -> None:
    seen = kill_and_restart(tmp_path, kills=30, seed=seed)
    assert seen["rated"] >= 10 and {"resign", "time", "line"} <= set(seen["ends"]), seen


def test_a_watched_game_pushed_out_of_memory_keeps_every_move(tmp_path: Path) -> None:
    """Bug: a long poll held the game's old copy after the memory cache dropped it; the move
    played meanwhile went to a second copy, and the old one, ended on its old clock, was saved
    over it (the acknowledged move lost; in a rated game, a rating for a game not lost)."""
    srv = Server("tictactoe", SeededRandomAgent(1), db=tmp_path / "play.sqlite3", cache_size=1)
    try:
        _, game = srv.call("POST", "/api/games", {"side": "x", "turn_seconds": 1})
        path, watched = f"/api/games/{game['id']}", {}
        poll = f"{path}?after={game['version']}"
        watcher = threading.Thread(target=lambda: watched.update(srv.call("GET", poll)[1]))
        watcher.start()
        time.sleep(0.2)  # the watcher waits for the game's next change
        srv.call("POST", "/api/games", {"side": "x"})  # another game: the cache drops this one
        status, moved = srv.call("POST", f"{path}/move", {"action": 4})
        assert status == 200 and len(moved["actions"]) == 2
        watcher.join(20)
        assert (
            watched["actions"] and moved["actions"][: len(watched["actions"])] == watched["actions"]
        )
        time.sleep(1.2)  # the old deadline has passed
        stored = srv.database.load_game(game["id"])[1]["match"]
        assert stored["actions"][:2] == moved["actions"], stored
    finally:
        srv.close()


# ---- a damaged or a locked database --------------------------------------------------------


def real_database(path: Path) -> bytes:
    """A play database with a few finished and unfinished games, closed; its bytes."""
    db = Database(path)
    level = Level("random", "random", seed=0, rating=600.0)
    service = PlayService(make("tictactoe"), [level], db)
    for index in range(40):
        record = service.create(0, rated=index % 2 == 0, player="ann")
        service.human_move(record, 4)
        if index % 2 == 0:
            service.resign(record)
    db.close()
    return path.read_bytes()


def damage(path: Path, how: str) -> bytes:
    data = real_database(path)
    damaged = {
        "random bytes": random.Random(0).randbytes(len(data)),
        "truncated": data[: len(data) // 2],
        "header": bytes(16) + data[16:],
        "a page": data[:4096] + random.Random(1).randbytes(4096) + data[8192:],
    }[how]
    path.write_bytes(damaged)
    return damaged


@pytest.mark.parametrize("how", ["random bytes", "truncated", "header", "a page"])
def test_a_damaged_database_is_refused_and_left_as_it_is(tmp_path: Path, how: str) -> None:
    path = tmp_path / "play.sqlite3"
    damaged = damage(path, how)
    with pytest.raises(UnusableDatabase) as refused:
        Database(path)
    message = str(refused.value)
    assert "\n" not in message and str(path) in message and "damaged" in message
    assert "move it aside" in message
    assert path.read_bytes() == damaged
    assert sorted(p.name for p in tmp_path.iterdir()) == ["play.sqlite3"]


def test_a_locked_database_is_refused_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "LOCK_WAIT_SECONDS", 0.3)
    path = tmp_path / "play.sqlite3"
    real_database(path)
    with closing(sqlite3.connect(path, isolation_level=None)) as other:
        other.execute("BEGIN EXCLUSIVE")  # another process in the middle of writing
        start = time.monotonic()
        with pytest.raises(UnusableDatabase, match=r"in use by another process.*stop that one"):
            Database(path)
        assert time.monotonic() - start < 2
        other.execute("ROLLBACK")
    server = Database(path, exclusive=True)  # a server keeps the file to itself...
    try:
        with pytest.raises(UnusableDatabase, match="in use"):
            Database(path)  # ...so a terminal game or a second server is refused
    finally:
        server.close()
    Database(path).close()  # and once it has stopped, the file opens again


@pytest.mark.parametrize("fault", ["damaged", "locked"])
def test_the_play_script_refuses_a_damaged_or_locked_database_in_one_line(
    tmp_path: Path, fault: str
) -> None:
    path = tmp_path / "play.sqlite3"
    if fault == "damaged":
        before, holder = damage(path, "header"), None
    else:  # another server serving this file
        before, holder = real_database(path), Database(path, exclusive=True)
    try:
        result = subprocess.run(
            play_command(path, "game=tictactoe", "port=0"),
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=ENV,
            timeout=120,
        )
    finally:
        if holder is not None:
            holder.close()
    assert result.returncode == 1 and "Play at" not in result.stdout
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    line = result.stderr.strip()
    assert line.startswith(f"play: the play database {path} is "), line
    if fault == "damaged":
        assert "damaged (file is not a database)" in line and f"mv {path} {path}.damaged" in line
    else:
        assert "in use by another process" in line and "stop that one first" in line
    assert path.read_bytes() == before
