"""Browser play: the JSON API against a real server, and the page played in headless Chromium."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ultimate_rl.games import make
from ultimate_rl.games.registry import GAME_NAMES
from ultimate_rl.play.api import WebPlay
from ultimate_rl.play.levels import Level
from ultimate_rl.play.service import PlayService
from ultimate_rl.play.store import Database
from ultimate_rl.play.web import make_server

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


class SeededRandomAgent:
    """A random player that also 'analyses' (uniform policy, a fixed value), for the overlay."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def select_action(self, game, state) -> int:
        return int(self.rng.choice(game.legal_actions(state)))

    def analyse(self, game, state) -> dict[str, Any]:
        mask = game.legal_mask(state).astype(float)
        return {"policy": mask / mask.sum(), "value": 0.25}


RANDOM_RATING = 600.0  # the tests' own rating for the random level, so rated play works


class ApiClient:
    """Calls a play server's JSON API at ``url``.

    ``call`` adds the play token of games it created to move and resign requests unless
    ``auth=False`` (the token tests send their own, or none).
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.tokens: dict[str, str] = {}

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        raw: bytes | None = None,
        auth: bool = True,
    ) -> tuple[int, dict[str, Any]]:
        parts = path.split("/")
        if auth and isinstance(body, dict) and path.endswith(("/move", "/resign")):
            body = {"token": self.tokens.get(parts[3], ""), **body}
        elif auth and body is None and path.endswith("/resign"):
            body = {"token": self.tokens.get(parts[3], "")}
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                status, answer = response.status, json.loads(response.read())
        except urllib.error.HTTPError as err:
            status, answer = err.code, json.loads(err.read())
        if path == "/api/games" and status == 201:
            self.tokens[answer["id"]] = answer["token"]
        return status, answer


class Server(ApiClient):
    """A play server on 127.0.0.1 with a free port, serving in a thread."""

    def __init__(
        self,
        game_name: str,
        agent: Any = None,
        *,
        db: str | Path = ":memory:",
        levels: list[Level] | None = None,
        clock: Any = time.time,
        cache_size: int = 8,
        read_timeout: float = 10.0,
        poll_seconds: float = 0.05,  # the server's clock looks at a fake clock this often
    ) -> None:
        levels = levels or [Level("random", "random", built=agent, rating=RANDOM_RATING)]
        self.database = Database(db)
        self.service = PlayService(
            make(game_name), levels, self.database, clock=clock, cache_size=cache_size
        )
        self.app = WebPlay(self.service, read_timeout=read_timeout, poll_seconds=poll_seconds)
        self.httpd = make_server(self.app, "127.0.0.1", 0)
        self.port = self.httpd.server_address[1]
        super().__init__(f"http://127.0.0.1:{self.port}")
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.database.close()


@pytest.fixture
def server() -> Iterator[Server]:
    srv = Server("tictactoe", SeededRandomAgent(1))
    yield srv
    srv.close()


def test_new_game_as_second_player_gets_the_agents_first_move(server: Server) -> None:
    status, game = server.call("POST", "/api/games", {"side": "o"})
    assert status == 201
    assert game["human"] == 1 and game["human_to_move"]
    assert len(game["actions"]) == 1
    assert sum(mark == "X" for mark in game["board"]["cells"]) == 1


def test_a_whole_game_through_the_api_and_resume_by_id(server: Server) -> None:
    _, game = server.call("POST", "/api/games", {"side": "x"})
    game_id = game["id"]
    while not game["over"]:
        legal = [c for c, ok in enumerate(game["board"]["playable_cells"]) if ok]
        status, game = server.call("POST", f"/api/games/{game_id}/move", {"action": legal[-1]})
        assert status == 200, game
    assert game["result"]["outcome"] in ("win", "loss", "draw")
    status, again = server.call("GET", f"/api/games/{game_id}")
    assert status == 200 and again == {**game, "seat": None}  # a watcher's read: no seat
    status, err = server.call("POST", f"/api/games/{game_id}/move", {"action": 0})
    assert status == 409 and "over" in err["error"]


def test_illegal_and_malformed_moves_get_4xx_with_a_reason(server: Server) -> None:
    _, game = server.call("POST", "/api/games", {"side": "o"})
    path = f"/api/games/{game['id']}/move"
    taken = game["actions"][0]
    cases = [
        ({"action": taken}, 422, "taken"),
        ({"action": 9}, 422, "outside"),
        ({"action": -1}, 422, "outside"),
        ({"action": "4"}, 400, "integer"),
        ({"action": True}, 400, "integer"),
        ({"move": "zz"}, 422, "could not read"),
        ({"move": 4}, 400, "text"),
        ([1, 2], 400, "JSON object"),
    ]
    for body, code, words in cases:
        status, err = server.call("POST", path, body)
        assert (status, words in err["error"]) == (code, True), (body, status, err)
    status, err = server.call("POST", path, raw=b"{not json")
    assert status == 400 and "not valid JSON" in err["error"]
    status, err = server.call("POST", path, raw=b"x" * 5000)
    assert status == 413
    # the game is untouched by all of that
    assert server.call("GET", f"/api/games/{game['id']}")[1]["actions"] == game["actions"]
    status, after = server.call("POST", path, {"move": "b2" if taken != 4 else "a1"})
    assert status == 200 and len(after["actions"]) == 3


def test_unknown_ids_methods_paths_and_sides(server: Server) -> None:
    assert server.call("GET", "/api/games/doesnotexist")[0] == 404
    assert server.call("POST", "/api/games/doesnotexist/move", {"action": 0})[0] == 404
    assert server.call("GET", "/api/nothing")[0] == 404
    status, err = server.call("DELETE", "/api/games")
    assert status == 405 and "POST" in err["error"]
    assert server.call("GET", "/api/games/abcdefgh/move")[0] == 405
    status, err = server.call("POST", "/api/games", {"side": "purple"})
    assert status == 400 and "unknown side" in err["error"]


def test_resign_and_analysis(server: Server) -> None:
    _, game = server.call("POST", "/api/games", {"side": "x"})
    status, analysis = server.call("GET", f"/api/games/{game['id']}/analysis")
    assert status == 200
    assert len(analysis["policy"]) == 9 and abs(sum(analysis["policy"]) - 1) < 1e-3
    assert analysis["value"] == 0.25 and analysis["to_move"] == 0
    status, game = server.call("POST", f"/api/games/{game['id']}/resign")
    assert status == 200 and game["result"] == {"outcome": "loss", "winner": 1, "reason": "resign"}
    assert game["resigned"] == 0
    assert server.call("POST", f"/api/games/{game['id']}/resign")[0] == 409
    assert server.call("GET", f"/api/games/{game['id']}/analysis")[0] == 409


def test_memory_is_bounded_but_every_game_stays_in_the_database() -> None:
    srv = Server("tictactoe", SeededRandomAgent(2), cache_size=2)
    try:
        first = srv.call("POST", "/api/games", {})[1]
        second = srv.call("POST", "/api/games", {})[1]
        srv.call("GET", f"/api/games/{first['id']}")  # first is now the most recently used
        srv.call("POST", "/api/games", {})
        assert len(srv.service._cache) == 2 and second["id"] not in srv.service._cache
        # the forgotten game comes back from the database, as it was, and can go on
        status, again = srv.call("GET", f"/api/games/{second['id']}")
        assert status == 200 and again["actions"] == second["actions"]
        status, moved = srv.call("POST", f"/api/games/{second['id']}/move", {"action": 4})
        assert status == 200 and moved["actions"][0] == 4
    finally:
        srv.close()


def test_a_restart_reads_the_most_recent_games_back_before_serving(tmp_path: Path) -> None:
    """After a restart every open page reconnects at once: ``warm_up`` has the games they
    played last in memory by then (up to the cache's size), the most recent ones kept."""
    first = Server("tictactoe", SeededRandomAgent(2), db=tmp_path / "play.sqlite3")
    try:
        ids = [first.call("POST", "/api/games", {})[1]["id"] for _ in range(5)]
        first.call("POST", f"/api/games/{ids[0]}/move", {"action": 4})  # now the most recent
    finally:
        first.close()
    level = Level("random", "random", built=SeededRandomAgent(2), rating=RANDOM_RATING)
    database = Database(tmp_path / "play.sqlite3")
    try:
        service = PlayService(make("tictactoe"), [level], database, cache_size=3)
        assert WebPlay(service).warm_up() == 3
        assert set(service._cache) == {ids[0], ids[4], ids[3]}
        assert list(service._cache)[-1] == ids[0]  # the most recently used
    finally:
        database.close()


def test_games_read_at_once_from_the_file_make_one_copy_without_the_cache_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight requests for a game not in memory: one reads it (outside the lock that requests
    for games in memory wait on), the others get that same copy, never a second one."""
    srv = Server("tictactoe", SeededRandomAgent(2), db=tmp_path / "play.sqlite3")
    try:
        game_id = srv.call("POST", "/api/games", {})[1]["id"]
        srv.service._cache.clear()
        reads, read = [], srv.service.read

        def slow_read(gid: str) -> Any:
            reads.append(srv.app._lock.locked())
            time.sleep(0.2)  # the others arrive meanwhile
            return read(gid)

        monkeypatch.setattr(srv.service, "read", slow_read)
        held: list[Any] = []

        def hold() -> None:
            with srv.app._held(game_id) as (record, _):
                held.append(record)

        threads = [threading.Thread(target=hold) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert reads == [False]  # read once, the cache's lock free meanwhile
        assert len(held) == 8 and all(record is held[0] for record in held)
        assert srv.service._cache[game_id] is held[0] and held[0].users == 0
        # a read that raced past the loading lock (the rematch's) keeps the copy in memory
        assert srv.service.remember(read(game_id)) is held[0]
        assert srv.service._cache[game_id] is held[0]
    finally:
        srv.close()


def test_page_and_static_files_are_served_with_safe_headers(server: Server) -> None:
    for path, kind in [
        ("/", "text/html"),
        ("/static/app.js", "javascript"),
        ("/game/abcdefgh", ""),
    ]:
        with urllib.request.urlopen(server.url + path, timeout=10) as response:
            assert response.status == 200 and kind in response.headers["Content-Type"]
            assert response.headers["X-Content-Type-Options"] == "nosniff"
    for path in ("/static/../web.py", "/static/secret.txt", "/etc/passwd"):
        assert server.call("GET", path)[0] == 404


# ---- the page in a real headless Chromium ---------------------------------------------------


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    driver = chromium(monkeypatch)
    yield driver
    driver.quit()


def chromium(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A headless Chromium with its own profile (its own localStorage: another device)."""
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip(
            "needs Debian's chromium and chromium-driver: "
            "apt-get install -y chromium chromium-driver"
        )
    webdriver = pytest.importorskip(
        "selenium.webdriver", reason="needs selenium: pip install selenium"
    )
    monkeypatch.setenv("SE_OFFLINE", "true")  # Selenium Manager must never download a browser
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1000,900",
    ):
        options.add_argument(flag)
    service = webdriver.ChromeService(executable_path=str(CHROMEDRIVER))
    return webdriver.Chrome(options=options, service=service)


def _play_until_over(driver: Any, rng: np.random.Generator) -> str:
    """Clicks random playable cells (picking numbers as needed) until the result shows."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    result = driver.find_element(By.ID, "result")
    for _ in range(200):
        WebDriverWait(driver, 30).until(
            lambda d: result.is_displayed() or d.find_elements(By.CSS_SELECTOR, ".cell.playable")
        )
        if result.is_displayed():
            return result.text
        try:
            numbers = driver.find_elements(By.CSS_SELECTOR, ".number")
            if numbers:
                numbers[int(rng.integers(len(numbers)))].click()
            cells = driver.find_elements(By.CSS_SELECTOR, ".cell.playable")
            if cells:
                cells[int(rng.integers(len(cells)))].click()
        except StaleElementReferenceException:
            continue  # the page redrew meanwhile (a push from the server): look again
    raise AssertionError("the game did not end within 200 tries")


@pytest.mark.parametrize("game_name", GAME_NAMES)
def test_page_played_to_the_end_in_chromium_and_resumed_after_reload(
    browser: Any, game_name: str
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    srv = Server(game_name, SeededRandomAgent(3))
    try:
        browser.get(srv.url + "/")
        WebDriverWait(browser, 30).until(lambda d: "/game/" in d.current_url)
        text = _play_until_over(browser, np.random.default_rng(4))
        game_id = browser.current_url.rsplit("/", 1)[1]
        _, game = srv.call("GET", f"/api/games/{game_id}")
        assert game["over"] and text == game["result_text"]
        assert text in ("You win!", "The agent wins.", "Draw.")
        marks = [c.text for c in browser.find_elements(By.CSS_SELECTOR, ".cell")]
        browser.refresh()  # reloading the game's link resumes it, finished or not
        WebDriverWait(browser, 30).until(lambda d: d.find_element(By.ID, "result").is_displayed())
        assert browser.find_element(By.ID, "result").text == text
        assert [c.text for c in browser.find_elements(By.CSS_SELECTOR, ".cell")] == marks
        assert sum(1 for m in marks if m) == len(game["actions"])
    finally:
        srv.close()


def test_page_shows_illegal_move_reason_and_analysis(browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    srv = Server("tictactoe", SeededRandomAgent(5))
    try:
        browser.get(srv.url + "/")
        WebDriverWait(browser, 30).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, ".cell.playable")
        )
        browser.find_element(By.ID, "analysis-toggle").click()
        WebDriverWait(browser, 30).until(lambda d: d.find_element(By.ID, "analysis").is_displayed())
        assert "+0.25" in browser.find_element(By.ID, "value-text").text
        assert len(browser.find_elements(By.CSS_SELECTOR, ".cell.heat")) == 9
        # a move the page would never send: the server's refusal reaches the status line
        browser.execute_script(
            "const id = location.pathname.split('/').pop();"
            "fetch('/api/games/' + id + '/move', {method: 'POST', body: JSON.stringify("
            "{action: 99, token: localStorage.getItem('ultimate_rl.token.' + id)})})"
            ".then(r => r.json())"
            ".then(d => showError(d.error));"
        )
        WebDriverWait(browser, 10).until(
            lambda d: "outside" in d.find_element(By.ID, "status").text
        )
    finally:
        srv.close()


# ---- the game site in Chromium: rated, timed play; stale pages ------------------------------


class FirstLegalAgent:
    """The weakest possible level: always the first free cell, so a test knows a winning line."""

    def analyse(self, game, state) -> dict[str, Any]:
        policy = np.zeros(game.num_actions)
        policy[game.legal_actions(state)[0]] = 1.0
        return {"policy": policy, "value": -0.5}

    def select_action(self, game, state) -> int:
        return int(game.legal_actions(state)[0])


class SlowAgent(SeededRandomAgent):
    """Thinks for 1.5 s: long enough for a person to click 'New game' meanwhile."""

    def analyse(self, game, state) -> dict[str, Any]:
        time.sleep(1.5)
        return super().analyse(game, state)


def _wait(driver: Any, condition: Any, seconds: float = 30) -> Any:
    """Waits for the condition; an element a redraw replaced mid-check is retried, not failed."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    waiter = WebDriverWait(driver, seconds, ignored_exceptions=(StaleElementReferenceException,))
    return waiter.until(condition)


def _click_cell(driver: Any, cell: int) -> None:
    from selenium.webdriver.common.by import By

    selector = f".cell.playable[data-cell='{cell}']"

    def click(d: Any) -> bool:  # found and clicked in one try: a redraw between is retried
        found = d.find_elements(By.CSS_SELECTOR, selector)
        if found:
            found[0].click()
        return bool(found)

    _wait(driver, click)


def _new_game(driver: Any, side: str, seconds: int, rated: bool) -> str:
    """Sets up and starts a game from the page's controls; returns its id."""
    from selenium.webdriver.common.by import By

    old = driver.current_url
    driver.find_element(By.CSS_SELECTOR, f"input[name=side][value={side}]").click()
    driver.execute_script(  # the page offers 30/60 s; the API takes any number of seconds
        "const c = document.getElementById('clock');"
        "c.add(new Option(arguments[0], arguments[0])); c.value = arguments[0];",
        str(seconds),
    )
    if driver.find_element(By.ID, "rated").is_selected() != rated:
        driver.find_element(By.ID, "rated").click()
    in_progress = not driver.find_element(By.ID, "result").is_displayed()
    driver.find_element(By.ID, "new-game").click()
    if in_progress:
        driver.switch_to.alert.accept()  # a game is in progress: the page asks first
    _wait(driver, lambda d: d.current_url != old and "/game/" in d.current_url)
    return driver.current_url.rsplit("/", 1)[1]


def test_rated_timed_games_lost_on_time_and_won_and_the_rating_survives_a_restart(
    browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    db = tmp_path / "site.sqlite3"
    levels = [Level("first-cell", "first", built=FirstLegalAgent(), rating=RANDOM_RATING)]
    srv = Server("tictactoe", db=db, levels=levels)
    try:
        browser.get(srv.url + "/")
        _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".cell.playable"))
        assert "3 in a row" in browser.find_element(By.ID, "rules").text
        browser.find_element(By.ID, "player").send_keys("ann")
        # 1. rated, 3 s a move, and no move: the server ends it on time, the page shows it
        lost = _new_game(browser, "x", 3, rated=True)
        _wait(browser, lambda d: "s left" in d.find_element(By.ID, "clock-left").text, 5)
        result = browser.find_element(By.ID, "result")
        _wait(browser, lambda d: result.is_displayed(), 20)
        assert "time" in result.text
        change = browser.find_element(By.ID, "rating-change").text
        assert change == "ann's rating: 1000 → 971"
        assert srv.call("GET", f"/api/games/{lost}")[1]["result"]["reason"] == "time"
        # 2. rated, 60 s a move: b2, c1, a3 wins against the first-free-cell level
        won = _new_game(browser, "x", 60, rated=True)
        for cell in (4, 2, 6):
            _click_cell(browser, cell)
        _wait(browser, lambda d: result.is_displayed())
        assert result.text == "You win!"
        wins = browser.find_elements(By.CSS_SELECTOR, ".cell.win")
        assert sorted(int(c.get_attribute("data-cell")) for c in wins) == [2, 4, 6]
        rating = srv.call("GET", "/api/players/ann")[1]["rating"]
        assert browser.find_element(By.ID, "rating-change").text.endswith(f"→ {round(rating)}")
        _wait(browser, lambda d: d.find_element(By.ID, "review").is_displayed())
        assert len(browser.find_elements(By.CSS_SELECTOR, "#review-moves li")) == 5
    finally:
        srv.close()
    again = Server("tictactoe", db=db, levels=levels)  # a restart: same file, new process state
    try:
        assert again.call("GET", "/api/players/ann")[1]["rating"] == rating
        browser.get(f"{again.url}/game/{won}")
        _wait(browser, lambda d: d.find_element(By.ID, "result").is_displayed())
        assert browser.find_element(By.ID, "result").text == "You win!"
        _wait(browser, lambda d: "ann" in d.find_element(By.ID, "leaderboard-rows").text)
        assert str(round(rating)) in browser.find_element(By.ID, "leaderboard-rows").text
        browser.get(f"{again.url}/game/{lost}")
        _wait(browser, lambda d: "time" in d.find_element(By.ID, "result").text)
    finally:
        again.close()


def test_new_game_while_the_agent_thinks_keeps_the_new_game(browser: Any) -> None:
    """Bug: the old game's late reply switched the board back while the address showed the new."""
    from selenium.webdriver.common.by import By

    srv = Server("tictactoe", SlowAgent(7))
    try:
        browser.get(srv.url + "/")
        _click_cell(browser, 4)  # the agent now thinks for 1.5 s
        # the person's own move is drawn at once, not when the agent's reply comes
        _wait(
            browser,
            lambda d: d.find_element(By.CSS_SELECTOR, ".cell[data-cell='4']").text == "X",
            1,
        )
        assert "thinking" in browser.find_element(By.ID, "status").text
        old = browser.current_url.rsplit("/", 1)[1]
        browser.find_element(By.ID, "new-game").click()
        browser.switch_to.alert.accept()  # mid-game: the page asks first
        _wait(browser, lambda d: not d.current_url.endswith(old))
        new = browser.current_url.rsplit("/", 1)[1]
        _wait(browser, lambda d: len(srv.call("GET", f"/api/games/{old}")[1]["actions"]) == 2)
        time.sleep(0.5)  # the old game's reply has arrived; the page must ignore it
        shown = browser.find_element(By.ID, "watch-link").text
        assert shown.endswith(f"/game/{new}")
        assert [c.text for c in browser.find_elements(By.CSS_SELECTOR, ".cell")] == [""] * 9
        _click_cell(browser, 0)
        _wait(browser, lambda d: len(srv.call("GET", f"/api/games/{new}")[1]["actions"]) == 2)
        assert len(srv.call("GET", f"/api/games/{old}")[1]["actions"]) == 2
    finally:
        srv.close()


def test_two_windows_on_one_game_stay_in_step(browser: Any) -> None:
    """Bug: the second window went stale and reported an illegal move for a board it showed."""
    from selenium.webdriver.common.by import By

    srv = Server("uttt", SeededRandomAgent(8))
    try:
        browser.get(srv.url + "/")
        _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".cell.playable"))
        first = browser.current_window_handle
        browser.switch_to.new_window("window")
        browser.get(srv.url + "/")  # this device's unfinished game: the same one
        second = browser.current_window_handle
        _wait(browser, lambda d: "/game/" in d.current_url)  # the page routes after /api/info
        game_id = browser.current_url.rsplit("/", 1)[1]
        browser.switch_to.window(first)
        assert browser.current_url.endswith(game_id)
        browser.find_elements(By.CSS_SELECTOR, ".cell.playable")[40].click()
        _wait(browser, lambda d: len(srv.call("GET", f"/api/games/{game_id}")[1]["actions"]) == 2)
        browser.switch_to.window(second)
        game = srv.call("GET", f"/api/games/{game_id}")[1]

        def in_step(d: Any) -> bool:
            marks = sum(1 for c in d.find_elements(By.CSS_SELECTOR, ".cell") if c.text)
            active = [
                int(b.get_attribute("data-board"))
                for b in d.find_elements(By.CSS_SELECTOR, ".small.active")
            ]
            return marks == 2 and active == game["board"]["active_blocks"]

        _wait(browser, in_step, 20)
        browser.find_elements(By.CSS_SELECTOR, ".cell.playable")[0].click()
        _wait(browser, lambda d: len(srv.call("GET", f"/api/games/{game_id}")[1]["actions"]) == 4)
        assert "illegal" not in browser.find_element(By.ID, "status").text
        browser.find_element(By.ID, "resign").click()
        browser.switch_to.alert.dismiss()  # resigning asks first; "cancel" keeps the game
        time.sleep(0.3)
        assert not srv.call("GET", f"/api/games/{game_id}")[1]["over"]
    finally:
        srv.close()
