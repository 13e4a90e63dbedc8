"""Growing a trained network into a bigger one of its kind (``train.init_from`` a smaller
network): a ResNet by more blocks, channels, head channels or value-head width; an MLP by wider
layers (the same number of them) and value-head width; either by more input planes, where the
run's encoding extends the file's (uttt's threat planes after its 8: ``extends_encoding``). It
starts exactly where the small one is.

Net2Net's idea (Chen et al., 2016) by zero padding: each of the small network's tensors is copied
into the leading corner of the big one's; the weights from a new unit (or input plane) into an old
one are zeroed, so no new channel reaches an old one; each new residual block's last batch-norm
scale is zeroed, so the block adds nothing to its skip; a new global pooling bias
(``model.global_pooling`` turned on) starts at zero, so it biases nothing. The big network then
computes the small one's outputs, and its new units learn from there: their incoming weights keep
their random init, and the zeroed weights out of them get gradients because their activations are
not zero. A bigger network can so continue a plateaued smaller one's training instead of starting
from noise. (A new MLP layer would not compute the old outputs through its ReLU, so an MLP grows in
width only.)
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import torch
from torch import nn

from ultimate_rl.games.base import Game
from ultimate_rl.nn.config import ModelConfig
from ultimate_rl.nn.weights import fixed_line

GROWABLE = ("blocks", "channels", "policy_channels", "value_channels", "value_hidden")
"""The sizes a ResNet can grow in; every other model setting must match."""


FINGERPRINT_PLIES = 24  # positions compared by ``extends_encoding``: the start and 24 moves on


def extends_encoding(small: Game, big: Game) -> bool:
    """Whether ``big`` encodes every position as ``small`` does, and more planes after them (so
    a network of ``small``'s grows into ``big``'s with its new inputs at zero): checked on the
    positions of a fixed line of play."""
    if small.name != big.name or small.rules_options != big.rules_options:
        return False
    few, many = small.observation_shape, big.observation_shape
    if few[1:] != many[1:] or few[0] >= many[0]:
        return False
    return all(
        np.array_equal(big.encode(state)[: few[0]], small.encode(state))
        for state in fixed_line(small, FINGERPRINT_PLIES)
    )


def can_grow(small: ModelConfig, big: ModelConfig, more_planes: bool = False) -> bool:
    """Whether ``small``'s network grows into ``big``'s: the same architecture, no size smaller,
    at least one larger (or, for a ResNet, global pooling gained, or either given
    ``more_planes``: the run's encoding extends the file's), the rest equal (auxiliary heads
    aside: a missing one starts fresh). An MLP keeps its number of layers. A global pooling
    bias reads [means, maxima] side by side, so a pooled tower grows in depth only; pooling is
    never dropped."""
    if small.arch != big.arch:
        return False
    if small.arch == "mlp":
        sizes = [
            *zip(small.mlp_hidden, big.mlp_hidden, strict=False),
            (small.value_hidden, big.value_hidden),
        ]
        return len(small.mlp_hidden) == len(big.mlp_hidden) and _grows(
            small, big, ("mlp_hidden", "value_hidden"), sizes, more_planes
        )
    sizes = [(getattr(small, k), getattr(big, k)) for k in GROWABLE]
    gains_pooling = big.global_pooling and not small.global_pooling
    return (
        _grows(small, big, (*GROWABLE, "global_pooling"), sizes, gains_pooling or more_planes)
        and not (small.global_pooling and not big.global_pooling)
        and not (small.global_pooling and big.channels != small.channels)
    )


def _grows(
    small: ModelConfig,
    big: ModelConfig,
    may_differ: tuple[str, ...],
    sizes: list[tuple[int, int]],
    gained: bool = False,
) -> bool:
    """Every setting but ``may_differ`` and the auxiliary heads equal, no size of ``sizes``
    (small's, big's) smaller, and one larger or something ``gained``."""
    fixed = {k: v for k, v in asdict(small).items() if k not in (*may_differ, "aux_heads")}
    return (
        all(getattr(big, k) == v for k, v in fixed.items())
        and all(have <= want for have, want in sizes)
        and (any(have < want for have, want in sizes) or gained)
    )


def size_name(config: ModelConfig) -> str:
    """A network's sizes as a person names them: ``3x32`` (blocks x channels), ``mlp 256x256``."""
    if config.arch == "mlp":
        return "mlp " + "x".join(str(h) for h in config.mlp_hidden)
    return f"{config.blocks}x{config.channels}"


def grown_state(small: dict[str, torch.Tensor], model: nn.Module) -> dict[str, torch.Tensor]:
    """``model``'s state dict with ``small`` (a smaller network's, ``can_grow``) grown into it:
    ``model`` then computes what the small network did (see the module doc)."""
    state = {name: tensor.detach().clone() for name, tensor in model.state_dict().items()}
    for name, tensor in state.items():
        source = small.get(name)
        if source is None:
            if name.startswith("tower.") and name.endswith("bn2.weight"):
                tensor.zero_()  # a new block: its residual branch starts at zero
            if ".pool_bias." in name:
                tensor.zero_()  # a new pooling bias: adds nothing until it learns
            continue
        if source.dim() >= 2:  # conv and linear weights: [out, in, ...]
            tensor[: source.shape[0], source.shape[1] :] = 0  # new inputs into old outputs
        tensor[tuple(slice(0, n) for n in source.shape)] = source
    return state
