"""ONNX export of an agent's network, for engines and browsers that run ONNX instead of torch.

The ONNX graph takes ``planes`` ``[N, C, H, W]`` float32 (the game's ``encode``, mover's view)
and returns ``policy_logits`` ``[N, num_actions]`` (NOT masked: set illegal actions to -inf
before a softmax) and ``value`` ``[N]`` in [-1, 1] for the player to move, whatever the value
head (a WDL head is reduced to p_win - p_loss). The batch axis is dynamic.

Needs the ``export`` extra (``onnx``, ``onnxscript``; ``onnxruntime`` to check the result).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ultimate_rl.nn.models import PolicyValueNet

INPUT_NAME = "planes"
OUTPUT_NAMES = ("policy_logits", "value")


class InferenceNet(nn.Module):
    """The network as ONNX users want it: planes in, policy logits and one value out."""

    def __init__(self, model: PolicyValueNet) -> None:
        super().__init__()
        self.model = model

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        outputs = self.model(planes)
        return outputs["policy"], self.model.expected_value(outputs["value"])


def export_onnx(model: PolicyValueNet, path: str | os.PathLike) -> Path:
    """Writes ``model`` as one self-contained ONNX file (weights inside) at ``path``."""
    try:
        import onnxscript  # noqa: F401  (torch's ONNX exporter needs it)
    except ImportError:
        raise ImportError(
            "ONNX export needs onnx and onnxscript: pip install 'ultimate_rl[export]'"
        ) from None
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    net = InferenceNet(model.cpu().eval()).eval()
    example = torch.zeros((2, *model.observation_shape), dtype=torch.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's own deprecation chatter
        program = torch.onnx.export(
            net,
            (example,),
            dynamo=True,
            input_names=[INPUT_NAME],
            output_names=list(OUTPUT_NAMES),
            dynamic_shapes=({0: torch.export.Dim("batch")},),
            verbose=False,
        )
    program.save(str(path), external_data=False)
    return path


def onnx_max_difference(
    model: PolicyValueNet, path: str | os.PathLike, planes: np.ndarray
) -> float:
    """Largest absolute difference between torch and onnxruntime outputs on ``planes``."""
    import onnxruntime

    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    planes = np.ascontiguousarray(planes, dtype=np.float32)
    logits, values = session.run(list(OUTPUT_NAMES), {INPUT_NAME: planes})
    with torch.inference_mode():
        expected = InferenceNet(model.cpu().eval())(torch.from_numpy(planes))
    return max(
        float(np.abs(logits - expected[0].numpy()).max()),
        float(np.abs(values - expected[1].numpy()).max()),
    )
