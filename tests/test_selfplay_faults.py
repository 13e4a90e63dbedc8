"""Self-play worker processes: a killed worker is replaced and its games replayed unchanged."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import torch

from ultimate_rl.games import make
from ultimate_rl.nn import build_model
from ultimate_rl.nn.config import ModelConfig
from ultimate_rl.search.puct import SearchConfig
from ultimate_rl.selfplay.parallel import SelfPlayPool
from ultimate_rl.selfplay.worker import SelfPlaySettings

GAME_SPEC = {"name": "tictactoe", "options": {}}


def make_pool(workers: int = 2, **options) -> SelfPlayPool:
    game = make("tictactoe")
    model = build_model(game, ModelConfig.from_dict({"arch": "mlp", "mlp_hidden": [16]}), seed=0)
    search = SearchConfig.from_dict({"num_simulations": 64})
    settings = SelfPlaySettings(workers=workers, parallel_games=4, **options)
    return SelfPlayPool(GAME_SPEC, model, search, settings, torch.device("cpu"))


def test_a_worker_killed_mid_round_is_replaced_and_the_round_is_unchanged(caplog):
    pool = make_pool()
    try:
        expected = pool.play(40, seed=7)  # also waits until both workers are up
        killer = threading.Timer(0.3, os.kill, (pool.backend.pids()[0], signal.SIGKILL))
        killer.start()
        started = time.perf_counter()
        again = pool.play(40, seed=7)
        killer.join()
        seconds = time.perf_counter() - started
        assert pool.backend.replaced == 1, f"the kill came after the round ({seconds:.1f} s)"
    finally:
        pool.close()
    assert again.stats.games == 40
    for name in ("states", "policies", "values", "full_search"):
        np.testing.assert_array_equal(getattr(again, name), getattr(expected, name))
    assert "self-play worker 0 died (exit code -9); replaced" in caplog.text
