"""The int8 ONNX graph: onnxruntime's static quantization of ``onnx_graph``'s float32 model.

Weights are int8 per output channel, activations uint8 with ranges calibrated (min/max) on real
positions, in the QDQ form that onnxruntime's CPU provider fuses into int8 convolutions (VNNI /
AMX-INT8 kernels where the CPU has them). Only the trunk is quantized: the heads' layers stay
float32, which keeps the policy's move order closer to float32's at little cost (the trunk holds
nearly all the multiply-adds). With ``float_stem`` the stem (the first convolution, reading the
input planes) stays float32 too: the first fallback when the int8 outputs stray (a network that
reads uttt's threat planes strayed 0.142 in value, 0.030 with a float32 stem, at 13% of int8's
speed). Quantizing the 3x32 network takes ~0.1 s, so a self-play evaluator redoes it whenever the
weights change.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ultimate_rl.nn.inference import INPUT_NAME, onnx_graph
from ultimate_rl.nn.models import PolicyValueNet

if TYPE_CHECKING:  # imported where a graph is quantized: a fifth of importing the training loop
    import onnx

HEAD_MARK = "_head"  # ONNX node names inside a head (policy_head, value_head, aux_heads)
STEM_MARK = "stem"  # ONNX node names of the stem (``PolicyValueNet.stem``)


def own_initializers(graph: onnx.ModelProto) -> onnx.ModelProto:
    """``graph`` with every weight its own initializer.

    The exporter stores equal weights once and feeds the others through ``Identity`` nodes (a
    fresh network's folded biases are all zero); the quantizer cannot quantize a bias that is
    not an initializer, so those convolutions would stay float32 between quantize / dequantize
    pairs, several times slower than int8.
    """
    import onnx

    initializers = {tensor.name: tensor for tensor in graph.graph.initializer}
    shared = [
        node
        for node in graph.graph.node
        if node.op_type == "Identity" and node.input[0] in initializers
    ]
    for node in shared:
        copy = onnx.TensorProto()
        copy.CopyFrom(initializers[node.input[0]])
        copy.name = node.output[0]
        graph.graph.initializer.append(copy)
        graph.graph.node.remove(node)
    return graph


def int8_graph(model: PolicyValueNet, calibration: np.ndarray, float_stem: bool = False) -> bytes:
    """The int8 ONNX model of ``model``, its activation ranges calibrated on ``calibration``
    (planes [N, C, H, W] float32 of real positions), as bytes; ``float_stem``: the stem kept in
    float32 as well as the heads."""
    import onnx
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    class _Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.batches = iter([{INPUT_NAME: np.ascontiguousarray(calibration, np.float32)}])

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.batches, None)

    graph = own_initializers(onnx.load_from_string(onnx_graph(model)))
    marks = (HEAD_MARK, STEM_MARK) if float_stem else (HEAD_MARK,)
    heads = [node.name for node in graph.graph.node if any(m in node.name for m in marks)]
    quiet = logging.getLogger().level
    logging.getLogger().setLevel(logging.ERROR)  # its advice to pre-process a graph this small
    try:
        with tempfile.TemporaryDirectory(prefix="ultimate_rl_int8_") as folder:
            output = Path(folder) / "int8.onnx"
            quantize_static(
                graph,
                output,
                _Reader(),
                quant_format=QuantFormat.QDQ,
                activation_type=QuantType.QUInt8,
                weight_type=QuantType.QInt8,
                per_channel=True,
                nodes_to_exclude=heads,
                calibrate_method=CalibrationMethod.MinMax,
                extra_options={"CalibTensorRangeSymmetric": False},
            )
            return output.read_bytes()
    finally:
        logging.getLogger().setLevel(quiet)
