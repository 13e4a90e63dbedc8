"""The training loss: one function per network head, each weighted by name, every term logged.

A ``Loss`` pairs a head's output name with the function that scores it against the batch's
targets (``Batch.targets``, by name). ``training_loss`` sums ``weight[name] * loss`` over the
registered ``LOSSES`` and reports each as ``loss/<name>`` (plus ``loss/total``) and each
diagnostic a loss returns as ``train/<metric>``: the TensorBoard tags, so logging needs no list
of names. A new head adds its output in ``nn.models``, its target in ``selfplay.targets``, a
``Loss`` here and a weight in ``optim.loss_weights`` (KataGo's ``metrics_pytorch.py`` is laid
out the same way).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from ultimate_rl.games.ownership import UNKNOWN
from ultimate_rl.nn.config import ModelConfig, ModelConfigError
from ultimate_rl.nn.models import OWNERSHIP, HeadOutputs, PolicyValueNet, mask_logits


@dataclass(frozen=True)
class Batch:
    """Positions to train on: network input, legal masks and named targets.

    numpy arrays as the replay buffer samples them, torch tensors after ``to_torch``. Targets are
    keyed by the names ``selfplay.targets`` declares (``policies``, ``values``, ``full_search``).
    """

    planes: Any  # [B, C, H, W] float32
    masks: Any  # [B, A] bool
    targets: dict[str, Any]

    def __len__(self) -> int:
        return len(self.planes)

    def to_torch(self, device: str | torch.device = "cpu") -> Batch:
        """The same batch as torch tensors on ``device`` (shared memory on the CPU)."""

        def tensor(array: Any) -> torch.Tensor:
            return torch.from_numpy(np.asarray(array)).to(device)

        targets = {name: tensor(array) for name, array in self.targets.items()}
        return Batch(tensor(self.planes), tensor(self.masks), targets)


LossFunction = Callable[
    [PolicyValueNet, HeadOutputs, Batch], tuple[torch.Tensor, dict[str, torch.Tensor]]
]
"""``(model, outputs, batch) -> (loss, diagnostics)``; diagnostics are computed without grad."""


@dataclass(frozen=True)
class Loss:
    """One head's loss term: logged as ``loss/<name>``, weighted by ``optim.loss_weights[name]``.

    ``targets``: the ``selfplay.targets.OPTIONAL_TARGETS`` it reads, stored only while it trains.
    """

    name: str
    function: LossFunction
    targets: tuple[str, ...] = ()


def wdl_targets(values: torch.Tensor) -> torch.Tensor:
    """Win/draw/loss distributions ``[N, 3]`` whose expectation is ``values`` (mover's view).

    A game result (+1/0/-1) becomes one-hot; a fractional target (e.g. mixed with the search
    value) spreads over the outcome of its sign and the draw.
    """
    win = values.clamp(min=0.0)
    loss = (-values).clamp(min=0.0)
    return torch.stack([win, 1.0 - win - loss, loss], dim=-1)


def outcome_class(values: torch.Tensor) -> torch.Tensor:
    """0 win, 1 draw, 2 loss: the nearest outcome to each value (thirds of [-1, 1])."""
    return torch.where(values > 1 / 3, 0, torch.where(values < -1 / 3, 2, 1))


def weighted_cross_entropy(
    log_probs: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor
) -> torch.Tensor:
    """Mean cross-entropy over the samples with weight 1 (0: the sample has no target)."""
    per_sample_ce = -(targets * log_probs).sum(dim=-1)
    return (per_sample_ce * weights).sum() / weights.sum().clamp(min=1.0)


def policy_loss(
    model: PolicyValueNet, outputs: HeadOutputs, batch: Batch
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Cross-entropy of the masked policy against the search's target distribution, over the
    samples with ``full_search`` only (playout-cap randomisation: cheap searches are not policy
    targets); diagnostic: the policy's entropy."""
    log_probs = torch.log_softmax(mask_logits(outputs["policy"], batch.masks), dim=-1)
    weights = batch.targets["full_search"].float()
    loss = weighted_cross_entropy(log_probs, batch.targets["policies"], weights)
    with torch.no_grad():
        probs = log_probs.exp()
        entropy = -(probs * log_probs).masked_fill(~batch.masks, 0.0).sum(dim=-1).mean()
    return loss, {"policy_entropy": entropy}


def value_loss(
    model: PolicyValueNet, outputs: HeadOutputs, batch: Batch
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """MSE for the scalar head, cross-entropy against ``wdl_targets`` for the WDL head, over
    every sample; diagnostic: how often the predicted outcome (win/draw/loss) is the result."""
    value_out, targets = outputs["value"].float(), batch.targets["values"]
    if model.config.value_head == "wdl":
        wdl_log_probs = torch.log_softmax(value_out, dim=-1)
        loss = -(wdl_targets(targets) * wdl_log_probs).sum(dim=-1).mean()
    else:
        loss = torch.mean((value_out - targets) ** 2)
    with torch.no_grad():
        predicted = outcome_class(model.expected_value(value_out))
        accuracy = (predicted == outcome_class(targets)).float().mean()
    return loss, {"value_accuracy": accuracy}


SOFT_POLICY_TEMPERATURE = 4.0


def soft_policy_loss(
    model: PolicyValueNet, outputs: HeadOutputs, batch: Batch
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """KataGo's soft policy: cross-entropy against the search policy raised to ``1/T`` (T=4) and
    renormalised, which makes the head learn the ranking of the moves the search rarely plays
    (full searches only, like the policy)."""
    soft = batch.targets["policies"].float() ** (1.0 / SOFT_POLICY_TEMPERATURE)
    soft = soft / soft.sum(dim=-1, keepdim=True).clamp(min=1e-12)
    log_probs = torch.log_softmax(mask_logits(outputs["soft_policy"], batch.masks), dim=-1)
    return weighted_cross_entropy(log_probs, soft, batch.targets["full_search"].float()), {}


def opponent_policy_loss(
    model: PolicyValueNet, outputs: HeadOutputs, batch: Batch
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Cross-entropy against the opponent's reply policy (Wu 2019), over the positions that have
    one (a target summing to 0 has none: the game's last move, or a cheap reply search). Not
    masked: the reply's legal moves are the next position's, not this one's."""
    targets = batch.targets["opponent_policies"]
    log_probs = torch.log_softmax(outputs["opponent_policy"].float(), dim=-1)
    return weighted_cross_entropy(log_probs, targets, (targets.sum(dim=-1) > 0.5).float()), {}


def ownership_loss(
    model: PolicyValueNet, outputs: HeadOutputs, batch: Batch
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Per ownership plane, the cross-entropy of each entry's classes against the final
    position's (mover's view), averaged over the entries that have one (``UNKNOWN``: a
    warm-start label), then the planes' mean, so every game's loss is on one scale;
    diagnostics: each plane's accuracy (``ownership_<plane>_accuracy``)."""
    logits, targets = outputs[OWNERSHIP].float(), batch.targets["ownership"].long()
    losses, diagnostics = [], {}
    start = 0
    for grid, plane_targets in zip(
        model.ownership, targets.split([g.size for g in model.ownership], dim=1), strict=True
    ):
        plane_logits = logits[:, start : start + grid.classes * grid.size]
        plane_logits = plane_logits.reshape(-1, grid.classes, grid.size)
        start += grid.classes * grid.size
        known = (plane_targets != UNKNOWN).float()
        entropy = F.cross_entropy(plane_logits, plane_targets.clamp(min=0), reduction="none")
        count = known.sum().clamp(min=1.0)
        losses.append((entropy * known).sum() / count)
        with torch.no_grad():
            right = (plane_logits.argmax(dim=1) == plane_targets).float() * known
            diagnostics[f"ownership_{grid.plane.name}_accuracy"] = right.sum() / count
    return torch.stack(losses).mean(), diagnostics


LOSSES: tuple[Loss, ...] = (Loss("policy", policy_loss), Loss("value", value_loss))
"""The loss terms every model trains, in summation order."""

AUX_LOSSES: dict[str, Loss] = {
    "opponent_policy": Loss("opponent_policy", opponent_policy_loss, ("opponent_policies",)),
    "soft_policy": Loss("soft_policy", soft_policy_loss),
    OWNERSHIP: Loss(OWNERSHIP, ownership_loss, ("ownership",)),
}
"""The auxiliary heads a model may add (``model.aux_heads``), each declared once, here, by its
loss; ``nn.models`` gives every listed head a policy-shaped output, but the ownership head's."""


def losses_for(model: ModelConfig) -> tuple[Loss, ...]:
    """The loss terms a model with ``model.aux_heads`` trains."""
    unknown = sorted(set(model.aux_heads) - set(AUX_LOSSES))
    if unknown:
        raise ModelConfigError(f"unknown model.aux_heads {unknown}; choose from {list(AUX_LOSSES)}")
    return (*LOSSES, *(AUX_LOSSES[head] for head in model.aux_heads))


def training_loss(
    model: PolicyValueNet,
    batch: Batch,
    weights: Mapping[str, float],
    losses: Sequence[Loss] = LOSSES,
) -> tuple[torch.Tensor, dict[str, float]]:
    """The weighted sum of ``losses`` to backpropagate, and every term as a float keyed by its
    TensorBoard tag (``loss/<name>``, ``loss/total``, ``train/<diagnostic>``).

    Run it under ``autocast`` for mixed precision; each loss is computed in float32.
    """
    outputs = model(batch.planes)
    total = torch.zeros((), device=batch.planes.device)
    terms: dict[str, float] = {}
    diagnostics: dict[str, float] = {}
    for loss in losses:
        value, extra = loss.function(model, outputs, batch)
        total = total + weights[loss.name] * value
        terms[f"loss/{loss.name}"] = float(value.detach())
        diagnostics.update({f"train/{key}": float(v) for key, v in extra.items()})
    terms["loss/total"] = float(total.detach())
    return total, {**terms, **diagnostics}
