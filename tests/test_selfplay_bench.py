"""The selfplay benchmark suite reports its figures (slow: it plays a full round of uttt)."""

from __future__ import annotations

import math

import pytest
from omegaconf import OmegaConf

from ultimate_rl.benchmarks import selfplay
from ultimate_rl.nn import PATHS


@pytest.mark.slow
def test_selfplay_suite_reports_every_figure():
    figures = selfplay.run(OmegaConf.create({"seconds": 0.5}))
    keys = [
        "selfplay_positions_per_s",
        "selfplay_positions_per_s_torch",
        "selfplay_speedup",
        "selfplay_nn_time_fraction",
        *(f"nn_positions_per_s_{p}_b{b}" for p in PATHS for b in (1, 64, 256)),
        "numerics_torch_bf16_top_move_agreement",
        "numerics_torch_bf16_max_value_difference",
        "numerics_onnxruntime_int8_top_move_agreement",
        "numerics_onnxruntime_int8_max_value_difference",
        "onnx_refresh_ms",
        "int8_refresh_ms",
        "agent_simulations_per_s",
        "agent_simulations_per_s_baseline",
        "agent_speedup",
        "agent_default_move_s_mean",
        "agent_default_move_s_max",
        "train_samples_per_s",
        "train_samples_per_s_fp32",
        "train_precision_speedup",
    ]
    for key in keys:
        assert math.isfinite(figures[key]) and figures[key] > 0, key
    assert figures["selfplay_nn_time_fraction"] <= 1.0
    assert figures["selfplay_inference_path"] in PATHS and figures["agent_inference_path"] in PATHS
    assert figures["numerics_positions"] == selfplay.NUMERICS_POSITIONS
    assert figures["agent_default_move_s_mean"] <= figures["agent_default_move_s_max"]
