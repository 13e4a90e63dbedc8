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


class Server:
    """A play server on 127.0.0.1 with a free port, serving in a thread.

    ``call`` adds the play token of games it created to move and resign requests unless
    ``auth=False`` (the token tests send their own, or none).
    """

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
    ) -> None:
        levels = levels or [Level("random", "random", built=agent, rating=RANDOM_RATING)]
        self.database = Database(db)
        self.service = PlayService(
            make(game_name), levels, self.database, clock=clock, cache_size=cache_size
        )
        self.app = WebPlay(self.service, read_timeout=read_timeout)
        self.httpd = make_server(self.app, "127.0.0.1", 0)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.tokens: dict[str, str] = {}
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

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
    assert status == 200 and again == game
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
    driver = webdriver.Chrome(options=options, service=service)
    yield driver
    driver.quit()


def _play_until_over(driver: Any, rng: np.random.Generator) -> str:
    """Clicks random playable cells (picking numbers as needed) until the result shows."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    result = driver.find_element(By.ID, "result")
    for _ in range(100):
        WebDriverWait(driver, 30).until(
            lambda d: result.is_displayed() or d.find_elements(By.CSS_SELECTOR, ".cell.playable")
        )
        if result.is_displayed():
            return result.text
        numbers = driver.find_elements(By.CSS_SELECTOR, ".number")
        if numbers:
            numbers[int(rng.integers(len(numbers)))].click()
        cells = driver.find_elements(By.CSS_SELECTOR, ".cell.playable")
        cells[int(rng.integers(len(cells)))].click()
    raise AssertionError("the game did not end within 100 clicks")


@pytest.mark.parametrize("game_name", ["tictactoe", "numerical_ttt", "uttt"])
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
