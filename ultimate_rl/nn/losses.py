"""The AlphaZero training loss, with each term returned for logging."""

from __future__ import annotations

import torch

from ultimate_rl.nn.models import PolicyValueNet, mask_logits


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


def alphazero_loss(
    model: PolicyValueNet,
    planes: torch.Tensor,
    masks: torch.Tensor,
    policy_targets: torch.Tensor,
    value_targets: torch.Tensor,
    full_search: torch.Tensor | None = None,
    *,
    value_weight: float = 1.0,
) -> tuple[torch.Tensor, dict[str, float]]:
    """Total loss to backpropagate, plus ``{policy_loss, value_loss, total_loss,
    policy_entropy, value_accuracy}`` as floats.

    Policy: cross-entropy of the masked policy against the search's target distribution, only
    over samples with ``full_search`` True (playout-cap randomisation: cheap searches are not
    policy targets). Value: MSE for the scalar head, cross-entropy against ``wdl_targets`` for the
    WDL head, over every sample. Run it under ``autocast`` for mixed precision; the loss itself is
    computed in float32.
    """
    logits, value_out = model(planes)
    log_probs = torch.log_softmax(mask_logits(logits, masks), dim=-1)
    per_sample_ce = -(policy_targets * log_probs).sum(dim=-1)
    if full_search is None:
        policy_loss = per_sample_ce.mean()
    else:
        weights = full_search.float()
        policy_loss = (per_sample_ce * weights).sum() / weights.sum().clamp(min=1.0)

    if model.config.value_head == "wdl":
        wdl_log_probs = torch.log_softmax(value_out.float(), dim=-1)
        value_loss = -(wdl_targets(value_targets) * wdl_log_probs).sum(dim=-1).mean()
    else:
        value_loss = torch.mean((value_out.float() - value_targets) ** 2)
    total = policy_loss + value_weight * value_loss

    with torch.no_grad():
        probs = log_probs.exp()
        entropy = -(probs * log_probs).masked_fill(~masks, 0.0).sum(dim=-1).mean()
        predicted = outcome_class(model.expected_value(value_out))
        accuracy = (predicted == outcome_class(value_targets)).float().mean()
    terms = {
        "policy_loss": float(policy_loss.detach()),
        "value_loss": float(value_loss.detach()),
        "total_loss": float(total.detach()),
        "policy_entropy": float(entropy),
        "value_accuracy": float(accuracy),
    }
    return total, terms
