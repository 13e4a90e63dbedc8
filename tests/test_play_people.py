"""Games between two people: the invitation, seat tokens, both ratings, the computer taking over
an away person's seat, the rematch, and a restart in the middle of it all."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_play_site import FakeClock
from test_play_web import RANDOM_RATING, SeededRandomAgent, Server

from ultimate_rl.play.levels import Level
from ultimate_rl.play.store import INITIAL_RATING, elo_update

X_WINS = [0, 3, 1, 4, 2]  # tic-tac-toe: X takes the top row while O plays the middle one
DRAW = [4, 0, 2, 6, 3, 5, 1, 7, 8]


class Pair:
    """A game between two people on ``srv``: the creator's and the friend's tokens."""

    def __init__(self, srv: Server, **settings: Any) -> None:
        self.srv = srv
        body = {"opponent": "person", "side": "x", **settings}
        status, created = srv.call("POST", "/api/games", body)
        assert status == 201, created
        self.created = created
        self.id = created["id"]
        self.path = f"/api/games/{self.id}"
        self.tokens = ["", ""]
        self.tokens[created["seat"]] = created["token"]

    def join(self, player: str | None = None) -> dict[str, Any]:
        invite = self.created["invite_url"].split("#invite=")[1]
        body = {"invite": invite} if player is None else {"invite": invite, "player": player}
        status, joined = self.srv.call("POST", self.path + "/join", body)
        assert status == 200, joined
        self.tokens[joined["seat"]] = joined["token"]
        return joined

    def move(self, seat: int, action: int) -> tuple[int, dict[str, Any]]:
        body = {"token": self.tokens[seat], "action": action}
        return self.srv.call("POST", self.path + "/move", body, auth=False)

    def play(self, actions: list[int]) -> dict[str, Any]:
        game: dict[str, Any] = {}
        for ply, action in enumerate(actions):
            status, game = self.move(ply % 2, action)
            assert status == 200, game
        return game

    def get(self, seat: int | None = None, after: int | None = None) -> dict[str, Any]:
        query = [] if after is None else [f"after={after}"]
        if seat is not None:
            query.append(f"token={self.tokens[seat]}")
        status, game = self.srv.call("GET", self.path + ("?" + "&".join(query) if query else ""))
        assert status == 200, game
        return game


@pytest.fixture
def srv() -> Any:
    server = Server("tictactoe", SeededRandomAgent(1))
    yield server
    server.close()


def test_a_friend_joins_once_with_the_invitation(srv: Server) -> None:
    pair = Pair(srv, player="ann")
    created = pair.created
    assert created["invite_url"].startswith(f"/game/{pair.id}#invite=")
    assert created["play_url"] == f"/game/{pair.id}#play={created['token']}"
    assert created["seat"] == 0 and [s["kind"] for s in created["seats"]] == ["person", "open"]
    invite = created["invite_url"].split("#invite=")[1]
    assert invite != created["token"]
    status, err = srv.call("POST", pair.path + "/join", {"invite": "not-it", "player": "bob"})
    assert status == 403 and "invitation" in err["error"]
    joined = pair.join("bob")
    assert joined["seat"] == 1 and joined["token"] not in (created["token"], invite)
    assert joined["play_url"] == f"/game/{pair.id}#play={joined['token']}"
    assert [s["player"] for s in joined["seats"]] == ["ann", "bob"]
    status, err = srv.call("POST", pair.path + "/join", {"invite": invite, "player": "cy"})
    assert status == 409 and "taken" in err["error"]
    assert pair.get()["seats"][1]["player"] == "bob"  # the refused join changed nothing


def test_each_seat_moves_and_resigns_only_with_its_own_token(srv: Server) -> None:
    pair = Pair(srv)
    status, err = pair.move(0, 4)
    assert status == 409 and "not joined" in err["error"]  # nobody to play against yet
    pair.join()
    status, err = pair.move(1, 4)
    assert status == 409 and "other player's turn" in err["error"]
    for token in ("", "guess", pair.created["invite_url"].split("#invite=")[1]):
        body = {"token": token, "action": 4}
        status, err = srv.call("POST", pair.path + "/move", body, auth=False)
        assert status == 403 and "play link" in err["error"]  # a watcher, a guess, the invite
    assert srv.call("POST", pair.path + "/resign", {"token": "guess"}, auth=False)[0] == 403
    status, game = pair.move(0, 4)
    assert status == 200 and game["actions"] == [4] and game["to_move"] == 1
    assert game["seat"] == 0 and not game["thinking"]  # nobody thinks for a person
    status, game = pair.move(1, 0)
    assert status == 200 and game["actions"] == [4, 0] and game["seat"] == 1
    status, game = srv.call("POST", pair.path + "/resign", {"token": pair.tokens[1]}, auth=False)
    assert status == 200 and game["result"] == {"outcome": "win", "winner": 0, "reason": "resign"}
    assert game["result_text"] == "O resigned: X wins."
    assert pair.get(1)["seat"] == 1 and pair.get()["seat"] is None  # a watcher has no seat


def test_the_creator_may_play_a_level_instead_of_waiting(srv: Server) -> None:
    pair = Pair(srv, side="o")
    status, _err = srv.call("POST", pair.path + "/join", {"token": "guess", "level": "random"})
    assert status == 403
    body = {"token": pair.tokens[1], "level": "random"}
    status, game = srv.call("POST", pair.path + "/join", body, auth=False)
    assert status == 200 and game["opponent"] == "level" and game["seats"][0]["kind"] == "level"
    game = pair.get(1, after=game["version"]) if not game["actions"] else game
    assert len(game["actions"]) == 1 and game["to_move"] == 1  # the level opened as X
    invite = pair.created["invite_url"].split("#invite=")[1]
    assert srv.call("POST", pair.path + "/join", {"invite": invite})[0] == 409


def test_a_rated_game_between_people_rates_both_once_and_a_draw_halfway(srv: Server) -> None:
    pair = Pair(srv, rated=True, player="ann")
    status, err = srv.call(
        "POST", pair.path + "/join", {"invite": pair.created["invite_url"].split("=")[1]}
    )
    assert status == 400 and "player name" in err["error"]  # a rated game needs both names
    invite = pair.created["invite_url"].split("#invite=")[1]
    status, err = srv.call("POST", pair.path + "/join", {"invite": invite, "player": "ann"})
    assert status == 400 and "own name" in err["error"]
    pair.join("bob")
    game = pair.play(X_WINS)
    win = elo_update(INITIAL_RATING, INITIAL_RATING, 1.0)
    assert game["result"]["winner"] == 0 and game["rating_changes"] == [
        {"player": "ann", "before": INITIAL_RATING, "after": round(win, 1)},
        {"player": "bob", "before": INITIAL_RATING, "after": round(2 * INITIAL_RATING - win, 1)},
    ]
    assert game["rating_change"] == {"before": INITIAL_RATING, "after": round(win, 1)}
    pair.get()  # reading it again rates nothing again
    ann, bob = (srv.call("GET", f"/api/players/{name}")[1] for name in ("ann", "bob"))
    assert (ann["games"], ann["wins"], bob["games"], bob["losses"]) == (1, 1, 1, 1)
    # a draw moves the two ratings towards each other by the same amount
    draw_pair = Pair(srv, rated=True, player="bob")
    draw_pair.join("ann")
    game = draw_pair.play(DRAW)
    assert game["result"]["winner"] is None
    bob_after = elo_update(bob["rating"], ann["rating"], 0.5)
    ann_after = elo_update(ann["rating"], bob["rating"], 0.5)
    assert [c["after"] for c in game["rating_changes"]] == [
        round(bob_after, 1),
        round(ann_after, 1),
    ]
    assert bob_after > bob["rating"] and ann_after < ann["rating"]
    board = srv.call("GET", "/api/leaderboard")[1]["players"]
    assert {p["name"]: p["draws"] for p in board} == {"ann": 1, "bob": 1}


@pytest.mark.parametrize("creator", ["x", "o"])
def test_each_person_reviews_the_game_from_their_own_side(srv: Server, creator: str) -> None:
    pair = Pair(srv, side=creator)
    pair.join()
    pair.play(X_WINS)
    reviews, sides = [], []
    for query in ("", f"?token={pair.tokens[0]}", f"?token={pair.tokens[1]}"):
        status, review = srv.call("GET", f"{pair.path}/review{query}")
        assert status == 200, review
        reviews.append([p["value_for_you"] for p in review["plies"]])
        sides.append((review["side"], review["side_name"]))
    assert all(value is not None for value in reviews[1])
    # without a token (a watcher): X's side, whoever created the game
    assert reviews[0] == reviews[1] and sides == [(0, "X"), (0, "X"), (1, "O")]
    assert reviews[2] == [-value for value in reviews[1]]  # O's: the other way round
    assert any(value != 0 for value in reviews[1])  # so the sign means something
    status, err = srv.call("GET", f"{pair.path}/review?token=guess")
    assert status == 403, err


def _wait_for(check: Any, seconds: float = 20) -> None:
    end = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.02)


def test_an_away_person_is_played_by_the_computer_until_they_come_back() -> None:
    clock = FakeClock()
    levels = [Level("random", "random", built=SeededRandomAgent(5), rating=RANDOM_RATING)]
    srv = Server("tictactoe", levels=levels, clock=clock)
    try:
        pair = Pair(srv, away_seconds=5)
        pair.join()
        assert pair.play([4])["seats"][1]["computer"] is False
        clock.now += 4  # O thinks: still theirs
        game = pair.get(0)
        assert len(game["actions"]) == 1 and game["seats"][1]["present"]
        clock.now += 2  # O has been gone for 6 s: the computer plays for them
        game = pair.get(0)
        _wait_for(lambda: len(pair.get(0)["actions"]) == 2)
        game = pair.get(0)
        assert game["computer_moves"] == [1] and not game["seats"][1]["present"]
        status, game = pair.move(0, next(a for a in range(9) if a not in game["actions"]))
        assert status == 200
        _wait_for(lambda: len(pair.get(0)["actions"]) == 4)  # still away: the computer again
        assert pair.get()["computer_moves"] == [1, 3]
        game = pair.get(1)  # O is back on the same device (its token): its seat is its own
        assert game["seats"][1]["present"] and game["seat"] == 1
        free = [a for a in range(9) if a not in game["actions"]]
        status, game = pair.move(0, free[0])
        assert status == 200 and game["to_move"] == 1
        time.sleep(0.3)
        assert len(pair.get(0)["actions"]) == 5  # O is here: nobody moves for them
        status, game = pair.move(1, free[1])
        assert status == 200 and game["computer_moves"] == [1, 3]
        review = srv.call("GET", pair.path + "/review")
        if game["over"]:
            plies = review[1]["plies"]
            assert [p["by"] for p in plies[:4]] == ["X", "computer", "X", "computer"]
    finally:
        srv.close()


def test_a_rated_game_the_computer_played_in_is_lost_by_who_left() -> None:
    clock = FakeClock()
    levels = [Level("random", "random", built=SeededRandomAgent(6), rating=RANDOM_RATING)]
    srv = Server("tictactoe", levels=levels, clock=clock)
    try:
        pair = Pair(srv, rated=True, player="ann", away_seconds=5)
        pair.join("bob")
        pair.play([4])
        clock.now += 6
        pair.get(0)
        _wait_for(lambda: len(pair.get(0)["actions"]) == 2)
        # X resigns: on the board O wins, but O's seat was played by the computer
        status, game = srv.call("POST", pair.path + "/resign", {"token": pair.tokens[0]})
        assert status == 200 and game["result"]["winner"] == 1
        assert [c["after"] > c["before"] for c in game["rating_changes"]] == [True, False]
        assert srv.call("GET", "/api/players/bob")[1]["losses"] == 1
    finally:
        srv.close()


def test_a_rematch_swaps_sides_and_keeps_each_persons_token(srv: Server) -> None:
    pair = Pair(srv, player="ann")
    pair.join("bob")
    status, err = srv.call("POST", pair.path + "/rematch", {"token": pair.tokens[0]})
    assert status == 409 and "over" in err["error"]
    pair.play(X_WINS)
    status, again = srv.call("POST", pair.path + "/rematch", {"token": pair.tokens[1]})
    assert status == 200 and again["seat"] == 0 and again["token"] == pair.tokens[1]
    assert [s["player"] for s in again["seats"]] == ["bob", "ann"]  # bob plays X now
    assert pair.get()["rematch"] == again["id"]
    status, same = srv.call("POST", pair.path + "/rematch", {"token": pair.tokens[0]})
    assert status == 200 and same["id"] == again["id"] and same["seat"] == 1  # one rematch
    path = f"/api/games/{again['id']}/move"
    assert srv.call("POST", path, {"token": pair.tokens[0], "action": 4}, auth=False)[0] == 409
    status, game = srv.call("POST", path, {"token": pair.tokens[1], "action": 4}, auth=False)
    assert status == 200 and game["actions"] == [4]


def test_a_game_between_people_survives_a_restart(tmp_path: Path) -> None:
    clock = FakeClock()
    db = tmp_path / "play.sqlite3"
    srv = Server("tictactoe", SeededRandomAgent(7), db=db, clock=clock)
    try:
        pair = Pair(srv, rated=True, player="ann", away_seconds=30)
        pair.join("bob")
        pair.play([4, 0])
    finally:
        srv.close()
    clock.now += 120  # the server was down for two minutes
    again = Server("tictactoe", SeededRandomAgent(8), db=db, clock=clock)
    try:
        pair.srv = again
        game = pair.get()
        assert game["actions"] == [4, 0] and [s["player"] for s in game["seats"]] == ["ann", "bob"]
        assert game["computer_moves"] == [] and not game["thinking"]  # away counts from now
        status, game = pair.move(1, 8)
        assert status == 409  # the seats' tokens still mean the same seats
        game = pair.play([1, 8, 7])  # X wins the middle column
        assert game["over"] and [c["player"] for c in game["rating_changes"]] == ["ann", "bob"]
    finally:
        again.close()


def test_two_browsers_play_a_whole_game_while_a_third_watches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two people on two devices (each its own browser profile), one watcher: the invitation
    link, every move relayed to the other page, the same end on all three."""
    from selenium.webdriver.common.by import By
    from test_play_web import _wait, chromium

    srv = Server("tictactoe", SeededRandomAgent(9))
    drivers: list[Any] = []
    try:
        ann, bob, watcher = drivers = [chromium(monkeypatch) for _ in range(3)]
        for driver, name in ((ann, "ann"), (bob, "bob")):
            driver.get(srv.url + "/")  # the page starts a game against the computer
            _wait(driver, lambda d: "/game/" in d.current_url)
            field = driver.find_element(By.ID, "player")
            field.send_keys(name)
            driver.execute_script("arguments[0].dispatchEvent(new Event('change'))", field)
        ann.find_element(By.ID, "play-friend").click()
        ann.switch_to.alert.accept()  # the computer's game was in progress: the page asks
        _wait(ann, lambda d: d.find_element(By.ID, "invite").is_displayed())
        invite = ann.find_element(By.ID, "invite-link").get_attribute("href")
        game_id = invite.split("/game/")[1].split("#")[0]
        assert "Waiting for your friend" in ann.find_element(By.ID, "status").text
        bob.get(invite)
        _wait(bob, lambda d: d.current_url.endswith(f"/game/{game_id}"))  # the code is gone
        watcher.get(f"{srv.url}/game/{game_id}")
        _wait(ann, lambda d: "bob" in d.find_element(By.ID, "seats").text)
        assert not ann.find_element(By.ID, "invite").is_displayed()
        rng = np.random.default_rng(10)
        for _ in range(9):
            _, game = srv.call("GET", f"/api/games/{game_id}")
            if game["over"]:
                break
            mover, other = (ann, bob) if game["to_move"] == 0 else (bob, ann)  # ann plays X
            _click_a_playable_cell(mover, rng)
            plies = len(game["actions"]) + 1
            for page in (other, watcher):  # the move reaches the other seat and the watcher
                _wait(page, lambda d, n=plies: _marks(d) == n)
        _, game = srv.call("GET", f"/api/games/{game_id}")
        assert game["over"] and [s["player"] for s in game["seats"]] == ["ann", "bob"]
        for driver in drivers:
            _wait(driver, lambda d: d.find_element(By.ID, "result").is_displayed())
            assert driver.find_element(By.ID, "result").text == game["result_text"]
            assert _marks(driver) == len(game["actions"])
        assert game["result_text"] in ("X wins.", "O wins.", "Draw.")
        assert "Watching" not in bob.find_element(By.ID, "status").text
        assert not watcher.find_elements(By.CSS_SELECTOR, ".cell.playable")
    finally:
        for driver in drivers:
            driver.quit()
        srv.close()


def _marks(driver: Any) -> int:
    from selenium.webdriver.common.by import By

    return sum(1 for cell in driver.find_elements(By.CSS_SELECTOR, ".cell") if cell.text)


class Socket:
    """A page's WebSocket to a game (``websockets``' blocking client)."""

    def __init__(self, srv: Server, game_id: str, token: str | None = None) -> None:
        from websockets.sync.client import connect

        query = "" if token is None else f"?token={token}"
        self.connection = connect(f"ws://127.0.0.1:{srv.port}/api/games/{game_id}/ws{query}")
        self.ws = self.connection.__enter__()

    def next(self, check: Any = lambda m: True, seconds: float = 20) -> dict[str, Any]:
        """The next message that passes ``check``."""
        end = time.monotonic() + seconds
        while True:
            message = json.loads(self.ws.recv(timeout=max(0.01, end - time.monotonic())))
            if check(message):
                return message

    def game_with(self, plies: int) -> dict[str, Any]:
        return self.next(lambda m: m["type"] == "game" and len(m["game"]["actions"]) == plies)[
            "game"
        ]

    def close(self) -> None:
        self.connection.__exit__(None, None, None)


def test_websockets_relay_moves_presence_and_the_takeover() -> None:
    clock = FakeClock()
    levels = [Level("random", "random", built=SeededRandomAgent(11), rating=RANDOM_RATING)]
    srv = Server("tictactoe", levels=levels, clock=clock)
    sockets: list[Socket] = []
    try:
        pair = Pair(srv, away_seconds=5)
        pair.join()
        x, o, watcher = sockets = [
            Socket(srv, pair.id, pair.tokens[0]),
            Socket(srv, pair.id, pair.tokens[1]),
            Socket(srv, pair.id),
        ]
        first = watcher.game_with(0)
        assert first["seat"] is None and first["seats"][1]["present"]
        seen = x.game_with(0)
        assert seen["seat"] == 0 and o.game_with(0)["seat"] == 1
        if seen["watchers"] != 1:  # the watcher's arrival is pushed to the seats' pages
            x.next(lambda m: m["type"] == "game" and m["game"]["watchers"] == 1)
        # a move sent on X's socket reaches O's page and the watcher's
        x.ws.send(json.dumps({"type": "move", "action": 4, "ply": 0}))
        answer = x.next(lambda m: m["type"] == "answer")["game"]
        assert answer["actions"] == [4]
        assert o.game_with(1)["to_move"] == 1 and watcher.game_with(1)["actions"] == [4]
        o.ws.send(json.dumps({"type": "move", "action": 0, "ply": 0}))  # a stale page
        error = o.next(lambda m: m["type"] == "error")
        assert error["status"] == 409 and "moved on" in error["error"]
        x.ws.send(json.dumps({"type": "move", "action": 8, "ply": 1}))  # not X's turn
        assert x.next(lambda m: m["type"] == "error")["status"] == 409
        # O's page is open: however long O thinks, nobody plays for them
        clock.now += 60
        assert len(pair.get(0)["actions"]) == 1 and pair.get()["seats"][1]["present"]
        o.close()  # O closes the page: away from now on
        game = x.next(lambda m: m["type"] == "game" and not m["game"]["seats"][1]["connected"])
        assert game["game"]["seats"][1]["present"]  # gone for less than away_seconds
        clock.now += 6
        pair.get(0)  # any read after the away time lets the computer move for O
        game = x.game_with(2)
        assert game["computer_moves"] == [1] and game["to_move"] == 0
        assert watcher.game_with(2)["seats"][1]["computer"] is False  # X's turn now
        o = Socket(srv, pair.id, pair.tokens[1])  # O comes back on the same device
        sockets.append(o)
        assert o.game_with(2)["seats"][1]["present"]
    finally:
        for sock in sockets:
            sock.close()
        srv.close()


def test_a_websocket_with_a_wrong_token_or_game_is_refused(srv: Server) -> None:
    from websockets.exceptions import ConnectionClosed

    pair = Pair(srv)
    for game_id, token in ((pair.id, "guess"), ("nosuchgame1", None)):
        sock = Socket(srv, game_id, token)
        message = sock.next()
        assert message["type"] == "error" and message["status"] in (403, 404)
        with pytest.raises(ConnectionClosed) as closed:
            sock.ws.recv(timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4000 + message["status"]


def _click_a_playable_cell(driver: Any, rng: np.random.Generator) -> None:
    """Clicks a random playable cell, looking again when a push redrew the board meanwhile."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from test_play_web import _wait

    for _ in range(20):
        cells = _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".cell.playable"))
        try:
            cells[int(rng.integers(len(cells)))].click()
            return
        except StaleElementReferenceException:
            continue
    raise AssertionError("the board kept changing under the click")
