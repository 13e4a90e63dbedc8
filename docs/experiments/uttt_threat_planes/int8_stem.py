"""How far the int8 path strays on a network's values, and what keeping the stem in float32 buys.

    python docs/experiments/uttt_threat_planes/int8_stem.py CHECKPOINT [CHECKPOINT ...]

For each checkpoint: `nn.numerics`' check of the int8 graph (calibrated on half the game's probe,
checked on the other half) as `nn.quantize.int8_graph` builds it, and with the stem convolution
left in float32 (named like a head, which the quantizer skips); then positions a second at batch
128, one thread, for int8, int8 with a float32 stem, and float32 (medians of 5 interleaved
rounds of 20 calls). A one-off measurement for the record's README, not project code.
"""

import sys
import time

import numpy as np
import onnxruntime as ort

import ultimate_rl.nn.quantize as quantize
from ultimate_rl.nn.checkpoint import load_checkpoint
from ultimate_rl.nn.evaluator import INPUT_NAME, OUTPUT_NAMES, float32_outputs
from ultimate_rl.nn.inference import onnx_graph
from ultimate_rl.nn.numerics import compare, probe_positions

own_initializers = quantize.own_initializers


def stem_as_head(graph):
    graph = own_initializers(graph)
    for node in graph.graph.node:
        if "stem" in node.name:
            node.name += quantize.HEAD_MARK
    return graph


def session(graph: bytes) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    return ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])


def main() -> None:
    for path in sys.argv[1:]:
        checkpoint = load_checkpoint(path)
        model = checkpoint.build_model("cpu")
        probe = probe_positions(checkpoint.make_game())
        calibrate, check = probe.half(0), probe.half(1)
        sessions = {"int8": session(quantize.int8_graph(model, calibrate.planes))}
        quantize.own_initializers = stem_as_head
        try:
            sessions["int8, stem float32"] = session(quantize.int8_graph(model, calibrate.planes))
        finally:
            quantize.own_initializers = own_initializers
        sessions["float32"] = session(onnx_graph(model))
        reference = float32_outputs(model, check.planes)
        for name in ("int8", "int8, stem float32"):
            got = sessions[name].run(OUTPUT_NAMES, {INPUT_NAME: check.planes})
            print(f"{path} {name}: {compare(reference, got, check.masks).summary()}")
        batch = np.ascontiguousarray(probe.planes[:128])
        rates = {name: [] for name in sessions}
        for _ in range(5):
            for name, s in sessions.items():
                started = time.perf_counter()
                for _ in range(20):
                    s.run(OUTPUT_NAMES, {INPUT_NAME: batch})
                rates[name].append(20 * 128 / (time.perf_counter() - started))
        print(path, {name: int(np.median(found)) for name, found in rates.items()}, "positions/s")


if __name__ == "__main__":
    main()
