"""The analysis board: ``POST /api/analysis`` over a real server, and the page in Chromium."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest
from test_play_web import RANDOM_RATING, SeededRandomAgent, Server, _click_cell, _wait, chromium

from ultimate_rl.agents.base import Analysis
from ultimate_rl.games import make
from ultimate_rl.games.registry import GAME_NAMES
from ultimate_rl.play.levels import Level
from ultimate_rl.play.notation import line_text, split_moves


class LineAgent(SeededRandomAgent):
    """Analyses like a searching agent: its line is the first legal moves, one after another,
    with one illegal move at the end (the site must cut the line there)."""

    def analyse(self, game: Any, state: Any) -> Analysis:
        found = super().analyse(game, state)
        line, position = [], state
        for _ in range(3):
            if game.is_terminal(position):
                break
            line.append(int(game.legal_actions(position)[0]))
            position = game.apply(position, line[-1])
        return Analysis(found["policy"], 0.25, pv=(*line, line[0]))


@pytest.fixture
def server() -> Iterator[Server]:
    srv = Server("uttt", LineAgent(1))
    yield srv
    srv.close()


def analyse(srv: Server, body: Any) -> tuple[int, dict[str, Any]]:
    return srv.call("POST", "/api/analysis", body)


def check_position(game_name: str, answer: dict[str, Any]) -> None:
    """The answer is the position after its moves: shares over the legal moves summing to 1,
    a value in [-1, 1], a line of legal moves from there."""
    game = make(game_name)
    state = game.apply_sequence(answer["moves"])
    legal = game.legal_mask(state)
    policy = np.array(answer["policy"])
    assert policy.shape == (game.num_actions,)
    assert policy.sum() == pytest.approx(1.0, abs=1e-4) and not policy[~legal].any()
    assert answer["to_move"] == game.current_player(state)
    assert answer["value"] is None or -1 <= answer["value"] <= 1
    assert answer["pv"], "a line of at least the best move"
    for action in answer["pv"]:
        assert game.legal_mask(state)[action], answer["pv"]
        state = game.apply(state, action)
    assert answer["pv_text"] == [game.move_text(a).split(" (")[0] for a in answer["pv"]]


def test_a_pasted_move_list_and_action_numbers_name_the_same_position(server: Server) -> None:
    status, typed = analyse(server, {"moves": "e5 e4 d2"})
    assert status == 200, typed
    status, numbers = analyse(server, {"moves": typed["moves"]})
    assert status == 200, numbers
    game = make("uttt")
    assert typed["moves"] == [game.string_to_action(m) for m in ("e5", "e4", "d2")]
    assert numbers["moves"] == typed["moves"] and numbers["line"] == "e5 e4 d2"
    assert typed["board"]["cells"] == numbers["board"]["cells"]
    assert sum(1 for c in typed["board"]["cells"] if c) == 3
    check_position("uttt", typed)
    assert typed["value"] == 0.25 and typed["game"] == "uttt" and typed["level"]["name"] == "random"
    # the agent's line, cut before its illegal last move
    assert len(typed["pv"]) == 3 and typed["to_move"] == 1
    # board-and-cell pairs, separated by commas, read the same
    assert analyse(server, {"moves": "5 5, 5 2, 2 4"})[1]["moves"] == typed["moves"]


def test_the_start_position_and_the_sites_game_by_default(server: Server) -> None:
    status, start = analyse(server, {})
    assert status == 200, start
    assert start["moves"] == [] and start["to_move"] == 0 and not start["over"]
    check_position("uttt", start)
    assert len([p for p in start["policy"] if p > 0]) == 81


@pytest.mark.parametrize(
    ("moves", "reason"),
    [
        ("e5 e4 x9", "move 3 'x9' is not a move: column 'x' is off the board"),
        ("e5 e4 e4", "move 3 'e4' is illegal: e4 (board 5, cell 2): that cell is already taken"),
        ("e5 a1", "move 2 'a1' is illegal: a1 (board 1, cell 1): you must play in board 5"),
        ([40, 37, 37], "move 3 (action 37) is illegal: e4 (board 5, cell 2): that cell is"),
        ([40, 81], "move 2 (action 81) is outside 0..80"),
        ([40, "e4"], "move 2 is 'e4'; send action numbers (integers) or one text"),
        ([40, True], "move 2 is True"),
        ({"e5": 1}, "'moves' must be a list of action numbers"),
    ],
)
def test_a_move_that_cannot_be_played_is_named_by_its_number(
    server: Server, moves: Any, reason: str
) -> None:
    status, answer = analyse(server, {"moves": moves})
    assert status == 400 and answer["error"].startswith(reason), answer


def test_a_move_after_the_end_of_the_game_is_refused() -> None:
    srv = Server("tictactoe", LineAgent(2))
    try:
        status, end = analyse(srv, {"moves": "a1 a2 b1 b2 c1"})  # X wins the top row
        assert status == 200 and end["over"] and end["result_text"] == "X won", end
        assert end["to_move"] is None and end["pv"] == [] and not any(end["policy"])
        status, answer = analyse(srv, {"moves": "a1 a2 b1 b2 c1 c2"})
        assert status == 400, answer
        assert answer["error"].startswith("move 6 'c2' comes after the end of the game (X won")
        status, answer = analyse(srv, {"moves": [0, 3, 1, 4, 2, 5]})
        assert status == 400 and answer["error"].startswith("move 6 (action 5) comes after")
    finally:
        srv.close()


def test_unknown_games_levels_and_malformed_bodies_are_400(server: Server) -> None:
    status, answer = analyse(server, {"game": "chess"})
    assert status == 400 and all(name in answer["error"] for name in GAME_NAMES), answer
    status, answer = analyse(server, {"level": "grandmaster"})
    assert status == 400 and "choose one of ['random']" in answer["error"], answer
    assert analyse(server, [40])[0] == 400  # the body must be an object
    status, answer = server.call("POST", "/api/analysis", raw=b"{moves")
    assert status == 400 and "not valid JSON" in answer["error"]
    status, answer = analyse(server, {"from_game": 7})
    assert status == 400 and "'from_game'" in answer["error"]
    assert server.call("GET", "/api/analysis")[0] == 405


def test_busy_level_answers_429_at_once(server: Server) -> None:
    level = server.service.levels["random"]
    with level.lock:  # a game's move, or another analysis
        status, answer = analyse(server, {"moves": "e5"})
    assert status == 429 and "busy" in answer["error"] and "try again" in answer["error"]
    assert analyse(server, {"moves": "e5"})[0] == 200  # free again


@pytest.mark.parametrize("game_name", GAME_NAMES)
def test_every_registered_game_is_analysed_by_its_strongest_level(game_name: str) -> None:
    """A game other than the site's gets its default levels; a fake stands in for the shipped
    network so the test needs no torch (the other games' levels are real: perfect, UCT)."""
    srv = Server("uttt", LineAgent(3))
    try:
        game = make(game_name)
        if game_name != "uttt":
            srv.app.board.target(game_name)  # built now, to check which level it picked
        moves = [int(a) for a in _random_line(game, 3)]
        status, answer = analyse(srv, {"game": game_name, "moves": line_text(game, moves)})
        assert status == 200, answer
        assert answer["moves"] == moves and answer["game"] == game_name
        check_position(game_name, answer)
        expected = {"uttt": "random", "connect_four": "uct-1000"}.get(game_name, "perfect")
        assert answer["level"]["name"] == expected
    finally:
        srv.close()


def _random_line(game: Any, plies: int) -> list[int]:
    rng, state, line = np.random.default_rng(7), game.initial_state(), []
    for _ in range(plies):
        line.append(int(rng.choice(game.legal_actions(state))))
        state = game.apply(state, line[-1])
    return line


@pytest.mark.parametrize("game_name", GAME_NAMES)
def test_a_move_list_reads_back_as_written(game_name: str) -> None:
    game = make(game_name)
    for seed in range(5):
        rng, state, line = np.random.default_rng(seed), game.initial_state(), []
        while not game.is_terminal(state):
            line.append(int(rng.choice(game.legal_actions(state))))
            state = game.apply(state, line[-1])
        words = split_moves(game, line_text(game, line))
        assert [game.parse_move(w) for w in words] == line


def _rated_game(srv: Server, **body: Any) -> dict[str, Any]:
    status, game = srv.call("POST", "/api/games", {"side": "x", "wait": True, **body})
    assert status == 201, game
    return game


def test_games_in_progress_open_only_when_unrated_against_a_level() -> None:
    levels = [Level("random", "random", built=LineAgent(4), rating=RANDOM_RATING)]
    srv = Server("tictactoe", levels=levels)
    try:
        rated = _rated_game(srv, rated=True, player="ann")
        status, answer = analyse(srv, {"from_game": rated["id"]})
        assert status == 403 and "rated game" in answer["error"], answer
        people = _rated_game(srv, opponent="person")
        status, answer = analyse(srv, {"from_game": people["id"]})
        assert status == 403 and "two people" in answer["error"], answer
        casual = _rated_game(srv)
        status, answer = analyse(srv, {"from_game": casual["id"]})
        assert status == 200 and answer["moves"] == casual["actions"], answer
        assert analyse(srv, {"from_game": casual["id"], "moves": []})[0] == 400
        assert analyse(srv, {"from_game": "nosuchgame1"})[0] == 404
        # once over, the rated game opens: its moves and the position at its end
        status, _ = srv.call("POST", f"/api/games/{rated['id']}/resign", {})
        assert status == 200
        status, answer = analyse(srv, {"from_game": rated["id"]})
        assert status == 200 and answer["from_game"] == rated["id"], answer
        assert answer["moves"] == srv.call("GET", f"/api/games/{rated['id']}")[1]["actions"]
    finally:
        srv.close()


# ---- the page in headless Chromium ----------------------------------------------------------


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    driver = chromium(monkeypatch)
    yield driver
    driver.quit()


def test_analysis_page_clicks_steps_back_and_forth_and_reads_a_pasted_line(browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    srv = Server("uttt", LineAgent(5))
    try:
        browser.get(srv.url + "/")
        _wait(browser, lambda d: d.find_element(By.ID, "analysis-board-link").is_displayed())
        browser.find_element(By.ID, "analysis-board-link").click()
        # the page writes its position into the query once drawn (/analysis?kind=...&ply=0)
        _wait(browser, lambda d: urlsplit(d.current_url).path == "/analysis")

        def shown(ply: int) -> Any:
            return lambda d: d.find_element(By.ID, "board").get_attribute("data-ply") == str(ply)

        _wait(browser, shown(0))
        for cell in (40, 39, 37):  # e5, then d5 (board 5's cell 4), then b5 in board 4
            _click_cell(browser, cell)
        _wait(browser, shown(3))
        assert len(browser.find_elements(By.CSS_SELECTOR, ".cell.heat")) > 0
        assert "+0.25" in browser.find_element(By.ID, "value-text").text
        assert browser.find_element(By.ID, "pv").text  # the agent's line, in notation
        assert browser.find_element(By.ID, "line").get_attribute("value") == "e5 d5 b5"
        browser.find_element(By.ID, "back").click()
        _wait(browser, shown(2))
        browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_LEFT)
        _wait(browser, shown(1))
        browser.find_element(By.ID, "forward").click()
        _wait(browser, shown(2))
        assert len(browser.find_elements(By.CSS_SELECTOR, ".cell.p0")) == 1  # X's e5
        assert len(browser.find_elements(By.CSS_SELECTOR, ".cell.p1")) == 1  # O's d5
        line = browser.find_element(By.ID, "line")
        line.clear()
        line.send_keys("e5 e4 d2 a5")
        browser.find_element(By.ID, "load").click()
        _wait(browser, shown(4))
        assert len(browser.find_elements(By.CSS_SELECTOR, ".cell.p0, .cell.p1")) == 4
        assert browser.find_element(By.ID, "forward").get_attribute("disabled")  # at its end
        assert "e5 e4 d2 a5" in browser.current_url.replace("+", " ").replace("%20", " ")
        line.clear()
        line.send_keys("e5 e5")
        browser.find_element(By.ID, "load").click()
        _wait(browser, lambda d: "move 2 'e5' is illegal" in d.find_element(By.ID, "status").text)
    finally:
        srv.close()
