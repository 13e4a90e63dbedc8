"""Policy/value networks: a residual conv net for board planes and a small MLP for 3x3 games.

Both map planes ``[N, C, H, W]`` (the game's ``encode``, mover's view) to named head outputs
(``HeadOutputs``): ``"policy"``, logits ``[N, num_actions]``, and ``"value"``, ``[N]`` in [-1, 1]
for the scalar head or ``[N, 3]`` win/draw/loss logits for the WDL head, plus one policy-shaped
logits output per ``model.aux_heads`` entry (``ownership``: the game's ownership planes, see
``OwnershipHead``). Names, not tuple positions, so a new head is one more key that only its loss
(``nn.losses``) reads.
``expected_value`` turns either value output into one number per position in [-1, 1], mover's
view.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from itertools import pairwise

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils.fusion import fuse_conv_bn_eval

from ultimate_rl.games.base import Game
from ultimate_rl.games.ownership import OwnershipGrid
from ultimate_rl.nn.config import ModelConfig, ModelConfigError

HeadOutputs = dict[str, torch.Tensor]
"""A network's outputs by head name (``"policy"``, ``"value"``, and any head a model adds)."""

OWNERSHIP = "ownership"
"""The auxiliary head over the game's ownership planes (``games.ownership``), not the policy's
shape."""

# Logit given to illegal actions: softmax sends them to 0 without the NaNs that -inf gives when a
# row has no legal action at all (terminal positions in a batch).
MASKED_LOGIT = -1.0e9


def mask_logits(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """Policy logits with illegal actions (``masks`` False) set to ``MASKED_LOGIT``."""
    return logits.float().masked_fill(~masks, MASKED_LOGIT)


def masked_softmax(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """Probabilities over legal actions only; illegal ones get exactly 0."""
    probs = torch.softmax(mask_logits(logits, masks), dim=-1)
    return probs.masked_fill(~masks, 0.0)


class PolicyValueNet(nn.Module):
    """Shared surface of every network: shapes, the config it was built from, value decoding."""

    def __init__(
        self,
        config: ModelConfig,
        observation_shape: tuple[int, int, int],
        num_actions: int,
        ownership: tuple[OwnershipGrid, ...] = (),
    ) -> None:
        super().__init__()
        self.config = config
        self.observation_shape = tuple(int(d) for d in observation_shape)
        self.num_actions = int(num_actions)
        self.ownership = ownership  # the game's ownership planes (``Game.ownership_grids``)
        self.value_outputs = 3 if config.value_head == "wdl" else 1
        self.aux_heads = nn.ModuleDict()  # filled last, so the other weights init as without

    def _add_aux_heads(
        self, make_policy_head: Callable[[], nn.Module], ownership_head: Callable[[], nn.Module]
    ) -> None:
        """One head per ``config.aux_heads`` entry: the ownership head, or one shaped like the
        policy's."""
        makers = {OWNERSHIP: ownership_head}
        heads = {name: makers.get(name, make_policy_head)() for name in self.config.aux_heads}
        self.aux_heads.update(heads)

    def expected_value(self, value_out: torch.Tensor) -> torch.Tensor:
        """One value per position in [-1, 1] (mover's view): tanh output or p_win - p_loss."""
        if self.config.value_head == "wdl":
            probs = torch.softmax(value_out.float(), dim=-1)
            return probs[:, 0] - probs[:, 2]
        return value_out.float()

    def for_inference(self) -> PolicyValueNet:
        """An eval-mode copy with every batch norm folded into the convolution before it: the
        same outputs, about 1.4x faster for one position on a CPU (fewer modules, fewer passes).

        The networks here register each ``BatchNorm2d`` right after the ``Conv2d`` whose output it
        normalises (tests/test_nn.py checks the outputs agree for every architecture).
        """
        fused = copy.deepcopy(self).eval()
        for module in fused.modules():
            children = list(module.named_children())
            for (conv_name, conv), (bn_name, bn) in pairwise(children):
                if isinstance(conv, nn.Conv2d) and isinstance(bn, nn.BatchNorm2d):
                    setattr(module, conv_name, fuse_conv_bn_eval(conv, bn))
                    setattr(module, bn_name, nn.Identity())
        return fused

    def _heads(self, features: torch.Tensor) -> HeadOutputs:
        """Every head on the trunk's ``features``: the one place the output names are given."""
        policy, value = self.policy_head(features), self.value_head(features)
        if self.config.value_head != "wdl":
            value = torch.tanh(value.squeeze(-1))
        outputs = {"policy": policy, "value": value}
        outputs.update({name: head(features) for name, head in self.aux_heads.items()})
        return outputs


class ResidualBlock(nn.Module):
    """Two 3x3 convolutions and a skip; with ``global_pooling``, KataGo's global pooling bias:
    the first convolution's board-wide mean and max per channel, through a linear layer, bias
    every channel before the second (a 3x3 tower alone needs many blocks to see the board)."""

    def __init__(self, channels: int, global_pooling: bool = False) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.pool_bias = nn.Linear(2 * channels, channels) if global_pooling else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        if self.pool_bias is not None:
            pooled = torch.cat([y.mean(dim=(2, 3)), y.amax(dim=(2, 3))], dim=1)
            y = y + self.pool_bias(pooled)[:, :, None, None]
        return F.relu(x + self.bn2(self.conv2(y)))


class OwnershipHead(nn.Module):
    """KataGo's ownership head: a 1x1-conv stack gives every cell each plane's class logits,
    and a plane coarser than the board (uttt's small boards) averages them over each of its
    entries' cells. Out: ``[N, sum(classes * entries)]``, plane after plane, class-major."""

    def __init__(self, channels: int, hidden: int, grids: tuple[OwnershipGrid, ...]) -> None:
        super().__init__()
        self.grids = grids
        self.conv = nn.Conv2d(channels, hidden, 1, bias=False)
        self.bn = nn.BatchNorm2d(hidden)
        self.out = nn.Conv2d(hidden, sum(grid.classes for grid in grids), 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = self.out(F.relu(self.bn(self.conv(x))))
        planes = logits.split([grid.classes for grid in self.grids], dim=1)
        pooled = [
            F.adaptive_avg_pool2d(plane, (grid.rows, grid.cols)).flatten(1)
            for grid, plane in zip(self.grids, planes, strict=True)
        ]
        return torch.cat(pooled, dim=1)


def ownership_outputs(grids: tuple[OwnershipGrid, ...]) -> int:
    """The ownership head's logits per position: each plane's classes times its entries."""
    return sum(grid.classes * grid.size for grid in grids)


class ResNet(PolicyValueNet):
    """AlphaZero tower: 3x3 conv stem, ``blocks`` residual blocks, 1x1-conv policy/value heads."""

    def __init__(
        self,
        config: ModelConfig,
        observation_shape: tuple[int, int, int],
        num_actions: int,
        ownership: tuple[OwnershipGrid, ...] = (),
    ) -> None:
        super().__init__(config, observation_shape, num_actions, ownership)
        planes, height, width = self.observation_shape
        area = height * width
        c = config.channels
        self.stem = nn.Sequential(
            nn.Conv2d(planes, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU()
        )
        self.tower = nn.Sequential(
            *(ResidualBlock(c, config.global_pooling) for _ in range(config.blocks))
        )

        def policy_head() -> nn.Module:
            return nn.Sequential(
                nn.Conv2d(c, config.policy_channels, 1, bias=False),
                nn.BatchNorm2d(config.policy_channels),
                nn.ReLU(),
                nn.Flatten(),
                nn.Linear(config.policy_channels * area, num_actions),
            )

        self.policy_head = policy_head()
        self.value_head = nn.Sequential(
            nn.Conv2d(c, config.value_channels, 1, bias=False),
            nn.BatchNorm2d(config.value_channels),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(config.value_channels * area, config.value_hidden),
            nn.ReLU(),
            nn.Linear(config.value_hidden, self.value_outputs),
        )
        self._add_aux_heads(
            policy_head, lambda: OwnershipHead(c, config.policy_channels, ownership)
        )

    def forward(self, planes: torch.Tensor) -> HeadOutputs:
        return self._heads(self.tower(self.stem(planes)))


class MLP(PolicyValueNet):
    """Fully connected trunk over the flattened planes: enough for 3x3 boards, and fast."""

    def __init__(
        self,
        config: ModelConfig,
        observation_shape: tuple[int, int, int],
        num_actions: int,
        ownership: tuple[OwnershipGrid, ...] = (),
    ) -> None:
        super().__init__(config, observation_shape, num_actions, ownership)
        layers: list[nn.Module] = [nn.Flatten()]
        width = math.prod(self.observation_shape)
        for hidden in config.mlp_hidden:
            layers += [nn.Linear(width, hidden), nn.ReLU()]
            width = hidden
        self.trunk = nn.Sequential(*layers)
        self.policy_head = nn.Linear(width, num_actions)
        self.value_head = nn.Sequential(
            nn.Linear(width, config.value_hidden),
            nn.ReLU(),
            nn.Linear(config.value_hidden, self.value_outputs),
        )
        self._add_aux_heads(
            lambda: nn.Linear(width, num_actions),
            lambda: nn.Linear(width, ownership_outputs(ownership)),
        )

    def forward(self, planes: torch.Tensor) -> HeadOutputs:
        return self._heads(self.trunk(planes))


ARCHITECTURE_CLASSES: dict[str, type[PolicyValueNet]] = {"resnet": ResNet, "mlp": MLP}


def build_model(
    game: Game,
    config: ModelConfig | dict | None = None,
    *,
    seed: int | None = None,
) -> PolicyValueNet:
    """The network ``config`` describes, sized for ``game``'s planes and action space.

    ``seed`` makes the initial weights reproducible (on the CPU) without touching the global
    torch RNG. Raises ``ModelConfigError`` when the config does not fit the game.
    """
    if config is None:
        config = ModelConfig()
    elif not isinstance(config, ModelConfig):
        config = ModelConfig.from_dict(dict(config))
    shape = tuple(int(d) for d in game.observation_shape)
    if len(shape) != 3:
        raise ModelConfigError(
            f"game {game.name!r} encodes planes of shape {shape}; networks need (C, H, W)"
        )
    if config.board_size is not None and shape[1:] != (config.board_size, config.board_size):
        raise ModelConfigError(
            f"this model config is for {config.board_size}x{config.board_size} boards, but game "
            f"{game.name!r} has {shape[1]}x{shape[2]} planes; pick a model preset for this game "
            "or set model.board_size=null"
        )
    if OWNERSHIP in config.aux_heads and not game.ownership_grids:
        raise ModelConfigError(
            f"game {game.name!r} declares no ownership planes (Game.ownership); drop ownership "
            "from model.aux_heads"
        )
    cls = ARCHITECTURE_CLASSES[config.arch]
    if seed is None:
        return cls(config, shape, game.num_actions, game.ownership_grids)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return cls(config, shape, game.num_actions, game.ownership_grids)
