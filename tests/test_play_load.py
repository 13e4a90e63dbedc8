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
