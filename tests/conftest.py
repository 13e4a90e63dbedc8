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

# The test networks are tiny: one thread is faster than two fighting over a 2-core machine.
torch.set_num_threads(1)
