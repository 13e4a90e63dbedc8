"""The bridge from a torch network to the search's ``evaluate`` callable (the search contract).

``evaluate(planes [N, C, H, W] float32, masks [N, A] bool) -> (logits [N, A] float32,
values [N] float32 in [-1, 1], mover's view)``. Search never imports ``nn``; it only calls this.
"""

from __future__ import annotations

import numpy as np
import torch

from ultimate_rl.nn.device import autocast, resolve_device, resolve_precision
from ultimate_rl.nn.models import PolicyValueNet, mask_logits


class NetworkEvaluator:
    """Runs ``model`` in inference mode on batches of planes; illegal actions get masked logits.

    On the CPU the input arrays are shared with torch (``torch.from_numpy``), not copied. The
    evaluator holds the model itself, so in-process weight updates are seen at once; it puts the
    model in eval mode whenever it is called, so a trainer sharing the model calls
    ``model.train()`` before its own optimisation steps.
    """

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
        self.max_batch = max_batch
        self.observation_shape = model.observation_shape
        self.num_actions = model.num_actions

    def __call__(self, planes: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        planes, masks = self._check(planes, masks)
        if self.model.training:
            self.model.eval()
        n = planes.shape[0]
        if self.max_batch is None or n <= self.max_batch:
            return self._forward(planes, masks)
        parts = [
            self._forward(
                planes[start : start + self.max_batch], masks[start : start + self.max_batch]
            )
            for start in range(0, n, self.max_batch)
        ]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def _forward(self, planes: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = torch.from_numpy(planes).to(self.device, non_blocking=True)
        m = torch.from_numpy(masks).to(self.device, non_blocking=True)
        with torch.inference_mode(), autocast(self.device, self.dtype):
            outputs = self.model(x)
            logits = mask_logits(outputs["policy"], m)
            values = self.model.expected_value(outputs["value"])
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


def make_evaluator(
    model: PolicyValueNet,
    device: str | torch.device = "auto",
    *,
    precision: str = "auto",
    max_batch: int | None = None,
) -> NetworkEvaluator:
    """The search ``evaluate`` callable for ``model`` (see ``NetworkEvaluator``)."""
    return NetworkEvaluator(model, device, precision=precision, max_batch=max_batch)
