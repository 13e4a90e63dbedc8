"""The network as inference sees it, in ONE wrapper that every backend and the ONNX file run.

``InferenceNet``: planes ``[N, C, H, W]`` float32 (the game's ``encode``, mover's view) ->
policy logits ``[N, num_actions]`` float32 (raw, not masked) and one value ``[N]`` in [-1, 1]
for the player to move, whatever the value head (a WDL head is reduced to p_win - p_loss). The
torch evaluator calls it, and ``onnx_graph`` exports it, so both backends compute the same thing
and a change to the model's outputs is made here once.
"""

from __future__ import annotations

import io
import warnings

import torch
from torch import nn

from ultimate_rl.nn.models import PolicyValueNet

INPUT_NAME = "planes"
OUTPUT_NAMES = ("policy_logits", "value")
WEIGHT_PREFIX = "model."  # an ONNX initializer's name is this + the model's state_dict key


class InferenceNet(nn.Module):
    """Planes in, policy logits and one value per position out (see module doc)."""

    def __init__(self, model: PolicyValueNet) -> None:
        super().__init__()
        self.model = model

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        outputs = self.model(planes)  # the one place inference calls the model
        logits, value_out = outputs["policy"], outputs["value"]
        return logits.float(), self.model.expected_value(value_out)


def onnx_graph(model: PolicyValueNet) -> bytes:
    """The ONNX model of ``InferenceNet`` over an eval-mode, batch-norm-folded copy of ``model``
    (weights inside, batch axis dynamic), as bytes.

    torch's TorchScript-based exporter (``dynamo=False``) takes ~20-90 ms here and needs only the
    ``onnx`` package; the ``torch.export`` one takes 2-7 s and needs ``onnxscript`` as well.
    Constant folding is off so that each weight keeps its name (``WEIGHT_PREFIX`` + its
    state_dict key), which is how ``OnnxEvaluator`` swaps in new weights without exporting again.
    """
    folded = model.for_inference().cpu().float()
    example = torch.zeros((2, *folded.observation_shape), dtype=torch.float32)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's deprecation notice
        torch.onnx.export(
            InferenceNet(folded).eval(),
            (example,),
            buffer,
            dynamo=False,
            do_constant_folding=False,
            input_names=[INPUT_NAME],
            output_names=list(OUTPUT_NAMES),
            dynamic_axes={INPUT_NAME: {0: "batch"}},
        )
    return buffer.getvalue()
