"""The selfplay benchmark suite reports its figures (slow: it plays a full round of uttt)."""

from __future__ import annotations

import math

import pytest
from omegaconf import OmegaConf

from ultimate_rl.benchmarks import selfplay


@pytest.mark.slow
def test_selfplay_suite_reports_every_figure():
    figures = selfplay.run(OmegaConf.create({"seconds": 0.5}))
    keys = [
        "selfplay_positions_per_s",
        "selfplay_positions_per_s_torch",
        "selfplay_speedup",
        "selfplay_nn_time_fraction",
        "nn_positions_per_s_torch",
        "nn_positions_per_s_onnxruntime",
        "onnx_refresh_ms",
        "agent_move_ms_torch",
        "agent_move_ms_onnxruntime",
        "agent_default_move_s_mean",
        "agent_default_move_s_max",
        "train_samples_per_s",
        "train_samples_per_s_fp32",
        "train_precision_speedup",
    ]
    for key in keys:
        assert math.isfinite(figures[key]) and figures[key] > 0, key
    assert figures["selfplay_nn_time_fraction"] <= 1.0
    assert figures["agent_default_move_s_mean"] <= figures["agent_default_move_s_max"]
