"""The takeover runs on the server's clock, not on reads (issue 42): the computer moves for an
away person when their away time ends, whoever reads; it plays a seat only while the other
person is there, so a game whose both people are away waits until one of them comes back."""

from __future__ import annotations

import time
from typing import Any

import pytest
from test_play_people import Pair
from test_play_site import FakeClock
from test_play_web import RANDOM_RATING, SeededRandomAgent, Server

from ultimate_rl.games import make
from ultimate_rl.play.levels import Level, default_levels


def stored_actions(srv: Server, game_id: str) -> list[int]:
    """The game's moves as the database holds them: a look that is no request to the server."""
    stored = srv.database.load_game(game_id)
    assert stored is not None
    return stored[1]["match"]["actions"]


def wait_unread(srv: Server, game_id: str, moves: int, seconds: float = 120) -> list[int]:
    """Waits, sending the server nothing, until the game has ``moves`` moves; its moves."""
    end = time.monotonic() + seconds
    while len(actions := stored_actions(srv, game_id)) < moves:
        assert time.monotonic() < end, f"no move unread in {seconds} s: {actions}"
        time.sleep(0.05)
    return actions


def random_levels() -> list[Level]:
    """What ``agent=random`` offers the takeover: a random player."""
    return [Level("random", "random", built=SeededRandomAgent(3), rating=RANDOM_RATING)]


@pytest.mark.parametrize(
    "levels",
    [random_levels, lambda: default_levels(make("uttt"))],
    ids=["random", "default levels"],
)
def test_the_computer_moves_for_an_away_person_when_their_time_ends_unread(levels: Any) -> None:
    """The issue's steps: X plays 40, O plays 36, then nobody sends anything."""
    clock = FakeClock()
    srv = Server("uttt", levels=levels(), clock=clock)
    try:
        pair = Pair(srv, player="ann", away_seconds=3)
        pair.join("bob")
        assert pair.move(0, 40)[0] == 200
        clock.now += 1
        assert pair.move(1, 36)[0] == 200
        clock.now += 1.5  # X has been away for 2.5 s: theirs still
        time.sleep(0.3)
        assert stored_actions(srv, pair.id) == [40, 36]
        clock.now += 1  # X away for 3.5 s, O here (seen 2.5 s ago): the computer plays for X
        actions = wait_unread(srv, pair.id, 3)
        game = pair.get()  # the first read since: the move is there already
        assert game["actions"] == actions and game["computer_moves"] == [2]
        assert game["to_move"] == 1 and not game["thinking"]
    finally:
        srv.close()


def test_the_takeover_runs_on_the_real_clock_too() -> None:
    srv = Server("tictactoe", levels=random_levels())  # time.time, the server's own clock
    try:
        pair = Pair(srv, away_seconds=0.5)
        pair.join()
        pair.move(0, 4)
        time.sleep(0.2)
        pair.move(1, 0)  # O is here a while longer than X
        assert len(wait_unread(srv, pair.id, 3, seconds=10)) == 3
        assert pair.get()["computer_moves"] == [2]
    finally:
        srv.close()


@pytest.mark.parametrize("back", [0, 1], ids=["the one away comes back", "the other does"])
def test_a_game_whose_people_are_both_away_waits_for_one_of_them(back: int) -> None:
    clock = FakeClock()
    srv = Server("tictactoe", levels=random_levels(), clock=clock)
    try:
        pair = Pair(srv, rated=True, player="ann", away_seconds=5)
        pair.join("bob")
        pair.move(0, 4)
        clock.now += 2
        pair.move(1, 0)
        clock.now += 4  # X away, O here: the computer plays for X
        wait_unread(srv, pair.id, 3)
        clock.now += 30  # now both are away, O to move
        for _ in range(20):  # watchers read and read: nobody moves for anyone
            game = pair.get()
            assert not game["thinking"] and not any(s["present"] for s in game["seats"])
        time.sleep(0.3)
        assert len(stored_actions(srv, pair.id)) == 3 and pair.get()["computer_moves"] == [2]
        game = pair.get(back)  # one comes back (their page reads with their token)
        if back == 1:  # O is to move and here: theirs to play, nobody plays for them
            time.sleep(0.3)
            actions = stored_actions(srv, pair.id)
            assert len(actions) == 3 and not game["seats"][1]["computer"]
            free = next(
                cell for cell in range(9) if cell not in actions
            )  # the random X's cell varies
            assert pair.move(1, free)[0] == 200
        else:  # X is here again: the computer plays for the away O
            assert game["seats"][1]["computer"]
            wait_unread(srv, pair.id, 4)
            assert pair.get()["computer_moves"] == [2, 3]
    finally:
        srv.close()
