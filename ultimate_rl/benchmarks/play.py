"""The play site under load: games between pairs of people's pages, each watched by a third.

``python scripts/bench.py suite=play`` starts the real server (``scripts/play.py ui=web``) on
127.0.0.1 with a fresh database, opens ``play.games`` games between two people at once (each
created and joined over HTTP as a person would, then three WebSockets: both seats and one
watcher), and plays them with random legal moves sent as WebSocket messages after a random
think time. It measures the time from a move's message to the other seat's socket receiving
the game with that move (and to the watcher's; the relays of moves sent after the restart
apart, as the restarted server loads its games back; a move sent before the page that gets it
had connected is a catch-up on connecting, counted but not timed), counts 5xx answers and
errors, kills the server (SIGKILL) a third of the way in and starts it again on the same file
(the pages reconnect and resend what went unanswered), and afterwards checks every game against
the database: the moves every page saw, in order, none lost or doubled, every game that was open
at the restart moved on after it. Loopback only; bounded by ``play.games`` and ``play.seconds``.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import random
import select
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import websockets

from ultimate_rl.games import make
from ultimate_rl.play.web import GC_THRESHOLDS

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"  # loopback only: the load never leaves the machine
RECONNECT_SECONDS = (0.5, 1.5)  # a dropped page waits this long, at random, as app.js does


@dataclass
class Figures:
    """What the clients saw."""

    relay_ms: list[float] = field(default_factory=list)  # move sent -> the other seat has it
    watch_ms: list[float] = field(default_factory=list)  # move sent -> the watcher has it
    after_restart_ms: list[float] = field(default_factory=list)  # relays of moves sent after it
    # moves sent before the page that got them had its socket: a catch-up on connecting (the
    # time to connect, after the start or the restart), not a relay, so not a latency sample
    caught_up: int = 0
    moves: int = 0
    server_errors: int = 0  # 5xx answers, HTTP or WebSocket
    other_errors: list[str] = field(default_factory=list)
    inconsistent: list[str] = field(default_factory=list)  # a page saw moves change or vanish


class Server:
    """The real play server in its own process, on ``port`` and ``db``."""

    def __init__(self, db: Path, port: int, game: str, log: Path) -> None:
        command = [sys.executable, str(ROOT / "scripts" / "play.py"), "ui=web", f"db={db}"]
        command += [f"port={port}", f"game={game}", "seed=0", f"host={HOST}"]
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        self.log = log.open("a")
        self.proc = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=self.log, text=True, cwd=ROOT, env=env
        )
        ready, _, _ = select.select([self.proc.stdout], [], [], 120)
        line = self.proc.stdout.readline() if ready else ""
        if "Play at http://" not in line:
            self.stop(signal.SIGKILL)
            raise RuntimeError(f"the play server did not start: {line!r}; see {log}")

    def stop(self, how: int = signal.SIGTERM) -> None:
        self.proc.send_signal(how)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        self.log.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


@dataclass
class LoadGame:
    """One game as its three pages know it."""

    id: str
    tokens: tuple[str, str]
    sent: dict[int, float] = field(default_factory=dict)  # ply -> when its move was sent
    seen: dict[str, list[int]] = field(default_factory=dict)  # page -> the moves it last saw
    answered: list[list[int]] = field(default_factory=list)  # moves the server confirmed
    over: asyncio.Event = field(default_factory=asyncio.Event)
    plies_at_restart: int | None = None  # the most moves a page had seen when the server died

    def plies(self) -> int:
        return max((len(seen) for seen in self.seen.values()), default=0)


class Load:
    """The clients: ``games`` games, each two seats and a watcher over WebSockets."""

    def __init__(self, base: str, games: int, seed: int, game_name: str) -> None:
        self.base, self.count, self.rng = base, games, random.Random(seed)
        self.game = make(game_name)
        # the first move computed would load the game's compiled kernels (half a second on the
        # development VM) with every page's loop stopped; the moves held up by it then reached
        # the server at once, and that burst was the p99 before the restart: load them now
        self.game.load_kernels()
        self.figures = Figures()
        self.games: list[LoadGame] = []
        self.restarting = False  # sends during the restart are not latency samples
        self.restarted = False  # relays from then on are counted apart (the server is cold)

    async def create(self, index: int) -> LoadGame:
        body = {"opponent": "person", "side": "x", "player": f"load{index}a"}
        status, created = await asyncio.to_thread(_post, f"{self.base}/api/games", body)
        if status != 201:
            raise RuntimeError(f"creating a game: {status} {created}")
        invite = created["invite_url"].split("#invite=")[1]
        join = {"invite": invite, "player": f"load{index}b"}
        path = f"{self.base}/api/games/{created['id']}/join"
        status, joined = await asyncio.to_thread(_post, path, join)
        if status != 200:
            raise RuntimeError(f"joining a game: {status} {joined}")
        return LoadGame(created["id"], (created["token"], joined["token"]))

    async def page(self, game: LoadGame, seat: int | None, end: float) -> None:
        """One page's socket, reconnecting while the server restarts, until the game ends."""
        name = "watcher" if seat is None else f"seat{seat}"
        query = "" if seat is None else f"?token={game.tokens[seat]}"
        url = f"ws{self.base.removeprefix('http')}/api/games/{game.id}/ws{query}"
        while not game.over.is_set() and time.monotonic() < end:
            try:
                async with asyncio.timeout(max(0.0, end - time.monotonic())):
                    async with websockets.connect(url, open_timeout=30, max_size=2**20) as ws:
                        await self.listen(game, seat, name, ws, end, time.perf_counter())
            except TimeoutError:
                return  # the load's time is up
            except (OSError, websockets.ConnectionClosed):
                await asyncio.sleep(self.rng.uniform(*RECONNECT_SECONDS))  # it is restarting

    async def listen(
        self, game: LoadGame, seat: int | None, name: str, ws: Any, end: float, opened: float
    ) -> None:
        """Reads one socket (open since ``opened``) until the game ends or the load's time is up,
        moving when it is this seat's turn."""
        mover: asyncio.Task[None] | None = None
        try:
            async for text in ws:
                message = json.loads(text)
                kind = message["type"]
                if kind == "error":
                    self.error(message)
                    continue
                state = message["game"]
                actions = state["actions"]
                if kind == "answer":
                    game.answered.append(list(actions))
                self.saw(game, name, seat, actions, opened)
                if state["over"]:
                    game.over.set()
                    return
                mine = seat is not None and state["to_move"] == seat
                if mine and (mover is None or mover.done()) and time.monotonic() < end:
                    mover = asyncio.create_task(self.move(game, ws, actions))
        finally:
            if mover is not None:
                mover.cancel()

    def saw(
        self, game: LoadGame, name: str, seat: int | None, actions: list[int], opened: float
    ) -> None:
        before = game.seen.get(name, [])
        if actions[: len(before)] != before:
            self.figures.inconsistent.append(f"{game.id} {name}: {before} then {actions}")
        now = time.perf_counter()
        for ply in range(len(before), len(actions)):
            sent = game.sent.get(ply)
            if sent is None or ply % 2 == seat:
                continue  # its own move, or one sent across the restart
            if sent < opened:
                self.figures.caught_up += 1
                continue
            samples = self.figures.watch_ms if seat is None else self.figures.relay_ms
            if seat is not None and self.restarted:
                samples = self.figures.after_restart_ms
            samples.append(1000 * (now - sent))
        game.seen[name] = list(actions)

    async def move(self, game: LoadGame, ws: Any, actions: list[int]) -> None:
        await asyncio.sleep(self.rng.uniform(0.5, 1.5))  # a person thinks
        legal = self.game.legal_actions(self.game.apply_sequence(actions))
        ply = len(actions)
        message = {"type": "move", "action": int(self.rng.choice(list(legal))), "ply": ply}
        if self.restarting:
            game.sent.pop(ply, None)  # no latency sample across the restart
        else:
            game.sent[ply] = time.perf_counter()
        self.figures.moves += 1
        await ws.send(json.dumps(message))

    def error(self, message: dict[str, Any]) -> None:
        if message["status"] >= 500:
            self.figures.server_errors += 1
        elif not (message["status"] == 409 and "moved on" in message["error"]):
            self.figures.other_errors.append(f"{message['status']} {message['error']}")


async def _drive(load: Load, seconds: float, restart: Any) -> None:
    load.games = list(await asyncio.gather(*(load.create(i) for i in range(load.count))))
    # the clients' own collector pauses (numba's and numpy's objects, the 600 pages' garbage) are
    # not the server's latency: keep them out of the samples, as the server does
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    end = time.monotonic() + seconds
    pages = [
        asyncio.create_task(load.page(game, seat, end))
        for game in load.games
        for seat in (0, 1, None)
    ]
    restarter = asyncio.create_task(restart(load, end))
    await asyncio.gather(*pages)
    if load.restarting:
        await restarter  # a server half started would outlive the load
    else:
        restarter.cancel()


def _stored(db: Path) -> dict[str, dict[str, Any]]:
    with closing(sqlite3.connect(db)) as conn:
        return {gid: json.loads(data) for gid, data in conn.execute("SELECT id, data FROM games")}


def run(cfg: Any) -> dict[str, float]:
    """The figures of one load run (see the module doc)."""
    settings = cfg.play
    folder = Path(tempfile.mkdtemp(prefix="play_load_"))
    db, log, port = folder / "play.sqlite3", folder / "server.log", _free_port()
    servers = [Server(db, port, settings.game, log)]
    load = Load(f"http://{HOST}:{port}", int(settings.games), int(settings.seed), settings.game)
    open_at_restart: list[str] = []

    async def restart(load: Load, end: float) -> None:
        if not settings.restart:
            return
        await asyncio.sleep(max(0.0, (end - time.monotonic()) / 3))
        open_at_restart.extend(g.id for g in load.games if not g.over.is_set())
        load.restarting = True
        for game in load.games:
            game.sent.clear()  # moves in flight cross the restart: no latency samples
            game.plies_at_restart = game.plies()
        await asyncio.to_thread(servers[-1].stop, signal.SIGKILL)
        servers.append(await asyncio.to_thread(Server, db, port, settings.game, log))
        load.restarted = True
        load.restarting = False

    try:
        asyncio.run(_drive(load, float(settings.seconds), restart))
    finally:
        servers[-1].stop()
    figures = load.figures
    stored = _stored(db)
    lost = illegal = 0
    for game in load.games:
        actions = stored[game.id]["match"]["actions"]
        try:
            load.game.apply_sequence(actions)  # a move stored twice would be illegal here
        except ValueError:
            illegal += 1
        lost += sum(answer != actions[: len(answer)] for answer in game.answered)
        for name, seen in game.seen.items():
            if seen != actions[: len(seen)]:
                figures.inconsistent.append(f"{game.id} {name}: saw {seen}, stored {actions}")
    resumed = [g for g in load.games if g.id in open_at_restart]
    p50, p95, p99 = np.percentile(figures.relay_ms or [np.nan], [50, 95, 99])
    watch_p99 = float(np.percentile(figures.watch_ms or [np.nan], 99))
    after = np.percentile(figures.after_restart_ms or [np.nan], [50, 99])
    print(f"play load: log and database in {folder}", file=sys.stderr)
    for text in figures.other_errors[:5] + figures.inconsistent[:5]:
        print(f"play load: {text}", file=sys.stderr)
    return {
        "play_games": float(len(load.games)),
        "play_moves": float(figures.moves),
        "play_relay_ms_p50": float(p50),
        "play_relay_ms_p95": float(p95),
        "play_relay_ms_p99": float(p99),
        "play_watcher_ms_p99": watch_p99,
        "play_after_restart_relay_ms_p50": float(after[0]),
        "play_after_restart_relay_ms_p99": float(after[1]),
        "play_caught_up_on_connect": float(figures.caught_up),
        "play_5xx": float(figures.server_errors),
        "play_other_errors": float(len(figures.other_errors)),
        "play_inconsistent_pages": float(len(figures.inconsistent)),
        "play_lost_moves": float(lost),
        "play_illegal_games": float(illegal),
        "play_games_finished": float(sum(g.over.is_set() for g in load.games)),
        "play_open_at_restart": float(len(resumed)),
        "play_resumed_after_restart": float(
            sum(g.over.is_set() or g.plies() > (g.plies_at_restart or 0) for g in resumed)
        ),
    }
