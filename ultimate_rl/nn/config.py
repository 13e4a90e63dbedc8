"""The model configuration: plain data, so it round-trips through Hydra and checkpoints."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

Architecture = Literal["resnet", "mlp"]
ValueHead = Literal["scalar", "wdl"]

ARCHITECTURES: tuple[str, ...] = ("resnet", "mlp")
VALUE_HEADS: tuple[str, ...] = ("scalar", "wdl")


class ModelConfigError(ValueError):
    """A model configuration that is invalid or does not fit the game."""


@dataclass(frozen=True)
class ModelConfig:
    """What ``build_model`` needs besides the game; each field's docstring says what it does
    (``docs/reference/config.md`` lists them)."""

    arch: Architecture = "resnet"
    """``resnet`` (a conv tower over the planes, any square board) or ``mlp`` (flattened
    planes, meant for the 3x3 games)."""
    blocks: int = 4
    """resnet: residual blocks (two 3x3 convs each); deeper sees further across the board."""
    channels: int = 64
    """resnet: channels of the tower."""
    value_head: ValueHead = "wdl"
    """``scalar`` (tanh) or ``wdl`` (win/draw/loss logits; draws are common in these games,
    and a WDL head keeps them apart from uncertainty)."""
    policy_channels: int = 4
    """resnet: channels of the policy head's 1x1 conv."""
    value_channels: int = 2
    """resnet: channels of the value head's 1x1 conv."""
    value_hidden: int = 64
    """Width of the value head's hidden layer (both archs)."""
    mlp_hidden: tuple[int, ...] = (128, 128)
    """mlp: the hidden layers' widths, e.g. ``[256, 256]``."""
    board_size: int | None = None
    """The board side the model is meant for (e.g. 9 for a uttt preset; ``null``: any game).
    A preset then fails early on the wrong game instead of training a net sized for another
    board."""
    aux_heads: tuple[str, ...] = ()
    """Extra outputs trained as auxiliary targets, which inference ignores:
    ``opponent_policy`` (the opponent's reply), ``soft_policy`` (KataGo's: the search policy
    raised to 1/4, which ranks the moves search rarely plays), both policy-shaped, and
    ``ownership`` (KataGo's: the owner of every cell when the game ended and, for uttt, each
    small board's result, mover's view; for games that declare ownership planes). Each needs a
    weight > 0 in ``optim.loss_weights``."""
    global_pooling: bool = False
    """resnet: each residual block adds a per-channel bias computed from its board-wide mean
    and max (KataGo), so every cell sees the whole board in one block."""

    def __post_init__(self) -> None:
        if self.arch not in ARCHITECTURES:
            raise ModelConfigError(
                f"unknown model arch {self.arch!r}; choose one of {list(ARCHITECTURES)}"
            )
        if self.value_head not in VALUE_HEADS:
            raise ModelConfigError(
                f"unknown value_head {self.value_head!r}; choose one of {list(VALUE_HEADS)}"
            )
        for name in ("channels", "policy_channels", "value_channels", "value_hidden"):
            _require_positive(name, getattr(self, name))
        if self.blocks < 0:
            raise ModelConfigError(f"model.blocks must be >= 0, got {self.blocks}")
        object.__setattr__(self, "mlp_hidden", tuple(int(h) for h in self.mlp_hidden))
        if not self.mlp_hidden:
            raise ModelConfigError("model.mlp_hidden needs at least one layer size, e.g. [128]")
        for size in self.mlp_hidden:
            _require_positive("mlp_hidden entries", size)
        if self.board_size is not None:
            _require_positive("board_size", self.board_size)
        object.__setattr__(self, "aux_heads", tuple(str(h) for h in self.aux_heads))
        if len(set(self.aux_heads)) < len(self.aux_heads):  # names: nn.losses.AUX_LOSSES
            raise ModelConfigError(f"model.aux_heads {list(self.aux_heads)}: each at most once")
        if self.global_pooling and self.arch != "resnet":
            raise ModelConfigError("model.global_pooling needs arch=resnet (an MLP is global)")

    def to_dict(self) -> dict[str, Any]:
        """Plain Python data (lists, not tuples) for checkpoints and logs."""
        data = asdict(self)
        data["mlp_hidden"] = list(self.mlp_hidden)
        data["aux_heads"] = list(self.aux_heads)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelConfig:
        """Builds a config from a dict (a Hydra node or a checkpoint); unknown keys are an error."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ModelConfigError(
                f"unknown model config key(s) {unknown}; valid keys: {sorted(known)}"
            )
        values = dict(data)
        for key in ("mlp_hidden", "aux_heads"):
            if key in values:
                values[key] = tuple(values[key])
        return cls(**values)


def _require_positive(name: str, value: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ModelConfigError(f"model.{name} must be a positive integer, got {value!r}")
