"""Self-play on Ray (``selfplay.backend=ray``): two local actors, a killed actor replaced, and
the training loop in both modes. One local Ray runtime serves the whole module."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray")

from test_selfplay_faults import kill_worker_0_when_its_job_is_sent, make_pool  # noqa: E402
from test_train_loop import tiny  # noqa: E402

from ultimate_rl.selfplay.ray_backend import init_ray  # noqa: E402
from ultimate_rl.selfplay.schema import RaySettings  # noqa: E402
from ultimate_rl.train import train  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def ray_runtime():
    started = init_ray(RaySettings())
    yield
    if started:
        ray.shutdown()


def test_two_ray_actors_play_a_round_and_a_killed_actor_is_replaced():
    pool = make_pool(workers=2, backend="ray")
    try:
        expected = pool.play(40, seed=7)
        pid = pool.backend.pids()[0]
        kill_worker_0_when_its_job_is_sent(pool.backend)
        again = pool.play(40, seed=7)  # the killed actor's job is retried on its restart
        assert pool.backend.pids()[0] != pid
    finally:
        pool.close()
    assert again.stats.games == 40
    for name in ("states", "policies", "values", "full_search"):
        np.testing.assert_array_equal(getattr(again, name), getattr(expected, name))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_training_through_ray_actors(tmp_path: Path, mode: str):
    overrides = ["selfplay.backend=ray", "selfplay.workers=2", f"train.mode={mode}"]
    summary = train(tiny("train.iterations=2", "eval.every=0", *overrides), tmp_path)
    assert summary["iterations"] == 2 and summary["games"] >= 2 * 8


def test_arena_games_on_ray_are_the_games_played_locally(tmp_path: Path):
    """``scripts/evaluate.py backend=ray``: the same seeded games, played by Ray tasks."""
    from ultimate_rl.evaluate.arena import MatchConfig, play_match
    from ultimate_rl.games import make

    game = make("tictactoe")
    games = {}
    for backend in ("processes", "ray"):
        config = MatchConfig(num_games=4, workers=1, backend=backend, progress=False)
        result = play_match(game, "random", "uct:num_simulations=20", config)
        games[backend] = sorted((g.index, g.moves) for g in result.records)
    assert games["ray"] == games["processes"]
