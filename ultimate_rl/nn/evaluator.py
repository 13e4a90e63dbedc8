"""The bridge from a torch network to the search's ``evaluate`` callable (the search contract).

``evaluate(planes [N, C, H, W] float32, masks [N, A] bool) -> (logits [N, A] float32,
values [N] float32 in [-1, 1], mover's view)``. Search never imports ``nn``; it only calls this.

Two backends run the same ``InferenceNet``: torch, and onnxruntime's CPU provider, which runs
the small networks here 2-2.5x as fast as torch on a CPU core (``scripts/bench.py
suite=selfplay`` measures both). ``make_evaluator(backend="auto")`` takes onnxruntime on the CPU
and torch on CUDA (bf16 autocast there).
"""

from __future__ import annotations

from itertools import chain

import numpy as np
import torch

from ultimate_rl.nn.device import autocast, resolve_device, resolve_precision
from ultimate_rl.nn.inference import INPUT_NAME, OUTPUT_NAMES, InferenceNet, onnx_graph
from ultimate_rl.nn.models import MASKED_LOGIT, PolicyValueNet

BACKENDS: tuple[str, ...] = ("auto", "torch", "onnxruntime")


class NetworkEvaluator:
    """Runs ``model`` in inference mode (torch) on batches of planes; illegal actions get
    ``MASKED_LOGIT``.

    On the CPU the input arrays are shared with torch (``torch.from_numpy``), not copied. The
    evaluator holds the model itself, so in-process weight updates are seen at once; it puts the
    model in eval mode whenever it is called, so a trainer sharing the model calls
    ``model.train()`` before its own optimisation steps.
    """

    backend = "torch"

    def __init__(
        self,
        model: PolicyValueNet,
        device: str | torch.device = "auto",
        *,
        precision: str = "auto",
        max_batch: int | None = None,
    ) -> None:
        if max_batch is not None and max_batch < 1:
            raise ValueError(f"max_batch must be a positive integer or None, got {max_batch}")
        self.device = resolve_device(device)
        self.dtype = resolve_precision(precision, self.device)
        self.model = model.to(self.device).eval()
        self.net = InferenceNet(self.model)
        self.max_batch = max_batch
        self.observation_shape = model.observation_shape
        self.num_actions = model.num_actions

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

    def __init__(
        self,
        model: PolicyValueNet,
        device: str | torch.device = "cpu",
        *,
        precision: str = "auto",
        max_batch: int | None = None,
    ) -> None:
        super().__init__(model, device, precision=precision, max_batch=max_batch)
        if self.device.type != "cpu" or self.dtype is not None:
            raise ValueError(
                f"the onnxruntime backend runs float32 on the CPU (got device {self.device}, "
                f"precision {precision!r}); use backend='torch' or 'auto' on CUDA"
            )
        import onnxruntime  # a core dependency, imported late: it adds ~0.2 s to any import

        self._onnxruntime = onnxruntime
        # tensors made under torch.inference_mode have no version counter; training never
        # writes them
        self._tensors = [
            t for t in chain(model.parameters(), model.buffers()) if not t.is_inference()
        ]
        self._version = -1
        self._session = None

    def refresh(self) -> None:
        """Exports the model's current weights into a new onnxruntime session."""
        options = self._onnxruntime.SessionOptions()
        options.intra_op_num_threads = torch.get_num_threads()
        options.inter_op_num_threads = 1
        self._session = self._onnxruntime.InferenceSession(
            onnx_graph(self.model), options, providers=["CPUExecutionProvider"]
        )
        self._version = self._weights_version()

    def _weights_version(self) -> int:
        """Moves whenever a weight or buffer is written: each counter only grows."""
        return sum(t._version for t in self._tensors)

    def _prepare(self) -> None:
        if self._version != self._weights_version():
            self.refresh()

    def _forward(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        logits, values = self._session.run(OUTPUT_NAMES, {INPUT_NAME: planes})
        return logits, values


def make_evaluator(
    model: PolicyValueNet,
    device: str | torch.device = "auto",
    *,
    backend: str = "auto",
    precision: str = "auto",
    max_batch: int | None = None,
) -> NetworkEvaluator:
    """The search ``evaluate`` callable for ``model``: ``backend`` ``torch``, ``onnxruntime``
    (CPU, float32) or ``auto`` (onnxruntime on the CPU, torch on CUDA)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown inference backend {backend!r}; choose one of {list(BACKENDS)}")
    resolved = resolve_device(device)
    if backend == "onnxruntime" or (backend == "auto" and resolved.type == "cpu"):
        return OnnxEvaluator(model, resolved, precision=precision, max_batch=max_batch)
    return NetworkEvaluator(model, resolved, precision=precision, max_batch=max_batch)
