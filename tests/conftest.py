"""Shared test setup."""

import torch

# The test networks are tiny: one thread is faster than two fighting over a 2-core machine.
torch.set_num_threads(1)
