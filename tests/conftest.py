"""Shared test setup."""

import atexit
import os
import shutil
import tempfile

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
