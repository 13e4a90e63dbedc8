"""Turn clocks across a restart (issue 42): a person never loses on time for seconds in which no
server ran, whether the server stopped cleanly or was killed (SIGKILL)."""

from __future__ import annotations

import json
import select
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from test_play_faults import ENV, ROOT, free_port, play_command
from test_play_site import FakeClock
from test_play_web import ApiClient, SeededRandomAgent, Server

from ultimate_rl.play.store import Database


def test_the_database_gives_back_the_time_since_the_last_heartbeat(tmp_path: Path) -> None:
    db = Database(tmp_path / "play.sqlite3")
    try:
        assert db.give_back(50.0) == 0.0  # a new file: no server ran before
        for game_id, deadline in (("running", 130.0), ("ran-out", 90.0), ("untimed", None)):
            db.save_game(game_id, "t", {"match": {"deadline": deadline}}, 80.0)
        db.beat(100.0)  # the last heartbeat before a crash
        assert db.give_back(160.0) == 60.0
        deadlines = dict(db.deadlines())
        assert deadlines == {"running": 190.0, "ran-out": 90.0}  # ran out while a server ran
        assert db.load_game("running")[1]["match"]["deadline"] == 190.0  # the row's JSON too
        assert db.give_back(161.0) == 1.0 and dict(db.deadlines())["running"] == 191.0
    finally:
        db.close()


def _thirty_seconds(srv: Server) -> str:
    status, game = srv.call("POST", "/api/games", {"side": "x", "turn_seconds": 30})
    assert status == 201 and game["seconds_left"] == 30
    return game["id"]


def test_a_clean_stop_and_a_crash_give_the_clock_back_on_a_fake_clock(tmp_path: Path) -> None:
    clock, db = FakeClock(), tmp_path / "play.sqlite3"
    srv = Server("tictactoe", SeededRandomAgent(1), db=db, clock=clock)
    try:
        game_id = _thirty_seconds(srv)
        clock.now += 10  # the person thinks for 10 s while the server runs
    finally:
        srv.close()  # a clean stop: the heartbeat says when
    clock.now += 100
    srv = Server("tictactoe", SeededRandomAgent(1), db=db, clock=clock)
    try:
        assert srv.call("GET", f"/api/games/{game_id}")[1]["seconds_left"] == 20
        clock.now += 5
        beaten = clock.now
        end = time.monotonic() + 10
        while _heartbeat(db) != beaten:  # the server's clock has seen the 5 s
            assert time.monotonic() < end, "no heartbeat"
            time.sleep(0.02)
        srv.app.timekeeper.stop()  # the server dies: no more heartbeats, none at the end
        clock.now += 3
    finally:
        srv.close()
    clock.now += 200
    srv = Server("tictactoe", SeededRandomAgent(1), db=db, clock=clock)
    try:
        game = srv.call("GET", f"/api/games/{game_id}")[1]
        assert not game["over"] and game["seconds_left"] == 15  # 10 + 5 s of running servers
    finally:
        srv.close()


def _heartbeat(db: Path) -> float | None:
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT value FROM server WHERE key = 'heartbeat'").fetchone()
    return None if row is None else row[0]


class Process:
    """``scripts/play.py`` serving tictactoe on ``db``, killed with SIGKILL."""

    def __init__(self, db: Path, port: int) -> None:
        command = play_command(db, "game=tictactoe", "agent=random", f"port={port}")
        self.proc = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT, env=ENV
        )
        ready, _, _ = select.select([self.proc.stdout], [], [], 120)
        line = self.proc.stdout.readline() if ready else ""
        assert "Play at http://" in line, line
        self.client = ApiClient(line.split()[2].rstrip("/"))

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.proc.stdout.close()


def test_a_sigkill_during_a_thirty_second_turn_gives_the_downtime_back(tmp_path: Path) -> None:
    db, port = tmp_path / "play.sqlite3", free_port()
    server = Process(db, port)
    try:
        status, game = server.client.call("POST", "/api/games", {"side": "x", "turn_seconds": 30})
        assert status == 201, game
        time.sleep(2.5)  # the person thinks; heartbeats are written meanwhile
    finally:
        server.kill()
    time.sleep(10)  # no server runs: without the give-back, 10 s more of the 30 would be gone
    server = Process(db, port)
    try:
        status, again = server.client.call("GET", f"/api/games/{game['id']}")
        assert status == 200 and not again["over"]
        left = again["seconds_left"]
        assert 22 < left < 28.5, json.dumps(again)  # 2.5 s + the restart's own seconds counted
    finally:
        server.kill()
