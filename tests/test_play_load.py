"""The play site's load benchmark, small: games between people over WebSockets, the server
SIGKILLed and restarted a third of the way in, every game checked against the database."""

from __future__ import annotations

from omegaconf import OmegaConf

from ultimate_rl.benchmarks import play


def test_a_small_load_with_a_restart_loses_nothing_and_every_open_game_resumes() -> None:
    cfg = OmegaConf.create(
        {"play": {"game": "uttt", "games": 6, "seconds": 18, "restart": True, "seed": 1}}
    )
    figures = play.run(cfg)
    assert figures["play_games"] == 6 and figures["play_moves"] >= 12
    assert figures["play_5xx"] == 0 and figures["play_other_errors"] == 0
    assert figures["play_inconsistent_pages"] == 0 and figures["play_lost_moves"] == 0
    assert figures["play_illegal_games"] == 0
    assert figures["play_open_at_restart"] >= 1  # uttt games outlast a third of the load
    assert figures["play_resumed_after_restart"] == figures["play_open_at_restart"]
    assert 0 < figures["play_relay_ms_p50"] <= figures["play_relay_ms_p99"]


def test_a_move_sent_before_the_page_connected_is_a_catch_up_not_a_relay() -> None:
    """The other seat's page opened its socket after the move was sent (at the start, or while
    reconnecting after the restart): the move reaching it measures the connection, so it is
    counted apart; a move sent while the page was connected is a latency sample."""
    load = play.Load("http://127.0.0.1:1", games=1, seed=0, game_name="uttt")
    game = play.LoadGame("g", ("a", "b"))
    game.sent = {0: 10.0, 1: 20.0, 2: 30.0}
    load.saw(game, "seat1", 1, [40], opened=15.0)  # seat 1 receives X's first move (ply 0)
    assert load.figures.caught_up == 1 and load.figures.relay_ms == []
    load.saw(game, "seat1", 1, [40, 41, 42], opened=15.0)  # ply 1 is its own, ply 2 a relay
    assert load.figures.caught_up == 1 and len(load.figures.relay_ms) == 1


def test_the_clients_load_the_games_kernels_before_the_pages_start(monkeypatch) -> None:
    """A client's first move loads the game's compiled kernels (half a second): done on the
    pages' loop, it held every page's moves back and sent them in one burst, the load's p99."""
    calls: list[int] = []

    class Recording(type(play.make("uttt"))):  # type: ignore[misc]
        def apply(self, state, action):  # type: ignore[no-untyped-def]
            calls.append(int(action))
            return super().apply(state, action)

    monkeypatch.setattr(play, "make", lambda name: Recording())
    play.Load("http://127.0.0.1:1", games=1, seed=0, game_name="uttt")
    assert len(calls) == 1  # a move applied, so its kernels are loaded, before any page runs
