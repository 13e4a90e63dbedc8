"""Shared test setup."""

import atexit
import os
import shutil
import tempfile

import numpy as np
import pytest
import torch

# inference=auto keeps its path timings in a cache: the tests use a fresh one of their own
# (worker processes inherit it), so no earlier run's timings decide their paths.
os.environ["ULTIMATE_RL_CACHE_DIR"] = tempfile.mkdtemp(prefix="ultimate_rl_test_cache_")
atexit.register(shutil.rmtree, os.environ["ULTIMATE_RL_CACHE_DIR"], ignore_errors=True)
# ...and inference=auto takes onnxruntime float32 without timing, so that no test's figures
# depend on which path won a timing on a loaded machine; tests of auto's choice unset it.
os.environ["ULTIMATE_RL_INFERENCE"] = "onnxruntime"

# The test networks are tiny: one thread is faster than two fighting over a 2-core machine.
torch.set_num_threads(1)


@pytest.fixture(scope="module")
def ttt_positions():
    """Every reachable tic-tac-toe position, keyed by its network planes."""
    from ultimate_rl.games import make  # here: the package loads after the settings above

    ttt = make("tictactoe")
    by_planes: dict[bytes, np.ndarray] = {}
    stack = [ttt.initial_state()]
    while stack:
        state = stack.pop()
        key = ttt.encode(state).tobytes()
        if key in by_planes:
            continue
        by_planes[key] = state
        if not ttt.is_terminal(state):
            stack.extend(ttt.apply(state, int(a)) for a in ttt.legal_actions(state))
    return by_planes
