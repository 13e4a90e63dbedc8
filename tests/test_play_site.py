"""The play site's API: play tokens, the server's clock, ratings, persistence, bugs, and load."""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_play_web import RANDOM_RATING, SeededRandomAgent, Server

from ultimate_rl.agents.base import Analysis
from ultimate_rl.games import make
from ultimate_rl.play.levels import OPENING_PLIES, Level, decide, default_levels, evaluation_file
from ultimate_rl.play.store import INITIAL_RATING, elo_update


class FakeClock:
    """Time that moves only when a test says so."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def server() -> Any:
    srv = Server("tictactoe", SeededRandomAgent(1))
    yield srv
    srv.close()


TICTACTOE_LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8)]
TICTACTOE_LINES += [(0, 4, 8), (2, 4, 6)]


def _legal(game: dict[str, Any]) -> list[int]:
    return [c for c, ok in enumerate(game["board"]["playable_cells"]) if ok]


# ---- play and watch links ------------------------------------------------------------------


def test_only_the_play_token_moves_or_resigns(server: Server) -> None:
    status, game = server.call("POST", "/api/games", {"side": "x"})
    assert status == 201
    gid, token = game["id"], game["token"]
    assert game["play_url"] == f"/game/{gid}#play={token}" and game["watch_url"] == f"/game/{gid}"
    for body in ({"action": 4}, {"action": 4, "token": "guess"}, {"action": 4, "token": 7}):
        status, err = server.call("POST", f"/api/games/{gid}/move", body, auth=False)
        assert status == 403 and "play link" in err["error"]
    assert server.call("POST", f"/api/games/{gid}/resign", {}, auth=False)[0] == 403
    status, watched = server.call("GET", f"/api/games/{gid}")
    assert status == 200 and watched["actions"] == [] and "token" not in watched
    status, moved = server.call("POST", f"/api/games/{gid}/move", {"action": 4, "token": token})
    assert status == 200 and moved["actions"][0] == 4


def test_move_and_text_together_are_refused_and_a_stale_page_is_told(server: Server) -> None:
    _, game = server.call("POST", "/api/games", {"side": "x"})
    path = f"/api/games/{game['id']}/move"
    status, err = server.call("POST", path, {"action": 0, "move": "a1"})
    assert status == 400 and "not both" in err["error"]
    status, game = server.call("POST", path, {"action": 4, "ply": 0})
    assert status == 200 and len(game["actions"]) == 2
    # a second window still showing the start sends ply 0: refused, nothing played
    status, err = server.call("POST", path, {"action": _legal(game)[0], "ply": 0})
    assert status == 409 and "moved on" in err["error"]
    assert server.call("GET", f"/api/games/{game['id']}")[1]["actions"] == game["actions"]


def test_watchers_long_poll_for_the_next_change(server: Server) -> None:
    _, game = server.call("POST", "/api/games", {"side": "x"})
    gid, version = game["id"], game["version"]
    seen: dict[str, Any] = {}
    watcher = threading.Thread(
        target=lambda: seen.update(server.call("GET", f"/api/games/{gid}?after={version}")[1])
    )
    watcher.start()
    time.sleep(0.3)
    assert watcher.is_alive()  # nothing changed yet: the watcher waits
    server.call("POST", f"/api/games/{gid}/move", {"action": 4, "wait": False})
    watcher.join(10)
    assert not watcher.is_alive() and seen["version"] > version and 4 in seen["actions"]
    assert server.call("GET", f"/api/games/{gid}?after=x")[0] == 400


# ---- the clock -----------------------------------------------------------------------------


def test_the_server_clock_loses_a_late_move_on_time_even_unwatched() -> None:
    clock = FakeClock()
    srv = Server("tictactoe", SeededRandomAgent(2), clock=clock)
    try:
        status, game = srv.call("POST", "/api/games", {"side": "x", "turn_seconds": 30})
        assert status == 201 and game["seconds_left"] == 30
        gid = game["id"]
        clock.now += 20
        status, game = srv.call("POST", f"/api/games/{gid}/move", {"action": 4})
        assert status == 200 and game["seconds_left"] == 30  # a new turn, a fresh 30 s
        clock.now += 29
        assert srv.call("GET", f"/api/games/{gid}")[1]["seconds_left"] == 1
        clock.now += 2  # nobody watches; the next read finds the game lost on time
        status, game = srv.call("GET", f"/api/games/{gid}")
        assert game["over"] and game["result"] == {"outcome": "loss", "winner": 1, "reason": "time"}
        assert "time" in game["result_text"]
        status, err = srv.call("POST", f"/api/games/{gid}/move", {"action": _legal(game)[0]})
        assert status == 409 and "time" in err["error"]
        # a move that arrives late is refused, and loses, in the same request
        _, other = srv.call("POST", "/api/games", {"side": "x", "turn_seconds": 60})
        clock.now += 61
        status, err = srv.call("POST", f"/api/games/{other['id']}/move", {"action": 4})
        assert status == 409 and "time ran out" in err["error"]
        assert srv.call("GET", f"/api/games/{other['id']}")[1]["result"]["reason"] == "time"
    finally:
        srv.close()


def test_an_abandoned_rated_game_is_lost_on_time_before_ratings_are_read() -> None:
    clock = FakeClock()
    srv = Server("tictactoe", SeededRandomAgent(2), clock=clock)
    try:
        body = {"side": "x", "turn_seconds": 30, "rated": True, "player": "cy"}
        assert srv.call("POST", "/api/games", body)[0] == 201
        clock.now += 31  # the page was closed: nobody reads the game again
        status, player = srv.call("GET", "/api/players/cy")
        assert status == 200 and player["losses"] == 1
        assert srv.call("GET", "/api/leaderboard")[1]["players"][0]["name"] == "cy"
    finally:
        srv.close()


@pytest.mark.parametrize(
    ("value", "status"),
    [(None, 201), (0, 201), ("off", 201), (30, 201), (2.5, 201), (-1, 400), ("x", 400), (1e9, 400)],
)
def test_turn_seconds_values(server: Server, value: Any, status: int) -> None:
    code, game = server.call("POST", "/api/games", {"turn_seconds": value})
    assert code == status, game
    if status == 201:
        expected = None if value in (None, 0, "off") else float(value)
        assert game["turn_seconds"] == expected


# ---- ratings and persistence ---------------------------------------------------------------


def test_elo_update_is_the_standard_one() -> None:
    assert elo_update(1000, 1000, 1.0) == pytest.approx(1016)
    assert elo_update(1000, 1000, 0.5) == pytest.approx(1000)
    assert elo_update(1000, 1400, 0.0) == pytest.approx(1000 - 32 / 11, abs=1e-6)


def test_rated_games_need_a_rated_level_and_a_name() -> None:
    levels = [Level("random", "random", built=SeededRandomAgent(1)), Level("unrated", "random")]
    srv = Server("tictactoe", levels=levels)
    try:
        status, err = srv.call("POST", "/api/games", {"rated": True, "player": "ann"})
        assert status == 400 and "no rating" in err["error"]
        srv.service.levels["random"].rating = RANDOM_RATING
        for player in (None, "", "x" * 40, "<script>", 5):
            body = {"rated": True, "player": player, "level": "random"}
            assert srv.call("POST", "/api/games", body)[0] == 400, player
        assert srv.call("POST", "/api/games", {"level": "nope"})[0] == 400
        assert srv.call("GET", "/api/players/ann")[0] == 404
    finally:
        srv.close()


def test_games_and_ratings_survive_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "play.sqlite3"
    srv = Server("tictactoe", SeededRandomAgent(3), db=db)
    try:
        _, lost = srv.call("POST", "/api/games", {"rated": True, "player": "ann", "side": "o"})
        assert srv.call("GET", f"/api/games/{lost['id']}/analysis")[0] == 403  # no help when rated
        status, lost = srv.call("POST", f"/api/games/{lost['id']}/resign")
        expected = elo_update(INITIAL_RATING, RANDOM_RATING, 0.0)
        assert lost["rating_change"] == {"before": INITIAL_RATING, "after": round(expected, 1)}
        _, going = srv.call("POST", "/api/games", {"side": "x", "turn_seconds": 600})
        _, going = srv.call("POST", f"/api/games/{going['id']}/move", {"action": 4})
        tokens = dict(srv.tokens)
    finally:
        srv.close()
    again = Server("tictactoe", SeededRandomAgent(4), db=db)
    try:
        again.tokens = tokens
        status, player = again.call("GET", "/api/players/ann")
        assert status == 200 and player["rating"] == round(expected, 1) and player["losses"] == 1
        assert again.call("GET", "/api/leaderboard")[1]["players"][0]["name"] == "ann"
        status, game = again.call("GET", f"/api/games/{going['id']}")
        assert status == 200 and game["actions"] == going["actions"]
        assert game["version"] == going["version"]  # versions go on rising: pages compare them
        assert 500 < game["seconds_left"] <= 600
        status, game = again.call(
            "POST", f"/api/games/{going['id']}/move", {"action": _legal(game)[0]}
        )
        assert status == 200 and len(game["actions"]) == 4
        # the finished rated game is not rated twice by the restart
        assert again.call("GET", f"/api/games/{lost['id']}")[1]["rating_change"] is not None
        assert again.call("GET", "/api/players/ann")[1]["games"] == 1
    finally:
        again.close()


def test_review_and_winning_line(server: Server) -> None:
    _, game = server.call("POST", "/api/games", {"side": "x"})
    assert server.call("GET", f"/api/games/{game['id']}/review")[0] == 409
    while not game["over"]:
        _, game = server.call("POST", f"/api/games/{game['id']}/move", {"action": _legal(game)[0]})
    status, review = server.call("GET", f"/api/games/{game['id']}/review")
    assert status == 200 and [p["move"] for p in review["plies"]] == game["actions"]
    assert all(p["best"] is not None and p["value_for_you"] is not None for p in review["plies"])
    assert [p["by"] for p in review["plies"]][:2] == ["you", "agent"]
    cells = game["board"]["winning_cells"]
    if game["result"]["winner"] is None:
        assert cells == []
    else:
        # every line the winner completed, two of them when the last move closed both
        winner = game["result"]["winner"]
        mine = {c for c, owner in enumerate(game["board"]["owners"]) if owner == winner}
        lines = [set(line) for line in TICTACTOE_LINES if set(line) <= mine]
        assert lines and set(cells) == set().union(*lines) and len(cells) == len(set(cells))


# ---- levels --------------------------------------------------------------------------------


def test_uttt_levels_carry_the_shipped_calibration() -> None:
    path = evaluation_file("uttt")
    assert path is not None
    report = json.loads(path.read_text())
    measured = {p["name"]: round(p["elo"]) for p in report["ratings"]["players"]}
    levels = {level.name: level for level in default_levels(make("uttt"))}
    assert {n: round(lv.rating) for n, lv in levels.items() if lv.rating} == measured
    expected = {"uct-1000": 1000, "uct-10000": 1439, "uct-100000": 1788, "uttt_agent": 1970}
    assert measured == expected
    assert levels["uct-100000"].options == {"num_simulations": 100000}
    assert Path(levels["uttt_agent"].options["path"]).is_file()
    assert levels["uttt_agent"].options["stop_early"] is False  # the whole budget, as measured
    assert levels["random"].rating is None
    small = [level.name for level in default_levels(make("tictactoe", size=4, k=3))]
    assert small == ["random", "uct-1000", "perfect"]


class TwoGoodMoves:
    """An agent that rates two moves about equally and the rest low."""

    def analyse(self, game: Any, state: Any) -> Analysis:
        policy = np.full(game.num_actions, 0.01)
        policy[[0, 4]] = [0.40, 0.45]
        return Analysis(policy, 0.1)

    def select_action(self, game: Any, state: Any) -> int:
        return 8  # its own choice: what a level plays after the opening


def test_openings_vary_among_near_equal_moves_then_play_the_best() -> None:
    game = make("tictactoe")
    state = game.initial_state()
    rng = np.random.default_rng(0)
    opening = {decide(TwoGoodMoves(), game, state, 0, rng).action for _ in range(40)}
    later = {decide(TwoGoodMoves(), game, state, OPENING_PLIES, rng).action for _ in range(40)}
    assert opening == {0, 4} and later == {8}


# ---- bugs ----------------------------------------------------------------------------------


@pytest.mark.parametrize("recursion_limit", [None, 100_000])
def test_deeply_nested_json_is_a_400_not_a_dropped_connection(
    server: Server, recursion_limit: int | None
) -> None:
    """Whatever the interpreter's recursion limit (libraries raise it), the depth is refused."""
    _, game = server.call("POST", "/api/games", {})
    body = ('{"a":' + "[" * 2000 + "]" * 2000 + "}").encode()
    assert len(body) < 4096
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(recursion_limit or previous)
    try:
        status, err = server.call("POST", f"/api/games/{game['id']}/move", raw=body)
    finally:
        sys.setrecursionlimit(previous)
    assert status == 400 and "nested too deeply" in err["error"]
    assert server.call("GET", f"/api/games/{game['id']}")[0] == 200


def test_a_body_that_never_arrives_times_out() -> None:
    srv = Server("tictactoe", SeededRandomAgent(5), read_timeout=1.0)
    try:
        start = time.monotonic()
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as conn:
            conn.sendall(
                b"POST /api/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b'Content-Length: 100\r\n\r\n{"side":'
            )
            answer = conn.recv(4096).decode()
        assert answer.startswith("HTTP/1.0 408") or answer.startswith("HTTP/1.1 408"), answer
        assert time.monotonic() - start < 5
        assert srv.call("GET", "/api/info")[0] == 200
    finally:
        srv.close()


# ---- load ----------------------------------------------------------------------------------


class SlowRandomAgent(SeededRandomAgent):
    """A random agent that 'thinks' a little, so games overlap and reads must not wait."""

    def analyse(self, game: Any, state: Any) -> dict[str, Any]:
        time.sleep(0.02)
        return super().analyse(game, state)

    def select_action(self, game: Any, state: Any) -> int:
        time.sleep(0.02)
        return super().select_action(game, state)


def test_fifty_games_at_once_stay_consistent_and_reads_stay_fast() -> None:
    srv = Server("tictactoe", SlowRandomAgent(6), cache_size=64)
    errors: list[str] = []
    finals: dict[str, dict[str, Any]] = {}
    read_ms: list[float] = []
    try:
        _, probe = srv.call("POST", "/api/games", {"side": "x"})

        def player(index: int) -> None:
            rng = np.random.default_rng(index)
            status, game = srv.call("POST", "/api/games", {"side": "xo"[index % 2]})
            while status < 500 and not game.get("over", True):
                move = {"action": int(rng.choice(_legal(game)))}
                status, game = srv.call("POST", f"/api/games/{game['id']}/move", move)
                if status != 200:
                    errors.append(f"{status} {game}")
                    return
            finals[game["id"]] = game

        def reader(stop: threading.Event) -> None:
            while not stop.is_set():
                start = time.perf_counter()
                status, _ = srv.call("GET", f"/api/games/{probe['id']}")
                read_ms.append(1000 * (time.perf_counter() - start))
                if status != 200:
                    errors.append(f"read {status}")

        stop = threading.Event()
        readers = [threading.Thread(target=reader, args=(stop,)) for _ in range(2)]
        players = [threading.Thread(target=player, args=(i,)) for i in range(50)]
        for thread in readers + players:
            thread.start()
        for thread in players:
            thread.join(120)
        stop.set()
        for thread in readers:
            thread.join(10)
        assert not errors and len(finals) == 50
        game = make("tictactoe")
        for gid, final in finals.items():
            stored = srv.call("GET", f"/api/games/{gid}")[1]
            state = game.apply_sequence(stored["actions"])  # every move legal, in order
            assert stored["actions"] == final["actions"] and game.is_terminal(state)
            assert stored["result"]["winner"] == game.winner(state)
        p50, p95, p99 = np.percentile(read_ms, [50, 95, 99])
        print(
            f"\nreads during 50 games: {len(read_ms)}, p50 {p50:.1f} ms, p95 {p95:.1f} ms, "
            f"p99 {p99:.1f} ms, max {max(read_ms):.1f} ms"
        )
        assert p95 < 500
    finally:
        srv.close()


def test_a_game_against_a_level_the_restarted_server_lacks_shows_but_does_not_play(
    tmp_path: Path,
) -> None:
    db = tmp_path / "play.sqlite3"
    srv = Server("tictactoe", SeededRandomAgent(9), db=db)
    try:
        _, game = srv.call("POST", "/api/games", {"side": "x"})
        tokens = dict(srv.tokens)
    finally:
        srv.close()
    levels = [Level("other", "random", built=SeededRandomAgent(9))]
    again = Server("tictactoe", db=db, levels=levels)
    try:
        again.tokens = tokens
        status, shown = again.call("GET", f"/api/games/{game['id']}")
        assert status == 200 and shown["level"]["name"] == "random"
        status, err = again.call("POST", f"/api/games/{game['id']}/move", {"action": 4})
        assert status == 409 and "does not offer" in err["error"]
    finally:
        again.close()
