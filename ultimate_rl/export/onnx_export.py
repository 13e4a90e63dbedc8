"""ONNX export of an agent's network, for engines and browsers that run ONNX instead of torch.

The ONNX graph takes ``planes`` ``[N, C, H, W]`` float32 (the game's ``encode``, mover's view)
and returns ``policy_logits`` ``[N, num_actions]`` (NOT masked: set illegal actions to -inf
before a softmax) and ``value`` ``[N]`` in [-1, 1] for the player to move, whatever the value
head (a WDL head is reduced to p_win - p_loss). The batch axis is dynamic. It is the graph the
``onnxruntime`` inference backend runs (``ultimate_rl.nn.inference``).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch

from ultimate_rl.nn.inference import INPUT_NAME, OUTPUT_NAMES, InferenceNet, onnx_graph
from ultimate_rl.nn.models import PolicyValueNet


def export_onnx(model: PolicyValueNet, path: str | os.PathLike) -> Path:
    """Writes ``model`` as one self-contained ONNX file (weights inside) at ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(onnx_graph(model))
    return path


def onnx_max_difference(
    model: PolicyValueNet, path: str | os.PathLike, planes: np.ndarray
) -> float:
    """Largest absolute difference between torch and onnxruntime outputs on ``planes``."""
    import onnxruntime  # imported here: importing ultimate_rl should not pay for it

    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    planes = np.ascontiguousarray(planes, dtype=np.float32)
    logits, values = session.run(list(OUTPUT_NAMES), {INPUT_NAME: planes})
    with torch.inference_mode():
        expected = InferenceNet(model.cpu().eval())(torch.from_numpy(planes))
    return max(
        float(np.abs(logits - expected[0].numpy()).max()),
        float(np.abs(values - expected[1].numpy()).max()),
    )
