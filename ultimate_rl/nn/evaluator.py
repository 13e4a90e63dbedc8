"""The bridge from a torch network to the search's ``evaluate`` callable (the search contract).

``evaluate(planes [N, C, H, W] float32, masks [N, A] bool) -> (logits [N, A] float32,
values [N] float32 in [-1, 1], mover's view)``. Search never imports ``nn``; it only calls this.

Four paths run the same ``InferenceNet`` (``PATHS``):

- ``torch``: float32 (bf16 autocast on CUDA, as ``precision=auto`` says);
- ``torch_bf16``: bf16 autocast and channels-last input (oneDNN's AMX / AVX512-BF16 kernels on
  a CPU that has them);
- ``onnxruntime``: float32 on onnxruntime's CPU provider, 1.5-2.5x plain torch for the small
  networks here;
- ``onnxruntime_int8``: the int8 graph of ``nn.quantize`` (VNNI / AMX-INT8 kernels), calibrated
  and checked against float32 on real positions of the game at every weight change.

``make_evaluator`` (``nn.choice``) builds one; with ``backend="auto"`` it chooses by measurement
on the machine at hand: the fastest path at the caller's batch size whose outputs pass
``nn.numerics``' rule. ``scripts/bench.py suite=selfplay`` reports every path's speed.
"""

from __future__ import annotations

from itertools import chain

import numpy as np
import torch

from ultimate_rl.nn.device import autocast, resolve_device, resolve_precision
from ultimate_rl.nn.inference import INPUT_NAME, OUTPUT_NAMES, InferenceNet, onnx_graph
from ultimate_rl.nn.models import MASKED_LOGIT, PolicyValueNet
from ultimate_rl.nn.numerics import Numerics, Probe, compare
from ultimate_rl.nn.quantize import int8_graph

PIN_ENV = "ULTIMATE_RL_INFERENCE"
"""An environment variable naming a path that ``auto`` then takes without measuring: the same
path on every machine and run (the test suite pins ``onnxruntime`` this way)."""


class NetworkEvaluator:
    """Runs ``model`` in inference mode (torch) on batches of planes; illegal actions get
    ``MASKED_LOGIT``.

    On the CPU the input arrays are shared with torch (``torch.from_numpy``), not copied. The
    evaluator holds the model itself, so in-process weight updates are seen at once; it puts the
    model in eval mode whenever it is called, so a trainer sharing the model calls
    ``model.train()`` before its own optimisation steps.
    """

    backend = "torch"
    channels_last = False  # feed the network channels-last planes (oneDNN's fast layout)
    fixed_precision: str | None = None  # a path that runs one precision whatever is asked
    needs_probe = False  # a path that calibrates or checks itself on positions of the game
    choice = None  # the ``nn.choice.PathChoice`` that picked this path, when ``auto`` did

    @property
    def fell_back(self) -> bool:
        """A reduced-precision path whose current weights failed its check runs float32."""
        return False

    def __init__(
        self,
        model: PolicyValueNet,
        device: str | torch.device = "auto",
        *,
        precision: str = "auto",
        max_batch: int | None = None,
        probe: Probe | None = None,
    ) -> None:
        if max_batch is not None and max_batch < 1:
            raise ValueError(f"max_batch must be a positive integer or None, got {max_batch}")
        if self.fixed_precision is not None:
            if precision not in ("auto", self.fixed_precision):
                raise ValueError(
                    f"the {self.backend} path runs {self.fixed_precision}, not "
                    f"precision={precision!r}"
                )
            precision = self.fixed_precision
        if self.needs_probe and probe is None:
            raise ValueError(
                f"the {self.backend} path calibrates on positions of the network's game: pass "
                "game= (or probe=) to make_evaluator"
            )
        self.device = resolve_device(device)
        self.dtype = resolve_precision(precision, self.device)
        self.model = model.to(self.device).eval()
        self.net = InferenceNet(self.model)
        self.max_batch = max_batch
        self.observation_shape = model.observation_shape
        self.num_actions = model.num_actions
        self.probe = probe
        self._setup(precision)

    def _setup(self, precision: str) -> None:
        """What a path prepares beyond the torch model (called once, at the end of __init__)."""

    def __call__(self, planes: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        planes, masks = self._check(planes, masks)
        self._prepare()
        n = planes.shape[0]
        step = self.max_batch or max(n, 1)
        starts = range(0, n, step) or [0]  # an empty batch still gives arrays of the right shapes
        parts = [self._forward(planes[start : start + step]) for start in starts]
        logits = parts[0][0] if len(parts) == 1 else np.concatenate([p[0] for p in parts])
        values = parts[0][1] if len(parts) == 1 else np.concatenate([p[1] for p in parts])
        np.putmask(logits, ~masks, MASKED_LOGIT)
        return logits, values

    def _prepare(self) -> None:
        """Called before each batch: the model in eval mode (a trainer may have switched it)."""
        if self.model.training:
            self.model.eval()

    def _forward(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = torch.from_numpy(planes).to(self.device, non_blocking=True)
        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        with torch.inference_mode(), autocast(self.device, self.dtype):
            logits, values = self.net(x)
        return logits.cpu().numpy(), values.float().cpu().numpy()

    def _check(self, planes: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        planes = np.ascontiguousarray(planes, dtype=np.float32)
        masks = np.ascontiguousarray(masks, dtype=bool)
        if planes.ndim != 4 or planes.shape[1:] != self.observation_shape:
            raise ValueError(
                f"evaluate expects planes of shape [N, *{list(self.observation_shape)}] (the "
                f"game's encode), got {list(planes.shape)}; is this the network's game?"
            )
        if masks.shape != (planes.shape[0], self.num_actions):
            raise ValueError(
                f"evaluate expects masks of shape [{planes.shape[0]}, {self.num_actions}] "
                f"(one row per position, one column per action), got {list(masks.shape)}"
            )
        return planes, masks


class TorchBf16Evaluator(NetworkEvaluator):
    """torch with bf16 autocast and channels-last planes: on a CPU with AMX (or AVX512-BF16)
    oneDNN runs the convolutions on its bf16 units; on CUDA, tensor cores."""

    backend = "torch_bf16"
    channels_last = True
    fixed_precision = "bf16"


class OnnxEvaluator(NetworkEvaluator):
    """The same evaluator run by onnxruntime's CPU provider on an ONNX export of ``model``.

    An onnxruntime session holds a snapshot of the weights, so before each batch the evaluator
    checks torch's version counters of the model's weights and buffers (bumped by every in-place
    write: optimiser steps, ``load_state_dict``) and exports again when they moved: whoever
    changes the weights in place, the next call sees them (a parameter replaced by a new tensor
    object is not: build a new evaluator then). A refresh costs one export, tens of milliseconds
    for the networks here (``scripts/bench.py suite=selfplay`` reports it). The session uses as
    many threads as torch (``torch.set_num_threads``), so one thread setting governs both backends.
    """

    backend = "onnxruntime"

    def _setup(self, precision: str) -> None:
        if self.device.type != "cpu" or self.dtype is not None:
            raise ValueError(
                f"the {self.backend} backend runs on the CPU (got device {self.device}, "
                f"precision {precision!r}); use backend='torch' or 'auto' on CUDA"
            )
        import onnxruntime  # a core dependency, imported late: it adds ~0.2 s to any import

        self._onnxruntime = onnxruntime
        # tensors made under torch.inference_mode have no version counter; training never
        # writes them
        self._tensors = [
            t for t in chain(self.model.parameters(), self.model.buffers()) if not t.is_inference()
        ]
        self._version = -1
        self._session = None

    def refresh(self) -> None:
        """Exports the model's current weights into a new onnxruntime session."""
        self._session = self._session_of_weights()
        self._version = self._weights_version()

    def _new_session(self, graph: bytes):  # -> onnxruntime.InferenceSession
        options = self._onnxruntime.SessionOptions()
        options.intra_op_num_threads = torch.get_num_threads()
        options.inter_op_num_threads = 1
        return self._onnxruntime.InferenceSession(
            graph, options, providers=["CPUExecutionProvider"]
        )

    def _session_of_weights(self):  # -> onnxruntime.InferenceSession
        """The session the path runs, of the model's current weights."""
        return self._new_session(onnx_graph(self.model))

    def _weights_version(self) -> int:
        """Moves whenever a weight or buffer is written: each counter only grows."""
        return sum(t._version for t in self._tensors)

    def _prepare(self) -> None:
        if self._version != self._weights_version():
            self.refresh()

    def _forward(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        logits, values = self._session.run(OUTPUT_NAMES, {INPUT_NAME: planes})
        return logits, values


class OnnxInt8Evaluator(OnnxEvaluator):
    """onnxruntime on ``nn.quantize``'s int8 graph, calibrated on half of ``probe`` (real
    positions of the game) and checked on the other half at every weight change: weights whose
    int8 outputs fail ``nn.numerics``' rule try the graph with a float32 stem, and if that fails
    too run in float32 until the next change (``fallbacks`` counts those; ``numerics`` holds the
    last check, ``float_stem`` whether the stem is float32). Once a float32 stem was needed,
    later weights try it first: a network that strayed keeps straying."""

    backend = "onnxruntime_int8"
    needs_probe = True
    numerics: Numerics | None = None  # the last weight change's check
    fallbacks = 0  # weight versions that ran in float32
    float_stem = False  # the int8 graph keeps its stem in float32

    @property
    def fell_back(self) -> bool:
        """The current weights failed their checks: they run in float32."""
        return self.numerics is not None and not self.numerics.passes

    def _session_of_weights(self):  # -> onnxruntime.InferenceSession
        check = self.probe.half(1)
        reference = float32_outputs(self.model, check.planes)
        for float_stem in dict.fromkeys((self.float_stem, True)):
            graph = int8_graph(self.model, self.probe.half(0).planes, float_stem)
            session = self._new_session(graph)
            got = session.run(OUTPUT_NAMES, {INPUT_NAME: check.planes})
            self.numerics = compare(reference, got, check.masks)
            if self.numerics.passes:
                self.float_stem = float_stem
                return session
        self.fallbacks += 1
        return super()._session_of_weights()


def float32_path(device: torch.device) -> str:
    """The float32 path to judge a network by: onnxruntime on a CPU (the same numbers as torch,
    faster), torch on CUDA."""
    return "onnxruntime" if device.type == "cpu" else "torch"


def float32_outputs(model: PolicyValueNet, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The reference: ``InferenceNet`` in float32 torch (raw logits, values) on ``planes``."""
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            device = next(model.parameters()).device
            logits, values = InferenceNet(model)(torch.from_numpy(planes).to(device))
    finally:
        model.train(was_training)
    return logits.float().cpu().numpy(), values.float().cpu().numpy()


EVALUATORS: dict[str, type[NetworkEvaluator]] = {
    e.backend: e for e in (NetworkEvaluator, TorchBf16Evaluator, OnnxEvaluator, OnnxInt8Evaluator)
}
PATHS: tuple[str, ...] = tuple(EVALUATORS)
"""The inference paths by name (the module doc); ``selfplay.inference`` and the network agent's
``inference`` take one of these or ``auto``."""
BACKENDS: tuple[str, ...] = ("auto", *PATHS)
